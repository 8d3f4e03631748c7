"""The values of the crawl's ``--extract`` rules (``extracted_values``, migration
``0031_extracted_values``): which rules the archive's crawl had, and each page's values.

A rule's name is a column of the page list (``query pages``, the viewer's page list, the
report's pages sheet); a page's cell holds its values in document order (none: the rule
matched nothing there). The rules are the crawl's stored options (``info.config``'s
``extract``), so a rule that matched no page is still a column. An archive written before
the migration has no values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from nitpicker.query._common import fetch_all, fetch_one, has_tables

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = ["VALUE_SEPARATOR", "extract_names", "joined_values", "page_extracted_values"]

VALUE_SEPARATOR: Final = " | "
"""Between the values of one rule on one page, where a cell holds them as one text."""

_RULES_SQL: Final = "SELECT json_extract(config, '$.extract') FROM info WHERE id = 1"
_NAMES_SQL: Final = ("SELECT trim(substr(value, 1, instr(value, '=') - 1)) FROM json_each(?)"
                     " WHERE instr(value, '=') > 1 ORDER BY key")
_VALUES_SQL: Final = ("SELECT e.page_id, e.name, e.value FROM extracted_values e"
                      " WHERE e.page_id IN (SELECT value FROM json_each(?))"
                      " ORDER BY e.page_id, e.name, e.position")


def extract_names(conn: sqlite3.Connection) -> list[str]:
    """The names of the crawl's ``--extract`` rules, in the order given (none: ``[]``)."""
    if not has_tables(conn, "extracted_values"):
        return []
    row = fetch_one(conn, _RULES_SQL)
    if row is None or not row[0]:
        return []
    return [name for (name,) in fetch_all(conn, _NAMES_SQL, (row[0],))]


def page_extracted_values(conn: sqlite3.Connection, page_ids: Sequence[int],
                          names: Sequence[str]) -> dict[int, dict[str, list[str]]]:
    """Each page's values of each rule of ``names`` (every name present, ``[]`` for none)."""
    found: dict[int, dict[str, list[str]]] = {
        page_id: {name: [] for name in names} for page_id in page_ids}
    if not names or not page_ids:
        return found
    for page_id, name, value in fetch_all(conn, _VALUES_SQL, (json.dumps(list(page_ids)),)):
        values = found[page_id].get(name)
        if values is not None:
            values.append(value)
    return found


def joined_values(values: Sequence[str]) -> str:
    """A page's values of one rule as one cell's text."""
    return VALUE_SEPARATOR.join(values)
