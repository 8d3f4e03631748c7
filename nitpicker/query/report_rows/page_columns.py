"""The Page List's columns after the original's (SPEC §8.2) and before the plugins': each
page's **Link Score** (:mod:`nitpicker.query.link_graph`) and one column per ``--extract``
rule of the crawl (:mod:`nitpicker.query.extracted`: its values on the page, joined by
``" | "``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from nitpicker.query._common import has_column
from nitpicker.query.extracted import extract_names, joined_values, page_extracted_values

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from nitpicker.query.report_rows.cells import Value

__all__ = ["LINK_SCORE", "add_page_columns", "page_column_titles"]

LINK_SCORE: Final = "Link Score"

_SCORES: Final = ("SELECT id, link_score FROM pages WHERE id IN (SELECT value FROM json_each(?))")


def page_column_titles(conn: sqlite3.Connection) -> list[str]:
    """The titles of these columns: the link score's, then each rule's name."""
    return [LINK_SCORE, *extract_names(conn)]


def add_page_columns(conn: sqlite3.Connection, titles: Sequence[str], page_ids: Sequence[int],
                     rows: Sequence[list[Value]]) -> None:
    """Append these columns' cells (``titles``: :func:`page_column_titles`) to each row of
    ``rows`` (the pages ``page_ids``, in order)."""
    scores: dict[int, float | None] = {}
    if has_column(conn, "pages", "link_score"):
        scores = dict(conn.execute(_SCORES, (json.dumps(list(page_ids)),)).fetchall())
    names = list(titles[1:])
    values = page_extracted_values(conn, page_ids, names)
    for page_id, row in zip(page_ids, rows, strict=True):
        row.append(scores.get(page_id))
        row.extend(joined_values(values[page_id][name]) for name in names)
