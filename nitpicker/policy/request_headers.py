"""Request headers a crawl adds: the root URL's credentials and ``--header``, in scope only.

A root may carry credentials (``https://alice:pa%5Dss@example.com/private/``); they are sent as
HTTP Basic auth (``Authorization: Basic …``, user and password percent-decoded as a browser
does). ``--header 'Name: value'`` adds headers of the user's own. Both go only where the crawl
is at home:

- a **page** (every request the crawler makes: pages, link checks, redirect hops, robots.txt,
  sitemaps) gets the headers when it lies under a root, and the credentials of that root —
  the deepest one it lies under (SPEC §3.2); a root without credentials of its own inherits
  those of the deepest root above it with some. A URL out of scope, on another host or on
  the same host outside every root, gets nothing: a redirect leaving scope loses them;
- a **sub-resource** a rendered page loads (an image, a stylesheet, a script, each hop of
  its redirects) gets the headers when it is on a host (and port) of a root, and the
  credentials as a page would, or else, on the page's own host and port, the page's own
  (as a browser sends them again within the page's origin).

Under a root given as ``https://``, nothing is sent over plain ``http://`` (scope does not
tell the schemes apart; a secret given for https is not sent in clear).

Nothing of this is a setting: a ``CrawlConfig`` holds the credentials and headers, and never
writes their secrets into the archive (:meth:`nitpicker.crawl.config.CrawlConfig.to_json`).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from nitpicker.errors import UserError
from nitpicker.policy.scope import Scope, ScopeEntry, is_lower_layer
from nitpicker.policy.urls import parse_url
from nitpicker.policy.userinfo import parses_as_written

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from nitpicker.policy.urls import ParsedUrl

__all__ = [
    "Credentials",
    "HeaderError",
    "RequestHeaders",
    "credentials_of",
    "parse_header",
    "shown_url",
]

Header = tuple[str, str]

#: A header name as RFC 9110 allows it (a ``token``).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch
#: What a header value may not hold: line breaks and NUL (a header split in two).
_FORBIDDEN_IN_VALUE = re.compile(r"[\r\n\x00]").search


class HeaderError(UserError, ValueError):
    """A ``--header`` that is not ``Name: value``; the message never shows the value."""


def _shown_start(raw: str) -> str:
    """The start of a malformed header as an error shows it: its first word, at most 40
    characters (the rest may be a secret)."""
    word = raw.strip().split(None, 1)[0] if raw.strip() else ""
    return word[:40] + ("…" if len(word) > 40 or len(raw.strip()) > len(word) else "")


def parse_header(raw: str, *, label: str = "--header") -> Header:
    """``("Name", "value")`` of ``"Name: value"``; :class:`HeaderError` naming the header (its
    name, never its value) when there is no colon, the name is not a token, or the value
    holds a line break. ``label`` is what the message calls it (``--header``, ``header``)."""
    name, colon, value = raw.partition(":")
    name = name.strip()
    if not colon:
        raise HeaderError(
            f'{label} must be "Name: value", got "{_shown_start(raw)}" (no colon)')
    if not _TOKEN(name):
        raise HeaderError(f'{label} name "{name[:40]}" is not a header name (letters, digits '
                          "and !#$%&'*+-.^_`|~ only)")
    if _FORBIDDEN_IN_VALUE(value) or _FORBIDDEN_IN_VALUE(raw):
        raise HeaderError(f"{label} {name}: the value holds a line break (refused: it would "
                          "split the request's headers)")
    return name, value.strip()


@dataclass(frozen=True, slots=True)
class Credentials:
    """A user name and password (percent-decoded); ``repr`` hides the password."""

    username: str
    password: str = field(repr=False)

    def authorization(self) -> str:
        """The ``Authorization`` value: Basic, ``user:password`` in UTF-8."""
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")
        return f"Basic {token}"


def credentials_of(url: ParsedUrl) -> Credentials | None:
    """The credentials written in ``url`` (``user:pass@``, ``user:@``, ``user@``), or ``None``."""
    if not url.username and not url.password:
        return None
    return Credentials(unquote(url.username), unquote(url.password))


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\\]*)")


def shown_url(raw: str) -> str:
    """``raw`` as a message may show it: a password in it replaced by ``…``
    (``https://alice:…@host/``). A URL that does not parse as written may hold a password
    typed raw (:mod:`nitpicker.policy.userinfo`): everything up to its last ``@`` is hidden."""
    text = raw.strip()
    match = _USERINFO.match(text)
    if match is None:
        return raw
    if not parses_as_written(text):
        rest = text[len(match.group(1)):]
        user, colon, _ = rest[:rest.rfind("@")].partition(":")
        if "@" in rest and user and not any(c in user for c in "/?#\\"):
            return f"{match.group(1)}{user}{':…' if colon else ''}@{rest[rest.rfind('@') + 1:]}"
    userinfo, at, host = match.group(2).rpartition("@")
    if not at:
        return raw
    user = userinfo.split(":", 1)[0]
    shown = f"{user}:…" if ":" in userinfo else user
    return f"{match.group(1)}{shown}@{host}{raw.strip()[match.end():]}"


class RequestHeaders:
    """Which headers a request carries, by where it goes (see the module docstring).

    ``credentials`` maps a root URL (normalised, as a scope entry's ``url``) to its
    credentials; ``headers`` are the ``--header`` pairs; ``scope`` is the crawl's (it may
    gain roots while the crawl runs: a redirecting root's destination). Answers are
    tuples of ``(name, value)``, the credentials' ``Authorization`` first, so that a
    ``--header Authorization`` given too wins.
    """

    def __init__(self, scope: Scope, credentials: dict[str, Credentials],
                 headers: Sequence[Header]) -> None:
        self.scope = scope
        self.headers = tuple(headers)
        self._credentials = dict(credentials)
        self._credentialed = [
            (ScopeEntry.from_url(parsed), creds)
            for root, creds in credentials.items()
            if (parsed := parse_url(root)) is not None
        ]
        self._credentialed.sort(key=lambda pair: pair[0].depth, reverse=True)
        self._by_entry: dict[str, tuple[Header, ...]] = {}
        names = {name.lower() for name, _ in self.headers}
        self._own_authorization = "authorization" in names
        if credentials:
            names.add("authorization")
        self.names: frozenset[str] = frozenset(names)
        """Every header name this policy sets (lower case): removed from a request it does
        not go with (a redirect hop copies its source's headers)."""

    def __bool__(self) -> bool:
        return bool(self.headers or self._credentials)

    def _entry_headers(self, entry: ScopeEntry) -> tuple[Header, ...]:
        found = self._by_entry.get(entry.url)
        if found is None:
            creds = self._credentials.get(entry.url)
            if creds is None:
                creds = self._inherited(entry)
            auth: tuple[Header, ...] = ()
            if creds is not None and not self._own_authorization:
                auth = (("Authorization", creds.authorization()),)
            found = self._by_entry[entry.url] = auth + self.headers
        return found

    def _inherited(self, entry: ScopeEntry) -> Credentials | None:
        """The credentials of the deepest credentialed root ``entry`` lies under."""
        parsed = parse_url(entry.url)
        if parsed is None:
            return None
        for root, creds in self._credentialed:
            if is_lower_layer(parsed, root):
                return creds
        return None

    def for_page(self, url: ParsedUrl | None) -> tuple[Header, ...]:
        """The headers of a request the crawler makes for ``url`` (none out of scope, and
        none over plain http under a root given as https)."""
        if url is None:
            return ()
        entry = self.scope.find(url)
        if entry is None or (url.scheme == "http" and entry.url.startswith("https:")):
            return ()
        return self._entry_headers(entry)

    def for_resource(self, url: ParsedUrl | None, page: ParsedUrl | None) -> tuple[Header, ...]:
        """The headers of a sub-resource ``url`` a rendered ``page`` loads."""
        if url is None:
            return ()
        headers = self.for_page(url)
        if headers and (headers[0][0] == "Authorization" or not self._credentials):
            return headers
        entries = self.scope.entries_of(url.hostname, url.port)
        if url.scheme == "http":
            entries = [e for e in entries if e.url.startswith("http:")]
        if not entries:
            return ()
        if page is not None and (url.hostname, url.port) == (page.hostname, page.port):
            own = self.for_page(page)
            if own and own[0][0] == "Authorization" and (url.scheme, page.scheme) != ("http", "https"):
                return (own[0], *self.headers)
        return self.headers

    def origins(self) -> Iterable[tuple[str, int | None]]:
        """The hosts and ports of the roots (where sub-resources may get headers)."""
        return self.scope.hosts()
