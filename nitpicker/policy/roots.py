"""A URL the user typed as a crawl root (``nitpicker crawl URL``, ``--append``, an inventory's
URLs, the scopes of ``nitpicker split``): normalised as the crawl keys it, or refused.

A host that cannot be one (``exa mple.com``) is refused, and so is a URL longer than the
archive keeps (:data:`~nitpicker.policy.urls.MAX_URL_LENGTH`, the guard a link that long
meets). Credentials typed raw are read as a browser's address bar reads them
(:func:`~nitpicker.policy.userinfo.typed_url`); a message never shows a password.
"""

from __future__ import annotations

from nitpicker.policy.request_headers import shown_url
from nitpicker.policy.urls import MAX_URL_LENGTH, is_valid_hostname, parse_url
from nitpicker.policy.userinfo import typed_url

__all__ = ["InvalidRoot", "root_url"]


class InvalidRoot(ValueError):
    """The URL cannot be a crawl root: the message names it (its password hidden)."""


def root_url(url: str, *, disable_queries: bool = False) -> str:
    """The normalised form of the http(s) URL ``url``; :class:`InvalidRoot` naming it otherwise."""
    parsed = parse_url(typed_url(url), disable_queries=disable_queries)
    if parsed is None or not parsed.is_http or not is_valid_hostname(parsed.hostname):
        raise InvalidRoot(
            f'Invalid URL: "{shown_url(url)}". Please provide a valid URL (e.g., https://example.com)'
        )
    if len(parsed.url) > MAX_URL_LENGTH:
        raise InvalidRoot(
            f'URL too long ({len(parsed.url)} characters, at most {MAX_URL_LENGTH}): '
            f'"{shown_url(url)[:100]}…"'
        )
    return parsed.url
