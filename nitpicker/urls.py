"""URL normalisation: the one definition of a URL's archive key and frontier key.

Rules (SPEC §3.1): fragments and credentials are not part of the key, ``PHPSESSID`` is
removed, repeated slashes in the path are collapsed, query parameters are sorted by name
(``--disable-queries`` drops the query), default ports are dropped, scheme and host are
lower-cased. The http and https forms of one URL share one *frontier key*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string

__all__ = [
    "OrderParts",
    "ParsedUrl",
    "frontier_key",
    "join_href",
    "natural_order_key",
    "natural_order_parts",
    "normalize_url",
    "parse_url",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DROPPED_PARAMS = frozenset({"phpsessid"})


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
    raw = raw.strip()
    if not raw.isascii() or " " in raw:
        raw = safe_url_string(raw)
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
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
    return ParsedUrl(
        url=url,
        scheme=scheme,
        hostname=hostname,
        port=port,
        path=path,
        query=query,
        fragment=parts.fragment,
        username=parts.username or "",
        password=parts.password or "",
        key=frontier_key(url),
    )


def normalize_url(raw: str, *, disable_queries: bool = False) -> str | None:
    """The archive key of ``raw``, or ``None`` when it is not a URL."""
    parsed = parse_url(raw, disable_queries=disable_queries)
    return parsed.url if parsed else None


def join_href(base: str, href: str) -> str:
    """Resolve ``href`` against ``base`` (a page URL or ``<base href>``).

    ``urljoin`` costs ~6 µs, so absolute and root-relative hrefs are joined by string work
    when the result is the same; hrefs with dot segments go through ``urljoin``.
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
    return urljoin(base, href)


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
