"""The reporter host: finds a reporter by format and writes a report without half-files.

Reporters are discovered through the ``nitpicker.report`` entry-point group, the bundled ones
(``xlsx``, ``csv``, ``html`` in the top-level ``reports/`` directory, installed as
``nitpicker_reports``) exactly like a third party's. Every reporter takes its rows from
:mod:`nitpicker.query.report_rows`.
"""

from __future__ import annotations

from nitpicker.report.host import (
    REPORT_GROUP,
    Reporter,
    ReportError,
    ReportSource,
    available_formats,
    check_output,
    load_reporter,
    write_report,
)

__all__ = ["REPORT_GROUP", "ReportError", "ReportSource", "Reporter", "available_formats",
           "check_output", "load_reporter", "write_report"]
