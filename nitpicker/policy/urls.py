"""URL normalisation: the one definition of a URL's archive key and frontier key.

Rules (SPEC §3.1): fragments and credentials are not part of the key, ``PHPSESSID`` is
removed, repeated slashes in the path are collapsed, query parameters are sorted by name
(``--disable-queries`` drops the query), default ports are dropped, scheme and host are
lower-cased. The http and https forms of one URL share one *frontier key*.

A URL is keyed in the form Scrapy requests it: characters that w3lib's ``safe_url_string``
(what ``scrapy.Request`` applies to its URL) percent-encodes — non-ASCII, spaces, ``[ ] { } |
^`` and the like — are encoded first, so ``page[1].html`` and ``page%5B1%5D.html`` are one key,
the key of the response Scrapy gets for either. A URL made only of characters it leaves alone
(the common case) skips that step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string

__all__ = [
    "MAX_URL_LENGTH",
    "OrderParts",
    "ParsedUrl",
    "frontier_key",
    "is_valid_hostname",
    "join_href",
    "natural_order_key",
    "natural_order_parts",
    "normalize_url",
    "parse_url",
    "url_prefix_key",
]

MAX_URL_LENGTH = 8190
"""The longest URL recorded as it is (the original's ``string(8190)`` column)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DROPPED_PARAMS = frozenset({"phpsessid"})

_C0_CONTROL_OR_SPACE = "".join(map(chr, range(0x21)))
"""What a browser (and w3lib) strips from both ends of a URL."""

_UNCHANGED_BYTES = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#@!$&()*+,;=%"
)
"""What ``safe_url_string`` leaves alone anywhere in an http(s) URL: RFC 3986's unreserved and
reserved characters and ``%``, but not ``[ ]`` (kept only around an IPv6 host) nor ``'``
(encoded in a query). A URL made only of these is already in the form Scrapy requests."""


def _needs_quoting(raw: str) -> bool:
    """Whether ``safe_url_string`` may change ``raw`` (~0.2 µs: a byte table, no regex)."""
    return not raw.isascii() or bool(raw.encode().translate(None, _UNCHANGED_BYTES))


_valid_reg_name = re.compile(r"[a-z0-9\-._~!$&'()*+,;=]+").fullmatch
"""A host name as RFC 3986 allows it (unreserved and sub-delims), lower-cased and IDNA-encoded."""


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """A normalised URL and the parts the crawl policies look at."""

    url: str
    """Normalised URL without fragment or credentials: the archive key (``pages.url``)."""
    scheme: str
    hostname: str
    port: int | None
    """Explicit non-default port, or ``None``."""
    path: str
    query: str
    fragment: str
    username: str
    password: str
    key: str
    """The frontier key: the URL with its scheme removed (http and https are one)."""

    @property
    def is_http(self) -> bool:
        return self.scheme in _DEFAULT_PORTS

    @property
    def segments(self) -> tuple[str, ...]:
        """Path segments; a trailing slash gives a last empty segment, as in the original."""
        return tuple(self.path.removeprefix("/").split("/")) if self.path not in ("", "/") else ()


def frontier_key(url: str) -> str:
    """Protocol-agnostic key: ``https://a/b`` and ``http://a/b`` are the same entry."""
    if url.startswith("https:"):
        return url[6:]
    if url.startswith("http:"):
        return url[5:]
    return url


def _collapse_slashes(path: str) -> str:
    while "//" in path:
        path = path.replace("//", "/")
    return path


def _remove_dot_segments(path: str) -> str:
    """Resolve ``.`` and ``..`` segments (RFC 3986 §5.2.4), as a browser's URL parser does."""
    if "/." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments[1:], start=1):
        last = i == len(segments) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return "/" + "/".join(out)


def _normalise_query(query: str, disable_queries: bool) -> str:
    if disable_queries or not query:
        return ""
    pairs = [p for p in query.split("&") if p]
    kept = [p for p in pairs if p.split("=", 1)[0].lower() not in _DROPPED_PARAMS]
    # Stable sort by the parameter name, like URLSearchParams.sort().
    kept.sort(key=lambda p: p.split("=", 1)[0])
    return "&".join(kept)


def parse_url(raw: str, *, disable_queries: bool = False) -> ParsedUrl | None:
    """Normalise an absolute URL; ``None`` when it cannot be parsed.

    Non-HTTP URLs (``mailto:``, ``tel:``) are returned with their scheme and path only.
    """
    raw = raw.strip(_C0_CONTROL_OR_SPACE)
    try:
        # _needs_quoting(raw), inlined: this runs for every new link
        if not raw.isascii() or raw.encode().translate(None, _UNCHANGED_BYTES):
            raw = safe_url_string(raw)  # the form scrapy.Request gives it
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:  # an invalid IPv6 host or port, an IDNA error
        return None
    scheme = parts.scheme.lower()
    if not scheme:
        return None
    if scheme not in _DEFAULT_PORTS:
        return ParsedUrl(
            url=f"{scheme}:{parts.path}",
            scheme=scheme,
            hostname="",
            port=None,
            path=parts.path,
            query="",
            fragment="",
            username="",
            password="",
            key=frontier_key(f"{scheme}:{parts.path}"),
        )
    hostname = (parts.hostname or "").lower()
    if not hostname:
        return None
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    path = _remove_dot_segments(_collapse_slashes(parts.path)) or "/"
    query = _normalise_query(parts.query, disable_queries)
    host = f"[{hostname}]" if ":" in hostname else hostname
    netloc = f"{host}:{port}" if port is not None else host
    url = f"{scheme}://{netloc}{path}"
    if query:
        url = f"{url}?{query}"
    fragment = parts.fragment
    if "#" in fragment:
        fragment = fragment.replace("#", "%23")  # as safe_url_string encodes it
    return ParsedUrl(
        url=url,
        scheme=scheme,
        hostname=hostname,
        port=port,
        path=path,
        query=query,
        fragment=fragment,
        username=parts.username or "",
        password=parts.password or "",
        key=frontier_key(url),
    )


def normalize_url(raw: str, *, disable_queries: bool = False) -> str | None:
    """The archive key of ``raw``, or ``None`` when it is not a URL."""
    parsed = parse_url(raw, disable_queries=disable_queries)
    return parsed.url if parsed else None


def is_valid_hostname(hostname: str) -> bool:
    """Whether ``hostname`` (as :func:`parse_url` gives it) can name a host.

    ``parse_url`` keeps what it cannot make sense of (``exa mple.com``), so that a link to it
    is recorded and fails as a fetch; a URL given by the user is checked with this first.
    """
    if ":" in hostname:
        return True  # an IPv6 address: urlsplit has checked its brackets
    return _valid_reg_name(hostname) is not None


def url_prefix_key(prefix: str) -> str:
    """The frontier-key form of a URL prefix (``--exclude-url``), to compare with keys.

    Scheme and host are lower-cased and characters Scrapy percent-encodes are encoded, as in
    a URL's key; the rest is kept as written (a prefix need not be a whole URL).
    """
    prefix = prefix.strip(_C0_CONTROL_OR_SPACE)
    if _needs_quoting(prefix):
        try:
            prefix = safe_url_string(prefix)
        except ValueError:
            pass  # not even a URL's start: compared as written
    scheme_end = prefix.find("://")
    if scheme_end > 0:
        host_end = len(prefix)
        for stop in ("/", "?", "#"):
            found = prefix.find(stop, scheme_end + 3, host_end)
            if found >= 0:
                host_end = found
        prefix = prefix[:host_end].lower() + prefix[host_end:]
    return frontier_key(prefix)


def join_href(base: str, href: str) -> str:
    """Resolve ``href`` against ``base`` (a page URL or ``<base href>``).

    ``urljoin`` costs ~6 µs, so absolute and root-relative hrefs are joined by string work
    when the result is the same; hrefs with dot segments go through ``urljoin``. An href
    ``urljoin`` refuses (``HTTP://[x/``: an unclosed IPv6 bracket) is returned as it is, for
    :func:`parse_url` to refuse.
    """
    if href.startswith(("http://", "https://")):
        return href
    scheme_end = base.find("://")
    if scheme_end > 0:
        scheme = base[:scheme_end].lower()
        if scheme in _DEFAULT_PORTS:
            if href.startswith("//"):
                return f"{scheme}:{href}"
            if href.startswith("/") and "/." not in href:
                netloc_start = scheme_end + 3
                end = len(base)
                for stop in ("/", "?", "#"):
                    found = base.find(stop, netloc_start, end)
                    if found >= 0:
                        end = found
                return f"{scheme}://{base[netloc_start:end]}{href}"
    try:
        return urljoin(base, href)
    except ValueError:
        return href


_DIGITS = re.compile(r"([0-9]+)")


def _text(value: str) -> bytes:
    """A string, self-delimiting, in an order-preserving encoding: UTF-8 (bytewise order is
    code point order), NUL escaped as 00 FF, ended by 00 01 (so a prefix sorts first)."""
    return value.encode("utf-8", "surrogatepass").replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def _natural(text: str) -> bytes:
    """Runs of digits compared as numbers, everything else as text; a number before text; a
    shorter sequence before a longer one it begins. Leading zeros do not count (``007`` and
    ``7`` are the same number: the whole URL decides between them, last)."""
    out = bytearray()
    for part in _DIGITS.split(text):
        if not part:
            continue
        if part[0] in "0123456789":
            digits = part.lstrip("0") or "0"
            out += b"\x01" + len(digits).to_bytes(4, "big") + digits.encode("ascii")
        else:
            out += b"\x02" + _text(part)
    out += b"\x00"
    return bytes(out)


@dataclass(frozen=True, slots=True)
class OrderParts:
    """What the natural URL order compares, in that order."""

    host: str
    port: int
    dirs: list[str]
    is_index: bool
    stem: str
    ext: str
    query: str
    url: str


def natural_order_parts(url: str) -> OrderParts:
    """The parts of ``url`` the natural order compares (see :func:`natural_order_key`)."""
    parts = urlsplit(url)
    segments = parts.path.split("/")[1:]
    dirs, basename = segments[:-1], segments[-1] if segments else ""
    stem, dot, ext = basename.rpartition(".")
    if not dot:
        stem, ext = basename, ""
    try:
        port = parts.port or 0
    except ValueError:
        port = 0
    return OrderParts(parts.hostname or "", port, dirs, stem in ("", "index"), stem, ext,
                      parts.query, url)


def natural_order_key(url: str) -> bytes:
    """Sort key for the natural URL order (SPEC §4.2 ``order``).

    Host, then directory segments, an index page before its siblings, numbers compared as
    numbers (``/p/2`` before ``/p/10``), then extension, query and the URL itself. The key is
    bytes whose bytewise order is that order, so SQLite can sort by it (a BLOB compares with
    ``memcmp``) without the URLs being held in memory.
    """
    p = natural_order_parts(url)
    return b"".join((
        _text(p.host),
        p.port.to_bytes(2, "big"),
        *(b"\x01" + _natural(d) for d in p.dirs),
        b"\x00",
        b"\x00" if p.is_index else b"\x01",
        _natural(p.stem),
        _text(p.ext),
        _natural(p.query),
        _text(p.url),
    ))
