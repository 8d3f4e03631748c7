"""The report's sheets (the Issues, then SPEC §8.2's nine): their specs and row builders,
streamed from the archive.

Every writer (XLSX, CSV, HTML, Google Sheets) takes its rows from here, so a row holds the
same cells whatever the format::

    for sheet in SHEETS:
        spec = sheet.spec(conn)            # name, header texts in order, frozen/hidden columns
        for chunk in sheet.chunks(conn):   # Chunks (values and marks), CHUNK_ROWS rows at a time
            ...
        for rows in sheet.rows(conn):      # the same rows as lists of Cells
            ...

Builders stream with a cursor (``fetchmany``): a sheet is never held in memory. They work on
any archive: one never analysed has an empty Violations sheet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final

from nitpicker.query.report_rows.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    Chunk,
    Mark,
    Row,
    SheetSpec,
    Value,
)
from nitpicker.query.report_rows.findings import (
    DISCREPANCIES,
    IMAGES,
    SUMMARY,
    VIOLATIONS,
    discrepancies_count,
    discrepancies_rows,
    images_count,
    images_rows,
    summary_count,
    summary_rows,
    violations_count,
    violations_rows,
)
from nitpicker.query.report_rows.issues_sheet import ISSUES, issues_count, issues_rows
from nitpicker.query.report_rows.links import (
    LINKS,
    REFERRERS_TABLE,
    links_count,
    links_rows,
    referrers_count,
    referrers_rows,
)
from nitpicker.query.report_rows.listed import list_pages
from nitpicker.query.report_rows.page_list import page_list_count, page_list_rows, page_list_spec
from nitpicker.query.report_rows.resources import (
    RESOURCES,
    RESOURCES_TABLE,
    resources_count,
    resources_rows,
    resources_table_count,
    resources_table_rows,
)
from nitpicker.query.report_rows.resources_dedupe import (
    RESOURCES_DEDUPED,
    deduped_resources_count,
    deduped_resources_rows,
)
from nitpicker.query.report_rows.technologies import (
    TECHNOLOGIES,
    technologies_count,
    technologies_rows,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["CHUNK_ROWS", "DEDUPED_RESOURCES", "NOTE_LINES", "SHEETS", "SHEET_NAMES", "Cell",
           "Chunk", "Mark", "Row", "Sheet", "SheetSpec", "Value", "list_pages",
           "select_sheets"]


@dataclass(frozen=True)
class Sheet:
    """One sheet of the report: how to get its spec, its row count and its rows.

    ``listable``: its builders take ``listed=True`` for the rows of the listed pages only
    (:mod:`~nitpicker.query.report_rows.listed`, ``report --urls``); the Summary is the archive's.
    """

    name: str
    spec_of: Callable[..., SheetSpec]
    """``spec_of(conn)`` (``listed=True`` too when ``listable``); ``count`` and ``build`` alike."""
    count: Callable[..., int]
    build: Callable[..., Iterator[Chunk]]
    listable: bool = False

    def listed(self) -> Sheet:
        """The sheet of the listed pages' rows (itself when it has no such rows)."""
        if not self.listable:
            return self
        return Sheet(self.name, partial(self.spec_of, listed=True),
                     partial(self.count, listed=True), partial(self.build, listed=True))

    def spec(self, conn: sqlite3.Connection) -> SheetSpec:
        return self.spec_of(conn)

    def chunks(self, conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
               ) -> Iterator[Chunk]:
        """The rows, ``chunk_rows`` at a time, as the builder gives them (values and marks)."""
        return self.build(conn, chunk_rows)

    def rows(self, conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
             ) -> Iterator[list[Row]]:
        """The same rows as :class:`Cell`, ``chunk_rows`` at a time."""
        for chunk in self.build(conn, chunk_rows):
            yield chunk.cells()


def _fixed(spec: SheetSpec) -> Callable[..., SheetSpec]:
    def spec_of(_conn: sqlite3.Connection, *, listed: bool = False) -> SheetSpec:
        return spec
    return spec_of


SHEETS: Final = (
    Sheet("Issues", _fixed(ISSUES), issues_count, issues_rows),
    Sheet("Page List", page_list_spec, page_list_count, page_list_rows, listable=True),
    Sheet("Links", _fixed(LINKS), links_count, links_rows, listable=True),
    Sheet("Resources", _fixed(RESOURCES), resources_count, resources_rows, listable=True),
    Sheet("Images", _fixed(IMAGES), images_count, images_rows, listable=True),
    Sheet("Violations", _fixed(VIOLATIONS), violations_count, violations_rows, listable=True),
    Sheet("Discrepancies", _fixed(DISCREPANCIES), discrepancies_count, discrepancies_rows,
          listable=True),
    Sheet("Summary", _fixed(SUMMARY), summary_count, summary_rows),
    Sheet("Technologies", _fixed(TECHNOLOGIES), technologies_count, technologies_rows),
    Sheet("Referrers Relational Table", _fixed(REFERRERS_TABLE), referrers_count,
          referrers_rows, listable=True),
    Sheet("Resources Relational Table", _fixed(RESOURCES_TABLE), resources_table_count,
          resources_table_rows, listable=True),
)
"""The ten sheets: the Issues first (issue 26), then the nine of SPEC §8.2 in its order."""

SHEET_NAMES: Final = tuple(sheet.name for sheet in SHEETS)

DEDUPED_RESOURCES: Final = Sheet("Resources", _fixed(RESOURCES_DEDUPED), deduped_resources_count,
                                 deduped_resources_rows, listable=True)
"""The Resources sheet of ``--dedupe-resources``: one row per query pattern."""


def select_sheets(names: list[str] | None, *, dedupe_resources: bool = False) -> list[Sheet]:
    """The sheets named (all ten when ``None``), in report order; an unknown name raises.

    ``dedupe_resources``: the Resources sheet folds the URLs differing only in query values.
    """
    chosen = list(SHEETS)
    if names:
        unknown = [n for n in names if n not in SHEET_NAMES]
        if unknown:
            allowed = ", ".join(SHEET_NAMES)
            raise ValueError(f"Unknown sheet {unknown[0]!r}: choose from {allowed}")
        chosen = [s for s in SHEETS if s.name in names]
    if dedupe_resources:
        chosen = [DEDUPED_RESOURCES if s.name == "Resources" else s for s in chosen]
    return chosen
