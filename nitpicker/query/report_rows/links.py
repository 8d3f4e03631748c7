"""The Links and Referrers Relational Table sheets (SPEC §8.2).

Links: one row per recorded URL that is not a redirect source (internal, external, non-HTML,
skipped), with the URLs redirected to it and the anchors pointing at it (directly or through a
redirect) in notes. Referrers Relational Table: one row per such anchor.
"""

from __future__ import annotations

import json
import json.scanner
from typing import TYPE_CHECKING, Any, Final

from nitpicker.query._common import listed_filter
from nitpicker.query.report_rows.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Chunk,
    Mark,
    SheetSpec,
    Value,
    capped_note,
    joined_note,
    stream,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

__all__ = ["LINKS", "NO_TEXT", "REFERRERS_TABLE", "links_count", "links_rows",
           "merged_headers", "pretty_headers", "referrers_count", "referrers_rows"]

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

_INBOUND_IDS: Final = """(SELECT p.id UNION ALL SELECT id FROM pages
    WHERE redirect_dest_id = p.id)"""
"""The page ``p`` and the URLs redirected to it: the anchors pointing at any of them count."""

WHITESPACE: Final = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
                     "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""The characters Python's ``str.strip()`` removes (``str.isspace``), for SQLite's ``trim``."""

_TRIMMED: Final = f"trim(a.text, char({', '.join(str(ord(c)) for c in WHITESPACE)}))"

_INBOUND_LINE: Final = f"""coalesce(nullif({_TRIMMED}, ''), '{NO_TEXT}')
    || ' (' || s.url || CASE WHEN a.hash != '' THEN '#' || a.hash ELSE '' END
    || CASE WHEN a.href_id != p.id THEN ' => [REDIRECTED FROM] '
            || (SELECT url FROM pages WHERE id = a.href_id) ELSE '' END || ')'"""
"""A Referrers note line: the anchor's text (stripped, or ``__NO_TEXT_CONTENT__``), the page
it is on with its ``#hash``, the redirect source it points at if it is one."""

_TARGET_CELLS: Final = f"""SELECT p.id, p.url, coalesce(nullif(p.title, ''), '-'),
    CASE WHEN typeof(p.status) = 'integer' THEN p.status ELSE -1 END,
    coalesce(p.status_text, ''), coalesce(p.content_type, ''),
    CASE WHEN p.is_skipped THEN coalesce(nullif(p.skip_reason, ''), 'skipped') ELSE '' END,
    typeof(p.status) != 'integer' OR p.status NOT BETWEEN 200 AND 399,
    (SELECT count(*) FROM pages r WHERE r.redirect_dest_id = p.id),
    (SELECT group_concat(url, char(10)) FROM (SELECT r.url FROM pages r
        WHERE r.redirect_dest_id = p.id ORDER BY r.url LIMIT {NOTE_LINES})),
    (SELECT count(*) FROM anchors WHERE href_id IN {_INBOUND_IDS}),
    (SELECT group_concat(line, char(10)) FROM (SELECT {_INBOUND_LINE} AS line
        FROM (SELECT id FROM anchors WHERE href_id IN {_INBOUND_IDS}
              ORDER BY id LIMIT {NOTE_LINES}) f
        CROSS JOIN anchors a ON a.id = f.id JOIN pages s ON s.id = a.page_id)),
    (SELECT json_group_array(json_array(name, value)) FROM (SELECT name, value
        FROM response_headers WHERE page_id = p.id ORDER BY rowid))"""

_TARGETS: Final = f"{_TARGET_CELLS} FROM pages p WHERE +p.redirect_dest_id IS NULL ORDER BY p.url"
"""One row per Links target: its URL, its first five cells as shown (the title or ``-``, no
status as -1, the Remarks), whether the status code is red (:func:`is_error_status`), then its
notes' facts worked out in the same statement: the URLs
redirected to it, the anchors pointing at it (directly or through a redirect: the count, and
the first ones' note lines, joined), its response headers.

The targets come in URL order from the URL index (``+`` keeps SQLite off the redirect index,
which would sort every row, notes and all, before the first one). The anchors are counted
from the target index alone, and only the first :data:`NOTE_LINES` of them (by ``id``, from
the same index) are joined to their pages for the note's lines."""

_TARGETS_LISTED: Final = (f"{_TARGET_CELLS} FROM pages p WHERE +p.redirect_dest_id IS NULL"
                          f" AND {listed_filter('p.id')} ORDER BY p.url")
"""The same, of the listed URLs only (``report --urls``)."""

_TARGET_COUNT: Final = "SELECT count(*) FROM pages p WHERE p.redirect_dest_id IS NULL"
_TARGET_COUNT_LISTED: Final = f"{_TARGET_COUNT} AND {listed_filter('p.id')}"

_RELATIONAL_CELLS: Final = """SELECT t.url,
    CASE WHEN a.hash != '' THEN s.url || '#' || a.hash ELSE s.url END, a.text,
    CASE WHEN typeof(t.status) = 'integer' THEN t.status ELSE -1 END,
    coalesce(t.status_text, ''), coalesce(t.content_type, ''),
    CASE WHEN h.id != t.id THEN h.url END,
    typeof(t.status) != 'integer' OR t.status NOT BETWEEN 200 AND 399
    FROM anchors a JOIN pages h ON h.id = a.href_id
    JOIN pages t ON t.id = coalesce(h.redirect_dest_id, h.id)
    JOIN pages s ON s.id = a.page_id"""

_RELATIONAL: Final = f"{_RELATIONAL_CELLS} ORDER BY t.url, a.id"
"""One Referrers Relational Table row an anchor, its six cells as shown but the text (the
page's URL with the anchor's ``#hash``, the anchor's text as recorded, no status as -1), then
the redirect source the anchor points at (the note of the first cell) and whether the status
code is red (:func:`is_error_status`). The text is stripped by ``str.strip()`` as the row is
built (cheaper than SQLite's ``trim`` with :data:`WHITESPACE`, a row of every anchor)."""

_RELATIONAL_LISTED: Final = f"{_RELATIONAL_CELLS} WHERE {listed_filter('t.id')} ORDER BY t.url, a.id"
"""The same, of the anchors leading to a listed URL (``report --urls``)."""

_RELATIONAL_COUNT: Final = "SELECT count(*) FROM anchors"
_RELATIONAL_COUNT_LISTED: Final = f"""SELECT count(*) FROM anchors a
    JOIN pages h ON h.id = a.href_id JOIN pages t ON t.id = coalesce(h.redirect_dest_id, h.id)
    WHERE {listed_filter('t.id')}"""


def links_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    return int(conn.execute(_TARGET_COUNT_LISTED if listed else _TARGET_COUNT).fetchone()[0])


def links_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
               listed: bool = False) -> Iterator[Chunk]:
    """The Links rows, ``chunk_rows`` at a time (``listed``: the listed URLs' only)."""
    for targets in stream(conn, _TARGETS_LISTED if listed else _TARGETS, (), chunk_rows):
        marks: list[Mark] = []
        yield Chunk([_link_row(number, target, marks) for number, target in enumerate(targets)],
                    marks)


def _link_row(number: int, target: tuple[Any, ...], marks: list[Mark]) -> list[Value]:
    """Row ``number`` of a chunk: its values; its link, red cells and notes onto ``marks``."""
    (_page_id, url, title, code, status_text, content_type, remarks, red, source_count, sources,
     inbound, lines, header_pairs) = target
    marks.append((number, 0, None, url, False))
    if red:
        marks.append((number, 2, None, None, True))
    if source_count and (note := joined_note(sources, source_count)):
        marks.append((number, 5, note, None, False))
    if inbound and (note := capped_note(lines, inbound)):
        marks.append((number, 6, note, None, False))
    if header_pairs != "[]" and (headers := merged_headers(_scan(header_pairs, 0)[0])):
        marks.append((number, 7, pretty_headers(headers), None, False))
    return [url, title, code, status_text, content_type, source_count, f"{inbound} Elements",
            "{}", remarks]


def merged_headers(pairs: list[list[str]]) -> dict[str, str]:
    """Response headers as a mapping in their order, a repeated name's values joined with
    ``, `` (``Set-Cookie``)."""
    headers: dict[str, str] = dict(pairs)
    if len(headers) == len(pairs):
        return headers
    headers = {}
    for name, value in pairs:
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def pretty_headers(headers: dict[str, str]) -> str:
    """``json.dumps(headers, indent=2, ensure_ascii=False)`` of a flat text mapping, in one call
    of the C encoder (with ``indent`` set, ``json`` encodes in Python: the note of every page).

    The items are encoded apart by a NUL, which JSON text never holds raw (a string's control
    characters are escaped), and the NULs become the indented item separators.
    """
    if not headers:
        return "{\n\n}"
    return "{\n  " + _pairs(headers)[1:-1].replace("\x00", ",\n  ") + "\n}"


_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: the C scanner takes a decoder
"""``_scan(text, 0)[0]``: the value of the JSON ``text`` SQLite wrote."""

_pairs = json.JSONEncoder(ensure_ascii=False, separators=("\x00", ": ")).encode


def referrers_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    sql = _RELATIONAL_COUNT_LISTED if listed else _RELATIONAL_COUNT
    return int(conn.execute(sql).fetchone()[0])


def referrers_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                   listed: bool = False) -> Iterator[Chunk]:
    """The Referrers Relational Table rows: one per anchor, by the page it leads to
    (``listed``: the anchors leading to a listed URL)."""
    for anchors in stream(conn, _RELATIONAL_LISTED if listed else _RELATIONAL, (), chunk_rows):
        values: list[Sequence[Value]] = []
        marks: list[Mark] = []
        for number, (link, referrer, text, code, status_text, content_type, source,
                     red) in enumerate(anchors):
            values.append((link, referrer, text.strip() or NO_TEXT, code, status_text,
                           content_type))
            if source:
                marks.append((number, 0, f"[REDIRECTED FROM] {source}", None, False))
            if red:
                marks.append((number, 3, None, None, True))
        yield Chunk(values, marks)
