"""The ``csv`` reporter: a folder with one UTF-8 CSV file per sheet, header row first.

Values only: CSV has no colours or links (a link's cell holds its URL as text), and no notes
but those of the plugin columns, each in a ``<header> note`` column right after its column.
File names are the sheet names in lower case with dashes (``page-list.csv``).
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.report import ReportSource

__all__ = ["CsvReporter", "file_name"]


def file_name(sheet_name: str) -> str:
    """``Referrers Relational Table`` → ``referrers-relational-table.csv``."""
    return sheet_name.lower().replace(" ", "-") + ".csv"


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
                noted = set(spec.note_columns)
                writer.writerow(_with_notes(list(spec.headers), noted,
                                            [f"{h} note" for h in spec.headers]))
                for chunk in source.chunks(sheet):
                    if not noted:  # the values as they are (csv writes None as "")
                        writer.writerows(chunk.values)
                        continue
                    writer.writerows(
                        _with_notes(["" if c.value is None else c.value for c in row], noted,
                                    [c.note or "" for c in row]) for row in chunk.cells()
                    )


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
