"""The ``xlsx`` reporter: one workbook, one worksheet per sheet, written row by row.

XlsxWriter's ``constant_memory`` mode flushes each row as the next begins, so memory stays
flat however large the archive. Headers bold; the red error format (background red 0.9, white
text, SPEC §8.2); frozen panes and hidden path columns from the sheet spec; links as
hyperlinks (as text past Excel's 65,530 a sheet); notes as cell comments. A sheet longer than
Excel's 1,048,576 rows goes on in ``<name> 2``, ``<name> 3``, … with the same header.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Final

import xlsxwriter

if TYPE_CHECKING:
    from pathlib import Path

    from xlsxwriter.format import Format
    from xlsxwriter.worksheet import Worksheet

    from nitpicker.query.report import Cell, Sheet, SheetSpec
    from nitpicker.report import ReportSource

__all__ = ["ERROR_BACKGROUND", "XlsxReporter"]

logger = logging.getLogger(__name__)

ERROR_BACKGROUND: Final = "#E60000"
"""Red 0.9 (Google's ``{red: 0.9}``) as Excel RGB."""

MAX_CELL: Final = 32_767
MAX_URL: Final = 2_079
MAX_URLS: Final = 65_530
MAX_ROWS: Final = 1_048_576
"""Excel's rows a worksheet; a longer sheet goes on in ``<name> 2``, ``<name> 3``, …"""


class XlsxReporter:
    """``nitpicker report FILE --format xlsx``; ``max_rows`` a worksheet (Excel's by default)."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows

    def default_path(self, archive: Path) -> Path:
        return archive.with_suffix(".xlsx")

    def write(self, source: ReportSource, path: Path) -> None:
        workbook = xlsxwriter.Workbook(str(path), {
            "constant_memory": True, "strings_to_urls": False, "strings_to_numbers": False,
            "strings_to_formulas": False,
        })
        formats = _Formats(workbook)
        try:
            for sheet in source.sheets:
                _write_sheet(workbook, sheet, source, formats, self.max_rows)
        finally:
            workbook.close()


class _Formats:
    def __init__(self, workbook: xlsxwriter.Workbook) -> None:
        self.header = workbook.add_format({"bold": True, "bg_color": "#EEEEEE"})
        self.error = workbook.add_format({"bg_color": ERROR_BACKGROUND, "font_color": "#FFFFFF"})
        self.link = workbook.add_format({"font_color": "#1155CC", "underline": 1})
        self.error_link = workbook.add_format({"bg_color": ERROR_BACKGROUND,
                                               "font_color": "#FFFFFF", "underline": 1})


def _new_worksheet(workbook: xlsxwriter.Workbook, name: str, spec: SheetSpec,
                   formats: _Formats) -> Worksheet:
    worksheet = workbook.add_worksheet(name)
    if spec.freeze_rows or spec.freeze_cols:
        worksheet.freeze_panes(spec.freeze_rows, spec.freeze_cols)
    for column in spec.hidden_columns:
        worksheet.set_column(column, column, None, None, {"hidden": True})
    worksheet.write_row(0, 0, spec.headers, formats.header)
    return worksheet


def _write_sheet(workbook: xlsxwriter.Workbook, sheet: Sheet, source: ReportSource,
                 formats: _Formats, limit: int) -> None:
    spec = sheet.spec(source.conn)
    worksheet = _new_worksheet(workbook, spec.name, spec, formats)
    part = 1
    row_number = 1
    links = 0
    for chunk in source.rows(sheet):
        for row in chunk:
            if row_number == limit:
                part += 1
                worksheet = _new_worksheet(workbook, f"{spec.name} {part}", spec, formats)
                row_number, links = 1, 0
            for column, cell in enumerate(row):
                links += _write_cell(worksheet, row_number, column, cell, formats,
                                     links < MAX_URLS)
            row_number += 1


def _write_cell(worksheet: Worksheet, row: int, column: int, cell: Cell, formats: _Formats,
                links_left: bool) -> int:
    """Write one cell; 1 when it became a hyperlink."""
    value = cell.value
    fmt: Format | None = formats.error if cell.error else None
    linked = 0
    if value is None:
        if fmt is not None:
            worksheet.write_blank(row, column, None, fmt)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        text = str(value)[:MAX_CELL]
        if cell.link and links_left and len(cell.link) <= MAX_URL:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                status = worksheet.write_url(row, column, cell.link,
                                             formats.error_link if cell.error else formats.link,
                                             string=text)
            linked = 1 if status == 0 else 0
            if status != 0:
                worksheet.write_string(row, column, text, fmt)
        else:
            worksheet.write_string(row, column, text, fmt)
    else:
        worksheet.write_number(row, column, value, fmt)
    if cell.note:
        worksheet.write_comment(row, column, cell.note[:MAX_CELL])
    return linked
