"""The ``xlsx`` reporter: one workbook, one worksheet per sheet, written row by row.

XlsxWriter's ``constant_memory`` mode flushes each row as the next begins, and nothing else is
kept a row: memory stays flat however large the archive. Headers bold; the red error format
(background red 0.9, white text, SPEC §8.2); frozen panes and hidden path columns from the
sheet spec. A sheet longer than Excel's 1,048,576 rows goes on in ``<name> 2``, ``<name> 3``, …
with the same header.

A workbook to hand over (issue 26): every worksheet has its header row frozen (at least) and an
autofilter over its rows; its column widths are set from the header and the first rows
(:func:`column_widths`); the spec's URL columns are links; the Issues sheet's priorities are
coloured (:data:`~nitpicker.query.report_rows.issues_sheet.PRIORITY_COLOURS`).

Two decisions keep it streamed (XlsxWriter holds every ``write_url`` hyperlink and every cell
comment in memory until the workbook closes, and Excel caps a worksheet at 65,530 hyperlinks):

* links are ``HYPERLINK()`` formulas with the text as their cached value (clickable in Excel,
  LibreOffice and Google Sheets, no cap); a URL or text longer than a formula's 255-character
  string stays plain text;
* notes go in the last worksheet, ``Notes`` (Sheet, Cell, Note: one row a note, in the order
  written), and the noted cell links to its note's row (unless it already links to a URL).

Only ``http`` and ``https`` URLs become links: a crawled ``og:url`` of ``javascript:``,
``file:``, ``vbscript:`` or ``ms-msdt:`` would otherwise be one click from running, so any
other URL is written as plain text.
"""

from __future__ import annotations

import logging
import tempfile
from typing import TYPE_CHECKING, Final

import xlsxwriter
from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.worksheet import CellFormulaTuple, Worksheet

from nitpicker.query.report_rows.issues_sheet import PRIORITY_COLOURS

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from xlsxwriter.format import Format

    from nitpicker.query.report_rows import Chunk, SheetSpec, Value
    from nitpicker.report import ReportSource

__all__ = ["ERROR_BACKGROUND", "NOTES", "ReportWorksheet", "XlsxReporter", "column_widths",
           "is_web_url"]

logger = logging.getLogger(__name__)

ERROR_BACKGROUND: Final = "#E60000"
"""Red 0.9 (Google's ``{red: 0.9}``) as Excel RGB."""

MAX_CELL: Final = 32_767
MAX_FORMULA_TEXT: Final = 255
"""The longest string literal a formula may hold (a ``HYPERLINK()``'s URL and its text)."""
MAX_ROWS: Final = 1_048_576
"""Excel's rows a worksheet; a longer sheet goes on in ``<name> 2``, ``<name> 3``, …"""

NOTES: Final = "Notes"
NOTES_HEADERS: Final = ("Sheet", "Cell", "Note")
NOTES_WIDTHS: Final = [28.0, 12.0, 80.0]

MIN_WIDTH: Final = 6
MAX_WIDTH: Final = 60
"""A column's width in characters: its header's and its first rows' longest text, within these."""
WIDTH_SAMPLE: Final = 500
"""The rows a column's width is measured on (the first chunk's first ones)."""


class XlsxReporter:
    """``nitpicker report FILE --format xlsx``; ``max_rows`` a worksheet (Excel's by default)."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows

    def default_path(self, archive: Path) -> Path:
        return archive.with_suffix(".xlsx")

    def write(self, source: ReportSource, path: Path) -> None:
        """Write the workbook; its worksheets' rows wait in files of a scratch folder of the
        system's temporary directory until it is closed. A write that stops (an error, Ctrl-C,
        SIGTERM) leaves neither: the workbook is not assembled, the folder is removed."""
        with tempfile.TemporaryDirectory(prefix="nitpicker-xlsx-") as scratch:
            workbook = xlsxwriter.Workbook(str(path), {
                "constant_memory": True, "strings_to_urls": False, "strings_to_numbers": False,
                "strings_to_formulas": False, "tmpdir": scratch,
            })
            try:
                formats = _Formats(workbook)
                sheets = [(sheet, _Part(workbook, sheet.spec(source.conn), formats,
                                        self.max_rows)) for sheet in source.sheets]
                notes = _Part(workbook, _notes_spec(), formats, self.max_rows)
                notes.use_widths(NOTES_WIDTHS)
                for sheet, part in sheets:
                    _write_sheet(part, source.chunks(sheet), notes, formats)
                notes.finish()
            except BaseException:
                _abandon(workbook)
                raise
            workbook.close()


def _abandon(workbook: xlsxwriter.Workbook) -> None:
    """Give up a workbook without assembling it: its worksheets' row files closed (the scratch
    folder then goes), and nothing left for its finaliser to write."""
    for worksheet in workbook.worksheets():
        worksheet._opt_close()  # constant_memory's row file
    workbook.fileclosed = True


def _notes_spec() -> SheetSpec:
    from nitpicker.query.report_rows import SheetSpec

    return SheetSpec(NOTES, NOTES_HEADERS, freeze_rows=1)


class ReportWorksheet(Worksheet):
    """XlsxWriter's worksheet, its formulas stored as written.

    The report's only formulas are ``HYPERLINK()`` calls on string literals. Upstream
    ``_write_formula`` searches each for Excel's dynamic-array functions (a URL holding
    ``SORT(`` or ``FILTER(`` inside the string made the cell an array formula) and then runs
    it through some thirty regular expressions to prefix newer functions with ``_xlfn.``
    (rewriting such a URL): most of the cost of a linked cell, and wrong for ours. Used
    through ``add_worksheet(worksheet_class=…)``, XlsxWriter's extension point.
    """

    def _write_formula(self, row: int, col: int, formula: str,
                       cell_format: Format | None = None, value: object = 0) -> int:
        if self._check_dimensions(row, col):
            return -1
        if self.constant_memory and row > self.previous_row:
            self._write_single_row(row)
        self.table[row][col] = CellFormulaTuple(formula.removeprefix("="), cell_format, value)
        return 0


class _Formats:
    def __init__(self, workbook: xlsxwriter.Workbook) -> None:
        self.header = workbook.add_format({"bold": True, "bg_color": "#EEEEEE"})
        self.error = workbook.add_format({"bg_color": ERROR_BACKGROUND, "font_color": "#FFFFFF"})
        self.link = workbook.add_format({"font_color": "#1155CC", "underline": 1})
        self.error_link = workbook.add_format({"bg_color": ERROR_BACKGROUND,
                                               "font_color": "#FFFFFF", "underline": 1})
        self.priority = {name: workbook.add_format({"bg_color": background, "bold": True,
                                                    "font_color": text})
                         for name, (background, text) in PRIORITY_COLOURS.items()}


class _Part:
    """A sheet's current worksheet and its next row; past ``limit`` rows a new part begins."""

    def __init__(self, workbook: xlsxwriter.Workbook, spec: SheetSpec, formats: _Formats,
                 limit: int) -> None:
        self.workbook, self.spec, self.formats, self.limit = workbook, spec, formats, limit
        self.number = 1
        self.name = spec.name
        self.widths: list[float] | None = None
        self.worksheet = self._new(self.name)
        self.row = 1

    def _new(self, name: str) -> Worksheet:
        worksheet = self.workbook.add_worksheet(name, worksheet_class=ReportWorksheet)
        worksheet.freeze_panes(max(1, self.spec.freeze_rows), self.spec.freeze_cols)
        self._set_columns(worksheet)
        worksheet.write_row(0, 0, self.spec.headers, self.formats.header)
        return worksheet

    def _set_columns(self, worksheet: Worksheet) -> None:
        """Widths (once measured) and hidden columns; XlsxWriter writes them when it closes."""
        hidden = set(self.spec.hidden_columns)
        for column in range(len(self.spec.headers)):
            width = self.widths[column] if self.widths is not None else None
            if width is not None or column in hidden:
                worksheet.set_column(column, column, width, None,
                                     {"hidden": True} if column in hidden else None)

    def measure(self, rows: Sequence[Sequence[Value]]) -> None:
        """Set the column widths from the header and ``rows`` (the first ones)."""
        self.use_widths(column_widths(self.spec.headers, rows))

    def use_widths(self, widths: list[float]) -> None:
        """Set the column widths, of this part and the parts after it."""
        self.widths = widths
        self._set_columns(self.worksheet)

    def finish(self) -> None:
        """The autofilter over the rows of the current part, header included."""
        self.worksheet.autofilter(0, 0, max(0, self.row - 1), len(self.spec.headers) - 1)

    def next_row(self) -> int:
        """The row to write next (a new part begins when this one is full)."""
        if self.row == self.limit:
            self.finish()
            self.number += 1
            self.name = f"{self.spec.name} {self.number}"
            self.worksheet = self._new(self.name)
            self.row = 1
        row = self.row
        self.row += 1
        return row


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[Value]]) -> list[float]:
    """Each column's width in characters: the longest of its header and its values in the
    first :data:`WIDTH_SAMPLE` of ``rows`` (a value's first line), plus a margin, between
    :data:`MIN_WIDTH` and :data:`MAX_WIDTH`."""
    longest = [len(header) + 3 for header in headers]  # the autofilter's button
    for row in rows[:WIDTH_SAMPLE]:
        for column, value in enumerate(row[:len(longest)]):
            if value is None:
                continue
            text = value if isinstance(value, str) else str(value)
            size = len(text.partition("\n")[0]) + 1
            longest[column] = max(longest[column], size)
    return [float(min(MAX_WIDTH, max(MIN_WIDTH, size))) for size in longest]


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _ref(sheet: str, row: int, column: int) -> tuple[str, str]:
    """``'Sheet'!B7`` and ``B7``."""
    cell = xl_rowcol_to_cell(row, column)
    return f"'{sheet.replace(chr(39), chr(39) * 2)}'!{cell}", cell


def _write_sheet(part: _Part, chunks: Iterator[Chunk], notes: _Part,
                 formats: _Formats) -> None:
    spec = part.spec
    urls = spec.url_columns
    priority = spec.priority_column
    for chunk in chunks:
        if part.widths is None:
            part.measure(chunk.values)
        marks = chunk.marks
        left = len(marks)
        next_mark = 0
        for index, values in enumerate(chunk.values):
            number = part.next_row()
            # every value in one call (the cells of a row stay in memory until the next row
            # begins: a red, linked or noted cell is then written again over its plain value)
            part.worksheet.write_row(number, 0, values)
            if urls:
                _write_links(part.worksheet, number, values, urls, formats)
            if priority is not None and values[priority] in formats.priority:
                part.worksheet.write_string(number, priority, str(values[priority]),
                                            formats.priority[str(values[priority])])
            while next_mark < left and marks[next_mark][0] == index:
                _row, column, note, link, error = marks[next_mark]
                next_mark += 1
                if note or link or error:
                    _write_cell(part, number, column, values[column], note, link, error,
                                notes, formats)
    if part.widths is None:
        part.measure(())
    part.finish()


def _write_links(worksheet: Worksheet, row: int, values: Sequence[Value],
                 columns: tuple[int, ...], formats: _Formats) -> None:
    """The web URLs of ``columns`` as links to themselves (a mark may write a cell again)."""
    for column in columns:
        url = values[column]
        if isinstance(url, str) and len(url) <= MAX_FORMULA_TEXT and is_web_url(url):
            quoted = _quoted(url)
            worksheet.write_formula(row, column, f"=HYPERLINK({quoted},{quoted})",
                                    formats.link, url)


def is_web_url(url: str) -> bool:
    """An ``http:`` or ``https:`` URL (the scheme in any case): the only links a cell gets."""
    return url[:8].lower().startswith(("http://", "https://"))


def _write_cell(part: _Part, row: int, column: int, value: Value, note: str | None,
                link: str | None, error: bool, notes: _Part, formats: _Formats) -> None:
    """Write one cell that is red, linked or noted (its note into the Notes sheet)."""
    worksheet = part.worksheet
    if link is not None and not is_web_url(link):
        link = None  # javascript:, file:, vbscript:, ms-msdt:, …: the text alone
    if isinstance(value, str):
        value = value[:MAX_CELL]
    if note:
        note_row = notes.next_row()
        here, cell_name = _ref(part.name, row, column)
        notes.worksheet.write_string(note_row, 0, part.name)
        notes.worksheet.write_formula(note_row, 1, f"=HYPERLINK({_quoted('#' + here)},"
                                      f"{_quoted(cell_name)})", formats.link, cell_name)
        notes.worksheet.write_string(note_row, 2, note[:MAX_CELL])
        if link is None:
            link = "#" + _ref(notes.name, note_row, 2)[0]
    fmt: Format | None = formats.error if error else None
    text = "" if value is None else value
    if link and len(link) <= MAX_FORMULA_TEXT and (
            not isinstance(text, str) or len(text) <= MAX_FORMULA_TEXT):
        shown = _quoted(text) if isinstance(text, str) else repr(text)
        worksheet.write_formula(row, column, f"=HYPERLINK({_quoted(link)},{shown})",
                                formats.error_link if error else formats.link, text)
    elif value is None:
        if fmt is not None:
            worksheet.write_blank(row, column, None, fmt)
    else:
        worksheet.write(row, column, value, fmt)
