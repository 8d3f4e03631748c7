"""The Resources sheet folded by query pattern (``--dedupe-resources``, SPEC §8.2).

Resources whose URLs differ only in their query values are one row: the rows of one
``(canonical URL, status, content type)``, where the canonical URL keeps the query's keys,
sorted and each once, without their values (``/pixel.gif?uid=7&t=1`` → ``/pixel.gif?t&uid``).
Two columns follow the six of the raw sheet: ``Count`` (resources folded) and ``Query Pattern``
(how many distinct values each key took: ``t=2, uid=27``; past 100 a key shows ``uid=100+``;
the values themselves are never shown). ``Content Length`` is the first resource's (by URL),
``Referrers`` the distinct pages that loaded any of them.

Streaming: resources come sorted by their URL without the query, so the variants of one path
arrive together; only one path's groups are held at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from nitpicker.query._common import listed_filter
from nitpicker.query.report_rows.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    Chunk,
    Row,
    SheetSpec,
    note_of,
    stream,
)
from nitpicker.query.report_rows.resources import RESOURCES

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["MAX_PARAM_VALUE_SAMPLES", "RESOURCES_DEDUPED", "canonical_url",
           "deduped_resources_count", "deduped_resources_rows"]

MAX_PARAM_VALUE_SAMPLES: Final = 100
"""Distinct values counted per query key; more show as ``key=100+``."""

RESOURCES_DEDUPED: Final = SheetSpec("Resources", (*RESOURCES.headers, "Count", "Query Pattern"))

_BASE: Final = "CASE WHEN instr(r.url, '?') > 0 THEN substr(r.url, 1, instr(r.url, '?') - 1)" \
    " ELSE r.url END"

_RESOURCES: Final = f"""SELECT r.id, r.url, r.status, r.status_text, r.content_type,
    r.content_length, {_BASE} FROM resources r ORDER BY {_BASE}, r.url"""

_RESOURCES_LISTED: Final = f"""SELECT r.id, r.url, r.status, r.status_text, r.content_type,
    r.content_length, {_BASE} FROM resources r WHERE r.id IN (SELECT rr.resource_id
        FROM resource_referrers rr WHERE {listed_filter('rr.page_id')})
    ORDER BY {_BASE}, r.url"""
"""The resources a listed page loaded (``report --urls``)."""

_REFERRERS: Final = """SELECT p.id, p.url FROM resource_referrers rr
    JOIN pages p ON p.id = rr.page_id WHERE rr.resource_id = ?"""


def canonical_url(url: str) -> str:
    """The URL with its query's keys sorted and each once, their values dropped."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return urlunsplit(parts._replace(query="&".join(keys)))


@dataclass
class _Group:
    url: str
    status: Any
    status_text: str
    content_type: str
    length: Any
    count: int = 0
    values: dict[str, set[str]] = field(default_factory=dict)
    overflow: set[str] = field(default_factory=set)
    pages: set[int] = field(default_factory=set)
    page_urls: list[str] = field(default_factory=list)

    def add(self, url: str) -> None:
        self.count += 1
        for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
            seen = self.values.setdefault(key, set())
            if value in seen:
                continue
            if len(seen) < MAX_PARAM_VALUE_SAMPLES:
                seen.add(value)
            else:
                self.overflow.add(key)

    def pattern(self) -> str:
        return ", ".join(
            f"{key}={MAX_PARAM_VALUE_SAMPLES}+" if key in self.overflow
            else f"{key}={len(values)}"
            for key, values in sorted(self.values.items()))

    def row(self) -> Row:
        pages = len(self.pages)
        return [
            Cell(self.url),
            Cell(self.status),
            Cell(self.status_text),
            Cell(self.content_type),
            Cell(self.length),
            Cell(f"{pages} pages", note=note_of(sorted(self.page_urls), pages)),
            Cell(self.count),
            Cell(self.pattern()),
        ]


def _groups(conn: sqlite3.Connection, with_referrers: bool, listed: bool = False
            ) -> Iterator[_Group]:
    """The groups in order, one path (URL without its query) at a time."""
    base: str | None = None
    groups: dict[tuple[str, Any, str], _Group] = {}
    for chunk in stream(conn, _RESOURCES_LISTED if listed else _RESOURCES):
        for resource_id, url, status, status_text, content_type, length, path in chunk:
            if path != base:
                yield from _sorted(groups)
                base, groups = path, {}
            canonical = canonical_url(url)
            key = (canonical, status, content_type or "")
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(canonical, status, status_text or "",
                                             content_type or "", length)
            group.add(url)
            if with_referrers:
                for page_id, page_url in conn.execute(_REFERRERS, (resource_id,)):
                    if page_id not in group.pages:
                        group.pages.add(page_id)
                        if len(group.page_urls) < NOTE_LINES:
                            group.page_urls.append(page_url)
    yield from _sorted(groups)


def _sorted(groups: dict[tuple[str, Any, str], _Group]) -> Iterator[_Group]:
    return iter(sorted(groups.values(), key=lambda g: (g.url, str(g.status), g.content_type)))


def deduped_resources_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    return sum(1 for _ in _groups(conn, with_referrers=False, listed=listed))


def deduped_resources_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                           listed: bool = False) -> Iterator[Chunk]:
    """One row per group, ``chunk_rows`` at a time (``listed``: of the resources a listed page
    loaded)."""
    rows: list[Row] = []
    for group in _groups(conn, with_referrers=True, listed=listed):
        rows.append(group.row())
        if len(rows) == chunk_rows:
            yield Chunk.of_cells(rows)
            rows = []
    if rows:
        yield Chunk.of_cells(rows)
