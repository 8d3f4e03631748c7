"""The analyze plugins' page values as Page List columns, after the fixed ones (SPEC §8.2).

One column per header a plugin declared (the ``headers`` of its latest run in
``analysis_runs``, titles as the plugin gave them), plugins in the order they were first run;
a key a plugin stored without declaring it comes after its declared ones, titled
``<plugin>: <key>``. A cell holds the value the plugin recorded for the page and its note. An
archive never analysed has no such columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from nitpicker.query._common import has_tables
from nitpicker.query.page_values import stored_value

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from nitpicker.query.report_rows.cells import Mark, Value

__all__ = ["PluginColumn", "add_plugin_values", "plugin_columns"]


@dataclass(frozen=True)
class PluginColumn:
    """One plugin column: whose, which header key, and its title."""

    plugin: str
    key: str
    title: str


_HEADERS: Final = """SELECT r.plugin, r.headers FROM analysis_runs r
    WHERE r.id = (SELECT max(l.id) FROM analysis_runs l WHERE l.plugin = r.plugin)
    ORDER BY (SELECT min(f.id) FROM analysis_runs f WHERE f.plugin = r.plugin)"""

_KEYS: Final = "SELECT DISTINCT plugin, key FROM page_values ORDER BY plugin, key"

_CELLS: Final = """SELECT page_id, plugin, key, value, note FROM page_values
    WHERE page_id IN (SELECT value FROM json_each(?))"""


def plugin_columns(conn: sqlite3.Connection) -> list[PluginColumn]:
    """The plugin columns of the Page List, in order (none on an archive never analysed)."""
    if not has_tables(conn, "analysis_runs", "page_values"):
        return []
    columns: list[PluginColumn] = []
    for plugin, headers in conn.execute(_HEADERS):
        declared = json.loads(headers) if headers else {}
        columns.extend(PluginColumn(plugin, str(key), str(title))
                       for key, title in declared.items())
    known = {(c.plugin, c.key) for c in columns}
    undeclared = [PluginColumn(plugin, key, f"{plugin}: {key}")
                  for plugin, key in conn.execute(_KEYS) if (plugin, key) not in known]
    order = {c.plugin: i for i, c in reversed(list(enumerate(columns)))}
    columns.extend(undeclared)
    columns.sort(key=lambda c: order.get(c.plugin, len(order)))  # stable: declared first
    return columns


def _value(raw: str) -> Any:
    value = stored_value(raw)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def add_plugin_values(conn: sqlite3.Connection, columns: Sequence[PluginColumn],
                      page_ids: Sequence[int], rows: Sequence[list[Value]],
                      marks: list[Mark]) -> None:
    """Append the plugin cells to each row of ``rows`` (the pages ``page_ids``, in order),
    their notes to ``marks`` (kept in row and column order)."""
    found: dict[tuple[int, str, str], tuple[Any, str | None]] = {}
    for page_id, plugin, key, value, note in conn.execute(_CELLS, (json.dumps(list(page_ids)),)):
        found[(page_id, plugin, key)] = (_value(value), note or None)
    empty = (None, None)
    noted = False
    for number, (page_id, row) in enumerate(zip(page_ids, rows, strict=True)):
        first = len(row)
        for column, plugin_column in enumerate(columns, first):
            value, note = found.get((page_id, plugin_column.plugin, plugin_column.key), empty)
            row.append(value)
            if note:
                marks.append((number, column, note, None, False))
                noted = True
    if noted:
        marks.sort(key=_place)


def _place(mark: Mark) -> tuple[int, int]:
    return mark[0], mark[1]
