"""The Links and Referrers Relational Table sheets (SPEC §8.2).

Links: one row per recorded URL that is not a redirect source (internal, external, non-HTML,
skipped), with the URLs redirected to it and the anchors pointing at it (directly or through a
redirect) in notes. Referrers Relational Table: one row per such anchor.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from nitpicker.query.report.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    Row,
    SheetSpec,
    is_error_status,
    note_of,
    stream,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["LINKS", "NO_TEXT", "REFERRERS_TABLE", "links_count", "links_rows",
           "referrers_count", "referrers_rows"]

NO_TEXT: Final = "__NO_TEXT_CONTENT__"

LINKS: Final = SheetSpec(
    "Links",
    ("URL", "Page Title", "Status Code", "Status Text", "Content Type", "Redirect From",
     "Referrers", "Headers", "Remarks"),
    freeze_rows=2, freeze_cols=1,
)

REFERRERS_TABLE: Final = SheetSpec(
    "Referrers Relational Table",
    ("Link (To)", "Referrer (From)", "Referrer Content", "Link Status Code", "Link Status Text",
     "Link Content Type"),
    freeze_rows=2, freeze_cols=1,
)

_TARGETS: Final = """SELECT p.id, p.url, p.title, p.status, p.status_text, p.content_type,
    p.is_skipped, p.skip_reason FROM pages p WHERE p.redirect_dest_id IS NULL ORDER BY p.url"""

_TARGET_COUNT: Final = "SELECT count(*) FROM pages WHERE redirect_dest_id IS NULL"

_REDIRECT_SOURCES: Final = "SELECT url FROM pages WHERE redirect_dest_id = ? ORDER BY url"

_HEADERS: Final = "SELECT name, value FROM response_headers WHERE page_id = ? ORDER BY rowid"

_INBOUND: Final = """FROM anchors a JOIN pages h ON h.id = a.href_id
    JOIN pages s ON s.id = a.page_id
    WHERE a.href_id IN (SELECT ?1 UNION ALL SELECT id FROM pages WHERE redirect_dest_id = ?1)"""

_INBOUND_LINES: Final = f"""SELECT a.text, s.url, a.hash, CASE WHEN h.id != ?1 THEN h.url END
    {_INBOUND} ORDER BY a.id LIMIT ?2"""

_INBOUND_COUNT: Final = f"SELECT count(*) {_INBOUND}"

_RELATIONAL: Final = """SELECT t.url, CASE WHEN h.id != t.id THEN h.url END, s.url, a.hash,
    a.text, t.status, t.status_text, t.content_type
    FROM anchors a JOIN pages h ON h.id = a.href_id
    JOIN pages t ON t.id = coalesce(h.redirect_dest_id, h.id)
    JOIN pages s ON s.id = a.page_id
    ORDER BY t.url, a.id"""

_RELATIONAL_COUNT: Final = "SELECT count(*) FROM anchors"


def _referrer_text(text: str) -> str:
    return text.strip() or NO_TEXT


def _from(url: str, hash_: str) -> str:
    return f"{url}#{hash_}" if hash_ else url


def links_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute(_TARGET_COUNT).fetchone()[0])


def links_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS) -> Iterator[list[Row]]:
    """The Links rows, ``chunk_rows`` at a time."""
    for chunk in stream(conn, _TARGETS, (), chunk_rows):
        yield [_link_row(conn, target) for target in chunk]


def _link_row(conn: sqlite3.Connection, target: tuple[object, ...]) -> Row:
    page_id, url, title, status, status_text, content_type, skipped, skip_reason = target
    code = status if isinstance(status, int) else -1
    sources = [r[0] for r in conn.execute(_REDIRECT_SOURCES, (page_id,))]
    lines = []
    for text, source, hash_, through in conn.execute(_INBOUND_LINES, (page_id, NOTE_LINES)):
        via = f" => [REDIRECTED FROM] {through}" if through else ""
        lines.append(f"{_referrer_text(text)} ({_from(source, hash_)}{via})")
    inbound = int(conn.execute(_INBOUND_COUNT, (page_id,)).fetchone()[0])
    headers: dict[str, str] = {}
    for name, value in conn.execute(_HEADERS, (page_id,)):
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    remarks = (skip_reason or "skipped") if skipped else ""
    return [
        Cell(str(url), link=str(url)),
        Cell(str(title) if title else "-"),
        Cell(code, error=is_error_status(code)),
        Cell(str(status_text or "")),
        Cell(str(content_type or "")),
        Cell(len(sources), note=note_of(sources)),
        Cell(f"{inbound} Elements", note=note_of(lines, inbound)),
        Cell("{}", note=json.dumps(headers, indent=2, ensure_ascii=False) if headers else None),
        Cell(str(remarks)),
    ]


def referrers_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute(_RELATIONAL_COUNT).fetchone()[0])


def referrers_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
                   ) -> Iterator[list[Row]]:
    """The Referrers Relational Table rows: one per anchor, by the page it leads to."""
    for chunk in stream(conn, _RELATIONAL, (), chunk_rows):
        rows: list[Row] = []
        for url, through, source, hash_, text, status, status_text, content_type in chunk:
            code = status if isinstance(status, int) else -1
            rows.append([
                Cell(url,
                     note=f"[REDIRECTED FROM] {through}" if through else None),
                Cell(_from(source, hash_)),
                Cell(_referrer_text(text)),
                Cell(code, error=is_error_status(code)),
                Cell(status_text or ""),
                Cell(content_type or ""),
            ])
        yield rows
