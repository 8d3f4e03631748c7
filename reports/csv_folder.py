"""The ``csv`` reporter: a folder with one UTF-8 CSV file per sheet, header row first.

Values only: CSV has no colours or links (a link's cell holds its URL as text), and no notes
but those of the plugin columns, each in a ``<header> note`` column right after its column.
File names are the sheet names in lower case with dashes (``page-list.csv``).

**Formulas.** A spreadsheet opening a CSV file runs a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula (``=HYPERLINK(…)``, ``=IMPORTXML(…)``, ``=cmd|…`` DDE), and
some take a leading tab or carriage return as the same. The text of a report is the crawled
sites' (titles, descriptions, anchor texts, plugin values): every text cell that starts with
one of those characters and holds more than it gets a leading ``'``, as OWASP's "CSV
Injection" advises, so it shows as the text it is. Numbers are written as numbers (a status
of ``-1`` stays ``-1``); a cell of the one character alone (the Links sheet's ``-``) cannot
hold a formula and is left as it is.
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from nitpicker.query.report_rows import Chunk, SheetSpec
    from nitpicker.report import ReportSource

__all__ = ["FORMULA_STARTS", "CsvReporter", "chunk_rows", "file_name", "header_row",
           "neutralised"]

FORMULA_STARTS: Final = frozenset("=+-@\t\r")
"""The first characters a spreadsheet may read a cell as a formula by (OWASP)."""


def file_name(sheet_name: str) -> str:
    """``Referrers Relational Table`` → ``referrers-relational-table.csv``."""
    return sheet_name.lower().replace(" ", "-") + ".csv"


def neutralised(row: Sequence[Any]) -> list[Any]:
    """``row`` with every text cell a spreadsheet would read as a formula prefixed with
    ``'`` (numbers, ``None`` and one-character cells as they are)."""
    return ["'" + value if value.__class__ is str and value[:1] in FORMULA_STARTS
            and len(value) > 1 else value for value in row]


def _rows(rows: Iterable[Sequence[Any]]) -> Iterable[list[Any]]:
    return map(neutralised, rows)


class CsvReporter:
    """``nitpicker report FILE --format csv``."""

    def default_path(self, archive: Path) -> Path:
        return archive.with_name(f"{archive.stem}-csv")

    def write(self, source: ReportSource, path: Path) -> None:
        path.mkdir()
        for sheet in source.sheets:
            spec = sheet.spec(source.conn)
            with (path / file_name(spec.name)).open("w", encoding="utf-8", newline="") as out:
                writer = csv.writer(out)
                writer.writerow(header_row(spec))
                for chunk in source.chunks(sheet):
                    writer.writerows(chunk_rows(spec, chunk))


def header_row(spec: SheetSpec) -> list[Any]:
    """A sheet's header row as its CSV file begins (a ``<header> note`` after each noted
    column)."""
    noted = set(spec.note_columns)
    return neutralised(_with_notes(list(spec.headers), noted,
                                   [f"{h} note" for h in spec.headers]))


def chunk_rows(spec: SheetSpec, chunk: Chunk) -> Iterable[list[Any]]:
    """A chunk's rows as the sheet's CSV file holds them: the values (``None`` written as
    ``""`` by :mod:`csv`), formulas neutralised, the noted columns' notes after them."""
    noted = set(spec.note_columns)
    if not noted:  # the values as they are
        return _rows(chunk.values)
    return _rows(_with_notes(["" if c.value is None else c.value for c in row], noted,
                             [c.note or "" for c in row]) for row in chunk.cells())


def _with_notes(values: list[Any], noted: set[int], notes: list[str]) -> list[Any]:
    """``values`` with ``notes[i]`` inserted after each column ``i`` in ``noted``."""
    if not noted:
        return values
    out: list[Any] = []
    for index, value in enumerate(values):
        out.append(value)
        if index in noted:
            out.append(notes[index])
    return out
