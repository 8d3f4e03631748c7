"""Credentials typed raw in a URL the user gives (a root, ``--list``, ``--append``).

A password is often typed as it is, not percent-encoded: ``http://alice:p@ss#w@host/`` or
``http://alice:pa]ss/x@host/``. A URL parser then ends the host at the first ``/``, ``?`` or
``#`` and reads the rest as a path or a fragment, so the URL names the wrong host (``ss``) or
none at all. As a browser's address bar takes a URL's userinfo — everything before the last
``@`` of its authority, percent-encoded — :func:`typed_url` reads the userinfo up to the
**last** ``@`` followed by a host, and percent-encodes it, when the URL as written does not
parse into an http(s) URL with a valid host, or parses with an ``@`` in its fragment after
credentials (``#w@host/``: a fragment is never a crawl's business, the ``@`` is the password's).

A URL that parses as written is left alone: ``http://alice:pw@host/@team`` keeps the host
``host`` and the path ``/@team``. A ``%`` followed by two hex digits is an escape, as a browser
reads it (``pa%5Dss`` is ``pa]ss``); any other ``%`` is a ``%``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from nitpicker.policy.urls import is_valid_hostname, parse_url

__all__ = ["parses_as_written", "typed_url"]

_START = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]*://)", re.ASCII)
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[^\s/?#@\[\]:\\]+)(?::[0-9]*)?(?:[/?#]|$)")
"""A host (a name or an IPv6 literal) and an optional port, then the path, query, fragment or
the end."""
_USERINFO_SAFE = "!$&'()*+,;=-._~%"
"""What stays as typed in a user or password: unreserved and sub-delimiter characters, and
``%`` (an escape, or a ``%``)."""
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _encoded(part: str) -> str:
    return quote(_ESCAPE.sub("%25", part), safe=_USERINFO_SAFE)


def parses_as_written(url: str) -> bool:
    """Whether ``url`` is an http(s) URL with a valid host as written, without an ``@`` in
    its fragment after credentials."""
    parsed = parse_url(url)
    return parsed is not None and parsed.is_http and is_valid_hostname(parsed.hostname) and (
        "@" not in parsed.fragment or not (parsed.username or parsed.password))


def typed_url(raw: str) -> str:
    """``raw`` with credentials typed raw percent-encoded (see the module); ``raw`` itself
    when it parses as written or has no such credentials."""
    start = _START.match(raw)
    if start is None or "@" not in raw or parses_as_written(raw):
        return raw
    rest = raw[start.end():]
    at = rest.rfind("@")
    while at > 0:
        if _HOST.match(rest, at + 1):
            userinfo = rest[:at]
            user, colon, password = userinfo.partition(":")
            if user and not any(c in user for c in "/?#@"):
                fixed = (f"{raw[:start.end()].lstrip()}{_encoded(user)}{colon}"
                         f"{_encoded(password)}@{rest[at + 1:]}")
                return fixed if parses_as_written(fixed) else raw
            return raw
        at = rest.rfind("@", 0, at)
    return raw
