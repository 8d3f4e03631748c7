"""The reporter host (nitpicker/report/host.py): reporters found in the ``nitpicker.report``
entry-point group, the Google Sheets one (``--sheet URL``) by the name ``sheets`` like the
others, never imported by the core."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.report import host
from nitpicker.report.host import (
    REPORT_GROUP,
    SHEETS,
    ReportError,
    available_formats,
    load_reporter,
    open_spreadsheet,
)

if TYPE_CHECKING:
    from collections.abc import Callable

OPENED: list[tuple[str, Path, Callable[[float, int], None]]] = []


def fake_opener(url: str, credentials: Path, on_wait: Callable[[float, int], None]) -> Any:
    OPENED.append((url, credentials, on_wait))
    return "the spreadsheet reporter"


def _group(*entries: tuple[str, str]) -> Callable[..., list[EntryPoint]]:
    points = [EntryPoint(name, value, REPORT_GROUP) for name, value in entries]

    def entry_points(*, group: str) -> list[EntryPoint]:
        return points if group == REPORT_GROUP else []

    return entry_points


def test_the_bundled_sheets_reporter_is_registered_like_the_others() -> None:
    bundled = {ep.name: ep.value for ep in host.entry_points(group=REPORT_GROUP)}
    assert bundled[SHEETS] == "nitpicker_reports.google_sheets:open_spreadsheet"
    assert available_formats() == ["csv", "html", "xlsx"]  # sheets is no --format


def test_the_spreadsheet_reporter_is_the_sheets_entry_point(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "entry_points", _group(
        ("csv", "nitpicker_reports.csv_folder:CsvReporter"),
        (SHEETS, f"{__name__}:fake_opener")))
    OPENED.clear()

    def waits(_seconds: float, _status: int) -> None: ...

    url = "https://docs.google.com/spreadsheets/d/abc/edit"
    assert open_spreadsheet(url, Path("key.json"), waits) == "the spreadsheet reporter"
    assert OPENED == [(url, Path("key.json"), waits)]
    assert available_formats() == ["csv"]
    with pytest.raises(ReportError, match=r"^Unknown report format: 'sheets' \(choose from csv\)"):
        load_reporter(SHEETS)


def test_no_spreadsheet_reporter_installed_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "entry_points", _group(
        ("csv", "nitpicker_reports.csv_folder:CsvReporter")))
    with pytest.raises(ReportError, match="^--sheet: no spreadsheet reporter is installed"):
        open_spreadsheet("https://docs.google.com/spreadsheets/d/abc/edit", Path("k.json"),
                         lambda _s, _c: None)
