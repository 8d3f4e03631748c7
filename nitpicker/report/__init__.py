"""The reporter host: finds a reporter by format and writes a report without half-files.

Reporters are discovered through the ``nitpicker.report`` entry-point group, the bundled ones
(``xlsx``, ``csv``, ``html``, and ``sheets``, the Google Sheets one of ``--sheet URL``, in the
top-level ``reports/`` directory, installed as ``nitpicker_reports``) exactly like a third
party's. Every reporter takes its rows from :mod:`nitpicker.query.report_rows`; the HTML pages share
their look (:mod:`nitpicker.report.html_page`, :mod:`nitpicker.report.svg`).
"""

from __future__ import annotations

from nitpicker.report.host import (
    REPORT_GROUP,
    SHEETS,
    FilesReporter,
    Reporter,
    ReportError,
    ReportSource,
    SpreadsheetReporter,
    available_formats,
    check_output,
    files_path,
    load_reporter,
    open_spreadsheet,
    write_report,
)

__all__ = ["REPORT_GROUP", "SHEETS", "FilesReporter", "ReportError", "ReportSource", "Reporter",
           "SpreadsheetReporter", "available_formats", "check_output", "files_path",
           "load_reporter", "open_spreadsheet", "write_report"]
