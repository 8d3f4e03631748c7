"""The HTML report's tables, bounded (issue 26): the first rows inline, the whole table as CSV.

A table shows at most :data:`TABLE_ROWS` rows and :data:`TABLE_BYTES` bytes of HTML; its rows
are written meanwhile to a CSV file (the ``csv`` reporter's file of that sheet, byte for
byte: :func:`nitpicker_reports.csv_folder.chunk_rows`) in the folder beside the report
(:class:`Beside`). A table shown whole has its CSV file removed again; one cut short says so
under it and links to its file. A cell's note (its tooltip) shows at most
:data:`NOTE_LINES` lines. So the report of 100,000 pages is the size of one of 500, and opens
as fast: the rows are in the files.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from html import escape
from typing import IO, TYPE_CHECKING, Final

from nitpicker_reports.csv_folder import chunk_rows, file_name, header_row

from nitpicker.report.html_page import table_cell as page_cell

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.query.report_rows import Cell, Sheet
    from nitpicker.report import ReportSource

__all__ = ["NOTE_LINES", "TABLE_BYTES", "TABLE_ROWS", "Beside", "anchor", "capped_note",
           "table_cell", "write_table"]

TABLE_ROWS: Final = 500
"""At most this many rows of a table inline."""
TABLE_BYTES: Final = 300_000
"""At most this many bytes of a table's rows inline (UTF-8; the row that would cross it is
the first left out)."""
NOTE_LINES: Final = 10
"""At most this many lines of a note in a cell's tooltip; the rest is counted."""

_MORE: Final = re.compile(r"… and (\d+) more\Z")


def anchor(name: str) -> str:
    """A sheet's section id: ``Page List`` → ``sheet-page-list``."""
    return "sheet-" + name.lower().replace(" ", "-")


class Beside:
    """The folder of files beside the report (``folder``, linked as ``href``), made when the
    first file is opened and removed again when :meth:`finish` finds it empty."""

    def __init__(self, folder: Path, href: str) -> None:
        self.folder = folder
        self.href = href

    def open(self, name: str) -> IO[str]:
        """A new UTF-8 text file of the folder, for CSV (``newline=""``)."""
        self.folder.mkdir(exist_ok=True)
        return (self.folder / name).open("w", encoding="utf-8", newline="")

    def discard(self, name: str) -> None:
        (self.folder / name).unlink(missing_ok=True)

    def link(self, name: str) -> str:
        return f'<a href="{escape(self.href)}/{escape(name)}">{escape(self.href)}/{escape(name)}</a>'

    def finish(self) -> None:
        """Remove the folder if it holds nothing."""
        if self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()


def write_table(out: IO[str], sheet: Sheet, source: ReportSource, beside: Beside) -> None:
    """One sheet as a section: its heading, its first rows, and when cut, where the rest is."""
    spec = sheet.spec(source.conn)
    hidden = set(spec.hidden_columns)
    out.write(f'<section id="{anchor(spec.name)}"><h2>{escape(spec.name)}</h2>'
              '<div class="table-wrap"><table><thead><tr>')
    out.write("".join(f"<th>{escape(h)}</th>" for i, h in enumerate(spec.headers)
                      if i not in hidden))
    out.write("</tr></thead><tbody>")
    name = file_name(spec.name)
    shown = size = total = 0
    cut = False
    with beside.open(name) as handle:
        writer = csv.writer(handle)
        writer.writerow(header_row(spec))
        for chunk in source.chunks(sheet):
            total += len(chunk)
            if not cut:
                for row in chunk.head(TABLE_ROWS - shown).cells():
                    html = "<tr>" + "".join(table_cell(c) for i, c in enumerate(row)
                                            if i not in hidden) + "</tr>"
                    size += len(html.encode("utf-8"))
                    if size > TABLE_BYTES:
                        break
                    out.write(html)
                    shown += 1
                cut = shown < total
            writer.writerows(chunk_rows(spec, chunk))
    out.write("</tbody></table></div>")
    if cut:
        out.write(f'<p class="cut">The first {shown:,} of {total:,} rows. The whole table:'
                  f" {beside.link(name)} (CSV, UTF-8).</p>")
    else:
        beside.discard(name)
    out.write("</section>")


def capped_note(note: str) -> str:
    """``note`` cut to :data:`NOTE_LINES` lines, the rest counted (``… and N more``)."""
    lines = note.split("\n")
    if len(lines) <= NOTE_LINES:
        return note
    left = len(lines) - NOTE_LINES
    if more := _MORE.match(lines[-1]):  # the note already counted what it left out
        left += int(more.group(1)) - 1
    return "\n".join([*lines[:NOTE_LINES], f"… and {left} more"])


def table_cell(cell: Cell) -> str:
    """One cell as the report's tables write it (:func:`nitpicker.report.html_page.table_cell`:
    red when an error, its note the tooltip, a web URL a link), its note capped
    (:func:`capped_note`)."""
    if cell.note:
        cell = replace(cell, note=capped_note(cell.note))
    return page_cell(cell)

