"""The Issues sheet, the report's first (issue 26): the audit, one row an issue.

The rows are :func:`~nitpicker.query.issues.issues_overview`'s items, in its order (most
urgent first, then by URLs), the same as ``nitpicker query FILE issues`` lists: the site
checks' issues and the analyzers' rules that found something. Like the Summary, the sheet is
the archive's, also in a report of listed pages (``report --urls``).

Its ``Priority`` column is coloured by priority in every format that has colours
(:data:`PRIORITY_COLOURS`: the viewer's badges); an archive the checks never ran on, and one
written before the findings model, has an empty sheet (headers only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query.checks import PRIORITIES, check_by_id
from nitpicker.query.issues import has_findings, issues_overview
from nitpicker.query.report_rows.cells import CHUNK_ROWS, Chunk, SheetSpec, stream

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["FINDINGS_HEADERS", "ISSUES", "PRIORITY_COLOURS", "findings_rows", "issues_count",
           "issues_rows"]

ISSUES: Final = SheetSpec(
    "Issues",
    ("Priority", "Issue", "ID", "Category", "URLs", "Findings", "Source", "Why it matters",
     "How to fix"),
    freeze_rows=1, priority_column=0,
)

PRIORITY_COLOURS: Final = {
    "critical": ("#B71C1C", "#FFFFFF"),
    "high": ("#E65100", "#FFFFFF"),
    "medium": ("#F9A825", "#1D1D1D"),
    "low": ("#1565C0", "#FFFFFF"),
    "info": ("#607D8B", "#FFFFFF"),
}
"""Each priority's (background, text) colour, as RGB hex: the viewer's badges."""

FINDINGS_HEADERS: Final = ("Priority", "Issue", "ID", "URL", "Element", "Location", "Message")
"""Every finding of every issue, one a row (the HTML report's ``findings.csv``)."""

_ISSUES_COUNT: Final = "SELECT count(DISTINCT rule) FROM findings"
_RANK: Final = "CASE priority " + " ".join(
    f"WHEN '{name}' THEN {rank}" for rank, name in enumerate(PRIORITIES)) + " END"
_FINDINGS: Final = f"""SELECT priority, rule, url, element, location, message FROM findings
    ORDER BY {_RANK}, rule, url, element, location, source_id"""
_ALL: Final = 1_000_000
"""More issues than an archive has (36 checks and the analyzers' rules)."""


def issues_count(conn: sqlite3.Connection) -> int:
    """The rows of the sheet: one an issue with findings."""
    if not has_findings(conn):
        return 0
    return int(conn.execute(_ISSUES_COUNT).fetchone()[0])


def issues_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """One row an issue, most urgent first (:func:`issues_overview`'s order)."""
    items = issues_overview(conn, limit=_ALL)["items"]
    for start in range(0, len(items), chunk_rows):
        yield Chunk([[item["priority"], item["title"], item["id"], item["category"],
                      item["urls"], item["findings"], item["source"], item["explanation"],
                      item["fix"]] for item in items[start:start + chunk_rows]])


def findings_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
                  ) -> Iterator[list[list[object]]]:
    """Every finding (:data:`FINDINGS_HEADERS`), most urgent priority first, then by issue
    and URL; none when the archive has no findings model."""
    if not has_findings(conn):
        return
    titles: dict[str, str] = {}
    for rows in stream(conn, _FINDINGS, (), chunk_rows):
        out: list[list[object]] = []
        for priority, rule, url, element, location, message in rows:
            if rule not in titles:
                check = check_by_id(rule)
                titles[rule] = check.title if check is not None else rule
            out.append([priority, titles[rule], rule, url, element, location, message])
        yield out
