"""The Images, Violations, Discrepancies and Summary sheets (SPEC §8.2, §12 Q6 and Q13).

Violations come from the analyze plugins' ``violations`` table: an archive never analysed has
none, and the sheet is empty (headers only). Discrepancies always have six cells (``Type``
first, SPEC §12 Q6) and list the links whose text differs from the linked page's title.
Summary is implemented (SPEC §12 Q13): the archive's counts, one metric a row.
"""

from __future__ import annotations

from dataclasses import astuple, fields
from typing import TYPE_CHECKING, Final

from nitpicker.query._common import INTERNAL_HTML, has_tables, listed_filter
from nitpicker.query.analysis_scope import analysis_scopes
from nitpicker.query.report_rows.cells import CHUNK_ROWS, Chunk, SheetSpec, Value, stream
from nitpicker.query.summary import summary

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

__all__ = ["DISCREPANCIES", "IMAGES", "LINK_TEXT_VS_TITLE", "SUMMARY", "VIOLATIONS",
           "discrepancies_count", "discrepancies_rows", "images_count", "images_rows",
           "summary_count", "summary_rows", "violations_count", "violations_rows"]

IMAGES: Final = SheetSpec(
    "Images",
    ("Page URL", "Image path (src)", "Image Path (currentSrc)", "Alternative Text",
     "Displayed Width", "Displayed Height", "Lazy Loading", "Source Code"),
    url_columns=(0, 1),
)
VIOLATIONS: Final = SheetSpec(
    "Violations", ("Validator", "Severity", "Rule", "Code", "Message", "URL"), url_columns=(5,),
)
DISCREPANCIES: Final = SheetSpec(
    "Discrepancies", ("Type", "Left URL", "Left", "Right", "Right URL", "Note"),
    url_columns=(1, 4),
)
SUMMARY: Final = SheetSpec("Summary", ("Metric", "Value"), freeze_rows=1)

LINK_TEXT_VS_TITLE: Final = "Link Text vs Page Title"

_IMAGES_FROM: Final = "FROM images i JOIN pages p ON p.id = i.page_id WHERE p.is_external = 0"
_IMAGES_FROM_LISTED: Final = f"{_IMAGES_FROM} AND {listed_filter('p.id')}"
_IMAGE_CELLS: Final = """SELECT p.url, i.src, i.current_src, i.alt, i.width, i.height,
    CASE WHEN i.is_lazy THEN 'true' ELSE 'false' END, i.source_code"""
_IMAGES: Final = f"{_IMAGE_CELLS} {_IMAGES_FROM} ORDER BY p.url, i.id"
_IMAGES_LISTED: Final = f"{_IMAGE_CELLS} {_IMAGES_FROM_LISTED} ORDER BY p.url, i.id"

_VIOLATIONS_FROM: Final = "FROM violations v JOIN pages p ON p.id = v.page_id"
_VIOLATIONS: Final = f"""SELECT v.validator, v.severity, v.rule, v.code, v.message, p.url
    {_VIOLATIONS_FROM} ORDER BY p.url, v.rowid"""
_VIOLATIONS_LISTED: Final = f"""SELECT v.validator, v.severity, v.rule, v.code, v.message, p.url
    {_VIOLATIONS_FROM} WHERE {listed_filter('p.id')} ORDER BY p.url, v.rowid"""

_DISCREPANCIES_FROM: Final = f"""FROM pages p JOIN anchors a ON a.page_id = p.id
    JOIN pages h ON h.id = a.href_id JOIN pages d ON d.id = coalesce(h.redirect_dest_id, h.id)
    WHERE {INTERNAL_HTML} AND +p.is_target = 1 AND d.is_external = 0
      AND d.content_type = 'text/html' AND trim(a.text) != trim(d.title)"""
_DISCREPANCIES_FROM_LISTED: Final = f"{_DISCREPANCIES_FROM} AND {listed_filter('p.id')}"
_DISCREPANCY_CELLS: Final = f"SELECT '{LINK_TEXT_VS_TITLE}', p.url, a.text, d.title, d.url, ''"
_DISCREPANCY_ORDER: Final = 'ORDER BY p."order" IS NULL, p."order", p.url, a.id'
_DISCREPANCIES: Final = f"{_DISCREPANCY_CELLS} {_DISCREPANCIES_FROM} {_DISCREPANCY_ORDER}"
_DISCREPANCIES_LISTED: Final = (f"{_DISCREPANCY_CELLS} {_DISCREPANCIES_FROM_LISTED}"
                                f" {_DISCREPANCY_ORDER}")


def images_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    sql = f"SELECT count(*) {_IMAGES_FROM_LISTED if listed else _IMAGES_FROM}"
    return int(conn.execute(sql).fetchone()[0])


def images_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                listed: bool = False) -> Iterator[Chunk]:
    """One row per image of an in-scope page (one per device width when rendered);
    ``listed``: of a listed page."""
    for chunk in stream(conn, _IMAGES_LISTED if listed else _IMAGES, (), chunk_rows):
        yield Chunk(chunk)  # the rows as SQLite gives them: nothing red, linked or noted


def violations_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    if not has_tables(conn, "violations"):
        return 0
    sql = (f"SELECT count(*) {_VIOLATIONS_FROM} WHERE {listed_filter('p.id')}" if listed
           else "SELECT count(*) FROM violations")
    return int(conn.execute(sql).fetchone()[0])


def violations_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                    listed: bool = False) -> Iterator[Chunk]:
    """One row per violation (``listed``: of a listed page); none when the archive was never
    analysed."""
    if not has_tables(conn, "violations"):
        return
    for chunk in stream(conn, _VIOLATIONS_LISTED if listed else _VIOLATIONS, (), chunk_rows):
        yield Chunk(chunk)


def discrepancies_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    sql = f"SELECT count(*) {_DISCREPANCIES_FROM_LISTED if listed else _DISCREPANCIES_FROM}"
    return int(conn.execute(sql).fetchone()[0])


def discrepancies_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                       listed: bool = False) -> Iterator[Chunk]:
    """One row per link whose text is not the linked page's title (``listed``: on a listed
    page)."""
    for chunk in stream(conn, _DISCREPANCIES_LISTED if listed else _DISCREPANCIES, (),
                        chunk_rows):
        yield Chunk(chunk)


def summary_count(conn: sqlite3.Connection) -> int:
    return len(fields(summary(conn))) + len(_sampled(conn))


def summary_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
                 ) -> Iterator[Chunk]:
    """The archive's counts (:func:`nitpicker.query.summary.summary`), one a row."""
    facts = summary(conn)
    names = [f.name.replace("_", " ") for f in fields(facts)]
    rows: list[Sequence[Value]] = [[name, value]
                                   for name, value in zip(names, astuple(facts), strict=True)]
    yield Chunk(rows + _sampled(conn))


def _sampled(conn: sqlite3.Connection) -> list[Sequence[Value]]:
    """One row per plugin whose latest analysis covered only some pages (``--sample``,
    ``--pages``): the report says its findings are not the whole site's."""
    found: list[Sequence[Value]] = []
    for run in analysis_scopes(conn):
        scope = run["scope"]
        if scope is None:
            continue
        how = f", a sample of {scope['sample']} per template" if scope.get("sample") else ""
        pages = f", pages matching {' '.join(scope['pages'])}" if scope.get("pages") else ""
        found.append([f"analysis sampled: {run['plugin']}",
                      f"{scope['selected']} of {scope['of']} pages{how}{pages}"])
    return found
