"""Scope: which URLs belong to the crawl (SPEC §3.2).

Each root is a scope entry (hostname + port + path). A URL is in scope when it is a
*lower layer* of an entry of the same host and port; the deepest matching entry wins.
A directory root (``/blog/``) covers everything under it, a file root (``/blog/post``)
covers only itself and what is below it as a path.

One correction to the original: a URL whose path equals a directory root's path but carries
a query (``/blog/?page=2`` under ``/blog/``) is in scope; the original counted it external.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nitpicker.policy.urls import ParsedUrl, frontier_key, parse_url

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["Scope", "ScopeEntry", "is_lower_layer"]


@dataclass(frozen=True, slots=True)
class ScopeEntry:
    """One root of the crawl, seen as a scope."""

    url: str
    hostname: str
    port: int | None
    segments: tuple[str, ...]
    query: str

    @classmethod
    def from_url(cls, url: ParsedUrl) -> ScopeEntry:
        return cls(url.url, url.hostname, url.port, url.segments, url.query)

    @property
    def depth(self) -> int:
        return len(self.segments)


def is_lower_layer(target: ParsedUrl, base: ScopeEntry) -> bool:
    """True when ``target`` is ``base`` itself or lies under it (same host and port)."""
    if target.hostname != base.hostname or target.port != base.port:
        return False
    if target.key == frontier_key(base.url):
        return True  # the entry itself, in either scheme (http and https are one URL)
    t_segs = target.segments
    b_segs = base.segments
    if not b_segs or b_segs == ("",):
        return True  # the base is the site root
    if len(t_segs) < len(b_segs):
        return False
    for i, b_seg in enumerate(b_segs):
        t_seg = t_segs[i]
        if b_seg == "":
            # The base is a directory: anything at or under it.
            return t_seg != "" or i == len(t_segs) - 1 and not base.query
        if b_seg != t_seg:
            return False
    # Same path as a file base: only deeper paths count, a query variant does not.
    return len(t_segs) > len(b_segs)


class Scope:
    """The set of scope entries of a crawl, answering "is this URL in scope?"."""

    def __init__(self, roots: Iterable[str]) -> None:
        self._by_host: dict[tuple[str, int | None], list[ScopeEntry]] = {}
        for root in roots:
            self.add(root)

    def add(self, root: str) -> None:
        """Add a root as a scope entry."""
        parsed = parse_url(root)
        if parsed is None or not parsed.is_http:
            raise ValueError(f"not an http(s) URL: {root!r}")
        entry = ScopeEntry.from_url(parsed)
        entries = self._by_host.setdefault((entry.hostname, entry.port), [])
        entries.append(entry)
        entries.sort(key=lambda e: e.depth, reverse=True)

    def find(self, url: ParsedUrl) -> ScopeEntry | None:
        """The deepest entry that ``url`` lies under, or ``None`` (out of scope)."""
        for entry in self._by_host.get((url.hostname, url.port), ()):
            if is_lower_layer(url, entry):
                return entry
        return None

    def entries_of(self, hostname: str, port: int | None) -> list[ScopeEntry]:
        """The entries on ``hostname`` and ``port``, deepest first."""
        return self._by_host.get((hostname, port), [])

    def hosts(self) -> list[tuple[str, int | None]]:
        """The hosts and ports of the entries."""
        return list(self._by_host)

    def __contains__(self, url: ParsedUrl) -> bool:
        return self.find(url) is not None

