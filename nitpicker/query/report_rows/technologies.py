"""The report's Technologies sheet: the technologies the site's pages use, one a row, most
pages first (what ``nitpicker technologies FILE`` stored; empty until then)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query.report_rows.cells import CHUNK_ROWS, Chunk, SheetSpec
from nitpicker.query.technologies import get_technologies

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["TECHNOLOGIES", "technologies_count", "technologies_rows"]

TECHNOLOGIES: Final = SheetSpec(
    "Technologies", ("Technology", "Categories", "Pages", "Versions", "Website"),
    freeze_rows=1, url_columns=(4,),
)


def technologies_count(conn: sqlite3.Connection) -> int:
    return get_technologies(conn, limit=0)["total"]


def technologies_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
                      ) -> Iterator[Chunk]:
    offset = 0
    while True:
        page = get_technologies(conn, limit=chunk_rows, offset=offset)
        if not page["items"]:
            return
        yield Chunk([[item["name"], ", ".join(item["categories"]), item["pages"],
                      ", ".join(item["versions"]), item["website"]] for item in page["items"]])
        offset += len(page["items"])
