"""The Resources and Resources Relational Table sheets (SPEC §8.2): what the pages loaded.

A resource's status is known only once a browser loaded it: an unknown status is an empty
cell, never red (a crawl over plain HTTP knows none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query._common import listed_filter
from nitpicker.query.report_rows.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Chunk,
    Mark,
    SheetSpec,
    Value,
    joined_note,
    stream,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

__all__ = ["RESOURCES", "RESOURCES_TABLE", "resources_count", "resources_rows",
           "resources_table_count", "resources_table_rows"]

RESOURCES: Final = SheetSpec(
    "Resources",
    ("URL", "Status Code", "Status Text", "Content Type", "Content Length", "Referrers"),
    url_columns=(0,),
)

RESOURCES_TABLE: Final = SheetSpec(
    "Resources Relational Table",
    ("Referred Page (From)", "Resource (To)", "Resource Status Code", "Resource Status Text",
     "Resource Content Type", "Resource Size"),
    freeze_rows=2, freeze_cols=1,
)

_RESOURCES: Final = f"""SELECT r.id, r.url, r.status, r.status_text, r.content_type,
    r.content_length, (SELECT count(*) FROM resource_referrers rr WHERE rr.resource_id = r.id),
    (SELECT group_concat(url, char(10)) FROM (SELECT p.url FROM resource_referrers rr
        JOIN pages p ON p.id = rr.page_id WHERE rr.resource_id = r.id
        ORDER BY p.url LIMIT {NOTE_LINES}))
    FROM resources r"""

_RESOURCES_ALL: Final = f"{_RESOURCES} ORDER BY r.url"
_LOADED: Final = f"""r.id IN (SELECT rr.resource_id FROM resource_referrers rr
    WHERE {listed_filter('rr.page_id')})"""
_RESOURCES_LISTED: Final = f"{_RESOURCES} WHERE {_LOADED} ORDER BY r.url"
"""The resources a listed page loaded (``report --urls``)."""

_RELATIONAL: Final = """SELECT p.url, r.url, r.status, coalesce(r.status_text, ''),
    coalesce(r.content_type, ''), r.content_length,
    r.status IS NOT NULL AND r.status NOT BETWEEN 200 AND 399
    FROM resource_referrers rr JOIN resources r ON r.id = rr.resource_id
    JOIN pages p ON p.id = rr.page_id"""
"""One Resources Relational Table row a resource's page, its six cells as shown, then whether
the status is red (a known one outside 200–399)."""

_RELATIONAL_ALL: Final = f"{_RELATIONAL} ORDER BY r.url, p.url"
_RELATIONAL_LISTED: Final = f"{_RELATIONAL} WHERE {listed_filter('p.id')} ORDER BY r.url, p.url"
"""The listed pages' loads (``report --urls``)."""


def resources_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    sql = f"SELECT count(*) FROM resources r WHERE {_LOADED}" if listed else \
        "SELECT count(*) FROM resources"
    return int(conn.execute(sql).fetchone()[0])


def resources_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                   listed: bool = False) -> Iterator[Chunk]:
    """One row per resource (``N pages``, their URLs in the note); ``listed``: the resources
    a listed page loaded."""
    for chunk in stream(conn, _RESOURCES_LISTED if listed else _RESOURCES_ALL, (), chunk_rows):
        values: list[Sequence[Value]] = []
        marks: list[Mark] = []
        for number, (_id, url, status, status_text, content_type, length, pages,
                     referrers) in enumerate(chunk):
            values.append([url, status, status_text or "", content_type or "", length,
                           f"{pages} pages"])
            if note := joined_note(referrers, pages):
                marks.append((number, 5, note, None, False))
        yield Chunk(values, marks)


def resources_table_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    sql = "SELECT count(*) FROM resource_referrers rr"
    return int(conn.execute(f"{sql} WHERE {listed_filter('rr.page_id')}" if listed else sql)
               .fetchone()[0])


def resources_table_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                         listed: bool = False) -> Iterator[Chunk]:
    """One row per (resource, page that loaded it), by resource URL (a known status outside
    200–399 red; an unknown one is an empty cell); ``listed``: the listed pages' loads."""
    for loads in stream(conn, _RELATIONAL_LISTED if listed else _RELATIONAL_ALL, (),
                        chunk_rows):
        yield Chunk([row[:6] for row in loads],
                    [(number, 2, None, None, True) for number, row in enumerate(loads) if row[6]])
