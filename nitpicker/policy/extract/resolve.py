"""Absolute URLs for the page metadata that names a URL: canonical, alternate, ``og:url``,
``og:image``, the hreflang alternates.

:func:`nitpicker.policy.extract.extract` returns every value as the markup wrote it. A page's
``<link rel=canonical href=../a>`` means the URL the browser would make of it, so the crawl
stores these values resolved against the document's base URL (the page URL, or its
``<base href>``) and in the archive's URL form (:func:`nitpicker.policy.urls.normalize_url`: the
form of ``pages.url``), so that every reader compares them with page URLs as they are. A value
that is not an http(s) URL once resolved (``mailto:``, ``data:``) is kept as joined.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nitpicker.policy.urls import join_href, normalize_url

if TYPE_CHECKING:
    from nitpicker.policy.extract.facts import PageMeta

__all__ = ["META_URL_FIELDS", "absolute_url", "document_base", "http_form_action",
           "resolve_meta_urls"]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

META_URL_FIELDS = ("canonical", "alternate", "og_url", "og_image")
"""The :class:`PageMeta` fields that hold a URL and are stored resolved."""


def document_base(page_url: str, base_href: str) -> str:
    """The URL relative references of a page resolve against: its ``<base href>`` (itself
    resolved against the page URL) when it has one, else the page URL."""
    return join_href(page_url, base_href) if base_href else page_url


def absolute_url(base: str, value: str) -> str:
    """``value`` resolved against ``base``, normalised when it is an http(s) URL."""
    joined = join_href(base, value)
    if joined[:8].lower().startswith(("http://", "https://")):
        return normalize_url(joined) or joined
    return joined


def resolve_meta_urls(meta: PageMeta, base: str) -> None:
    """Replace the URL fields of ``meta`` (:data:`META_URL_FIELDS`, and the hreflang
    alternates' hrefs) by their absolute form;
    ``meta.canonical_relative`` says whether the canonical was written relative (no scheme)."""
    meta.canonical_relative = bool(meta.canonical) and _SCHEME.match(meta.canonical) is None
    for name in META_URL_FIELDS:
        value = getattr(meta, name)
        if value:
            setattr(meta, name, absolute_url(base, value))
    if meta.hreflang:
        meta.hreflang = [(lang, absolute_url(base, href)) for lang, href in meta.hreflang]


def http_form_action(page_url: str, base: str, actions: list[str]) -> str | None:
    """The first of a page's form ``actions`` that submits over plain http from an https page
    (resolved against ``base``: an absent or empty action submits to the page itself, which
    ``base`` does not change); ``None`` when there is none, or the page is not https."""
    if not page_url.startswith("https:"):
        return None
    for action in actions:
        if action:
            target = absolute_url(base, action)
            if target[:5].lower() == "http:":
                return target
    return None
