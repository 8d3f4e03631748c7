"""What a report row is made of: cells with a value, a note, a link and an error flag.

One source of truth for every writer (XLSX, CSV, HTML, Google Sheets): the row builders in
this package decide what each cell holds and whether it is red; a writer only lays it out.

A builder yields chunks (:class:`Chunk`): the rows as plain value lists, and beside them the sparse
list of the cells that carry more than a value (a note, a link, the red flag), in row and
column order. Most cells carry nothing else, so a writer takes the values as they are and
looks only at the marked cells; :meth:`Chunk.cells` gives the same rows as cells (:class:`Cell`)
for a writer (or a test) that wants each cell whole.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "CHUNK_ROWS",
    "NOTE_LINES",
    "Cell",
    "Chunk",
    "Mark",
    "Row",
    "SheetSpec",
    "Value",
    "capped_note",
    "is_error_status",
    "joined_note",
    "note_of",
    "stream",
]

CHUNK_ROWS: Final = 2500
"""Rows per chunk a builder yields (the Sheets API's batch of SPEC §8.1)."""

NOTE_LINES: Final = 100
"""At most this many lines in one note; a longer list ends with ``… and N more``."""


@dataclass(slots=True)
class Cell:
    """One cell: its value, an optional note (a comment), a hyperlink, and the red flag.

    Hyperlinks are set where the original report has them (the Page List's URL and og:url)
    and on the Links sheet's URL: a workbook keeps every hyperlink in memory until it is
    closed, so the relational tables (a row per link) carry their URLs as plain text.

    Read-only by convention (builders share constant cells such as an empty one), not
    ``frozen``: a frozen dataclass sets each field through ``object.__setattr__``, which made
    a cell ~3× dearer to build, and a report builds one per value (a million per 10,000
    pages).
    """

    value: str | int | float | None
    note: str | None = None
    link: str | None = None
    error: bool = False


Row = list[Cell]

Value = str | int | float | None
"""A cell's value; ``None`` is an empty cell."""

Mark = tuple[int, int, str | None, str | None, bool]
"""A marked cell of a :class:`Chunk`: ``(row, column, note, link, error)``, the row and column
0-based within the chunk, the note and link ``None`` when there are none."""


class Chunk:
    """Rows of a sheet: ``values`` (a sequence of plain values a row) and ``marks``, the cells with
    a note, a link or the red flag (:data:`Mark`), in row order and, within a row, column
    order. A cell without a mark is its value alone (no note, no link, not red).

    A chunk is handed on once: a writer may empty its lists when it has read them (the Sheets
    writer does, so that the rows are freed while their encoded requests wait their turn)."""

    __slots__ = ("marks", "values")

    def __init__(self, values: list[Sequence[Value]], marks: list[Mark] | None = None) -> None:
        self.values = values
        self.marks: list[Mark] = [] if marks is None else marks

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"Chunk({len(self.values)} rows, {len(self.marks)} marks)"

    def head(self, rows: int) -> Chunk:
        """The first ``rows`` rows (``--limit``)."""
        if rows >= len(self.values):
            return self
        return Chunk(self.values[:rows], [m for m in self.marks if m[0] < rows])

    def cells(self) -> list[Row]:
        """The rows as lists of :class:`Cell` (new ones; for writers that take cells whole)."""
        rows = [[Cell(value) for value in row] for row in self.values]
        for row, column, note, link, error in self.marks:
            cell = rows[row][column]
            cell.note, cell.link, cell.error = note, link, error
        return rows

    @classmethod
    def of_cells(cls, rows: Sequence[Row]) -> Chunk:
        """The chunk of rows of :class:`Cell` (for the sheets of a few rows)."""
        marks: list[Mark] = []
        for number, row in enumerate(rows):
            for column, cell in enumerate(row):
                if cell.note or cell.link or cell.error:
                    marks.append((number, column, cell.note or None, cell.link or None,
                                  cell.error))
        return cls([[cell.value for cell in row] for row in rows], marks)


@dataclass(frozen=True)
class SheetSpec:
    """A sheet's name, its header texts in order, frozen rows/columns and hidden columns.

    ``note_columns``: the columns whose notes a format without notes (CSV) shows in a column
    of their own, ``<header> note``, right after them (the plugin columns).
    ``url_columns``: the columns holding URLs, which a format with links makes links of
    (XLSX; HTML links every web URL), without a mark a cell. ``priority_column``: the column
    holding an issue's priority, coloured by it where a format has colours.
    """

    name: str
    headers: tuple[str, ...]
    freeze_rows: int = 0
    freeze_cols: int = 0
    hidden_columns: tuple[int, ...] = field(default=())
    note_columns: tuple[int, ...] = field(default=())
    url_columns: tuple[int, ...] = field(default=())
    priority_column: int | None = None


def is_error_status(status: int | None) -> bool:
    """The red status rule: not a 2xx or 3xx (no status, a fetch error, 4xx, 5xx)."""
    return status is None or not 200 <= status <= 399


def note_of(lines: Sequence[str], total: int | None = None) -> str | None:
    """A note from its lines (``None`` when there are none), capped at :data:`NOTE_LINES`."""
    total = len(lines) if total is None else total
    if not total:
        return None
    shown = list(lines[:NOTE_LINES])
    if total > len(shown):
        shown.append(f"… and {total - len(shown)} more")
    return "\n".join(shown)


def joined_note(joined: str | None, total: int) -> str | None:
    """:func:`note_of` of lines SQLite joined with newlines (``group_concat``, at most
    :data:`NOTE_LINES` of them), without splitting and joining them again."""
    if not joined or not total:
        return note_of([], total)
    shown = joined.count("\n") + 1
    if shown > NOTE_LINES:
        return note_of(joined.split("\n"), total)
    return joined if total <= shown else f"{joined}\n… and {total - shown} more"


def capped_note(joined: str | None, total: int) -> str | None:
    """:func:`note_of` of the first ``min(total, NOTE_LINES)`` lines of ``total``, which SQLite
    joined with newlines (``joined``): unlike :func:`joined_note`, a line may hold newlines of
    its own (an anchor's text), so the lines shown are known from ``total``, not counted."""
    if not total:
        return None
    if joined is None:
        return note_of([], total)
    shown = min(total, NOTE_LINES)
    return joined if total <= shown else f"{joined}\n… and {total - shown} more"


def stream(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = (),
           chunk_rows: int = CHUNK_ROWS) -> Iterator[list[Any]]:
    """The rows ``sql`` answers, ``chunk_rows`` at a time: never the whole result in memory."""
    cursor = conn.execute(sql, params)
    try:
        while rows := cursor.fetchmany(chunk_rows):
            yield rows
    finally:
        # a report stopped half-way (Ctrl-C, SIGTERM) may close the connection before this
        # generator is collected: closing the connection has closed the cursor already
        with contextlib.suppress(sqlite3.ProgrammingError):
            cursor.close()
