"""A plugin's per-page table: the values ``nitpicker analyze`` recorded, page by page.

The rows of ``page_values`` (migration ``0013_analysis``) of one plugin, grouped by page and
ordered by URL, with the plugin's column titles (the ``headers`` of its latest run). An archive
no analyzer has opened has no such table: the answer is then empty.

A value is read back as the JSON it was stored as, but for the ``NaN`` and ``Infinity`` an
archive analysed before nitpicker stored them as ``null`` may hold: those read as ``None``, so
every answer is strict JSON (:func:`stored_value`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from typing_extensions import TypedDict

from nitpicker.query._common import (
    check_paging,
    fetch_all,
    fetch_counted,
    fetch_one,
    find_page_id,
    has_tables,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "PageAnalysisValue",
    "PageValueCell",
    "PageValues",
    "PluginPageValues",
    "get_page_analysis",
    "get_page_values",
    "stored_value",
]

Scalar = str | int | float | bool | None


class PageValueCell(TypedDict):
    value: Scalar
    """A string, number, boolean or null, as the plugin gave it."""
    note: str | None


class PluginPageValues(TypedDict):
    url: str
    """The page's URL."""
    values: dict[str, PageValueCell]
    """Header key → cell."""


class PageValues(TypedDict):
    """One page of a plugin's table, with its column titles."""

    plugin: str
    headers: dict[str, str]
    """Header key → column title, from the plugin's latest run."""
    items: list[PluginPageValues]
    total: int
    """Pages with at least one value."""
    offset: int
    limit: int


_PAGES: Final = """
SELECT p.id, p.url, count(*) OVER ()
FROM pages p
WHERE p.id IN (SELECT v.page_id FROM page_values v WHERE v.plugin = :plugin)
  AND (:pattern IS NULL OR p.url LIKE :pattern)
ORDER BY p.url
LIMIT :limit OFFSET :offset
"""

_COUNT: Final = """
SELECT count(*) FROM pages p
WHERE p.id IN (SELECT v.page_id FROM page_values v WHERE v.plugin = :plugin)
  AND (:pattern IS NULL OR p.url LIKE :pattern)
"""

_CELLS: Final = """
SELECT v.page_id, v.key, v.value, v.note FROM page_values v
WHERE v.plugin = :plugin AND v.page_id IN (SELECT value FROM json_each(:ids))
"""

_HEADERS: Final = "SELECT headers FROM analysis_runs WHERE plugin = ? ORDER BY id DESC LIMIT 1"


def _no_number(_constant: str) -> None:
    return None


def stored_value(text: str) -> Any:
    """A stored page value (JSON text); ``NaN``, ``Infinity`` and ``-Infinity`` as ``None``."""
    return json.loads(text, parse_constant=_no_number)


def get_page_values(
    conn: sqlite3.Connection,
    plugin: str,
    *,
    url_pattern: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> PageValues:
    """The values ``plugin`` recorded, one item per page (by URL); ``url_pattern`` is an SQL
    LIKE pattern on the page URL. Header keys come in the order of the plugin's headers."""
    check_paging(limit, offset)
    answer: PageValues = {"plugin": plugin, "headers": {}, "items": [], "total": 0,
                          "offset": offset, "limit": limit}
    if not has_tables(conn, "page_values"):
        return answer
    headers_row = fetch_one(conn, _HEADERS, (plugin,))
    headers: dict[str, str] = json.loads(headers_row[0]) if headers_row else {}
    params: dict[str, Any] = {"plugin": plugin, "pattern": url_pattern, "limit": limit,
                              "offset": offset}
    rows, total = fetch_counted(conn, _PAGES, _COUNT, params, offset)
    order = {key: index for index, key in enumerate(headers)}
    cells: dict[int, list[tuple[str, PageValueCell]]] = {}
    if rows:
        ids = json.dumps([row[0] for row in rows])
        for page_id, key, value, note in fetch_all(conn, _CELLS, {"plugin": plugin, "ids": ids}):
            cells.setdefault(page_id, []).append((key, {"value": stored_value(value),
                                                        "note": note}))
    answer["headers"] = headers
    answer["total"] = total
    answer["items"] = [
        {"url": url, "values": dict(sorted(cells.get(page_id, []),
                                           key=lambda cell: (order.get(cell[0], len(order)),
                                                             cell[0])))}
        for page_id, url in rows
    ]
    return answer


class PageAnalysisValue(TypedDict):
    plugin: str
    key: str
    """The header key."""
    header: str
    """The column title (the plugin's latest run), or the key when it has none."""
    value: Scalar
    note: str | None


_PAGE_CELLS: Final = """
SELECT v.plugin, v.key, v.value, v.note FROM page_values v
WHERE v.page_id = ? ORDER BY v.plugin, v.key
"""

_PLUGIN_HEADERS: Final = """
SELECT r.plugin, r.headers FROM analysis_runs r
WHERE r.id IN (SELECT max(id) FROM analysis_runs WHERE plugin IN (SELECT value FROM json_each(?))
               GROUP BY plugin)
"""


def get_page_analysis(conn: sqlite3.Connection, url: str) -> list[PageAnalysisValue]:
    """Every value the analyzers recorded for the page at ``url``: plugin by plugin (by name),
    each plugin's in the order of its headers. Empty when the archive has no such URL or no
    analyzer has opened it."""
    if not has_tables(conn, "page_values"):
        return []
    found = find_page_id(conn, url)
    if found is None:
        return []
    rows = fetch_all(conn, _PAGE_CELLS, (found[0],))
    if not rows:
        return []
    plugins = sorted({row[0] for row in rows})
    headers: dict[str, dict[str, str]] = {
        plugin: json.loads(text)
        for plugin, text in fetch_all(conn, _PLUGIN_HEADERS, (json.dumps(plugins),))
    }

    def order(row: tuple[str, str, str, str | None]) -> tuple[str, int, str]:
        keys = list(headers.get(row[0], {}))
        return row[0], keys.index(row[1]) if row[1] in keys else len(keys), row[1]

    return [{"plugin": plugin, "key": key, "header": headers.get(plugin, {}).get(key, key),
             "value": stored_value(value), "note": note}
            for plugin, key, value, note in sorted(rows, key=order)]
