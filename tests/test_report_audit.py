"""Issue 26's report, "an audit, not a data dump": the Issues sheet first in every format (its
rows those of ``query issues``), the HTML report's executive summary, issues and bounded
tables (the rest as CSV beside it), the XLSX formatting read back with openpyxl, the scores.

The archives are generated (``fixtures/report_archive.py``: pages with a navigation, many
external links, response headers, the site checks run), as ``bench/report_size.py`` uses.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from fixtures.report_archive import build_report_archive
from nitpicker.archive.schema import migrate
from nitpicker.query import open_archive
from nitpicker.query.report_rows import SHEET_NAMES, select_sheets
from nitpicker.query.report_rows.issues_sheet import FINDINGS_HEADERS, PRIORITY_COLOURS
from nitpicker.query.scores import category_scores, score_of
from nitpicker.query.summary import summary
from nitpicker.report import ReportError, ReportSource, write_report
from tests.helpers import run

ISSUE_COLUMNS = ("priority", "title", "id", "category", "urls", "findings", "source",
                 "explanation", "fix")
HTML_BOUND = 5_000_000
"""Issue 26's target for 500 pages and 4,000 external links."""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 pages, 400 external links: every sheet has rows, the tables fit inline."""
    path = tmp_path_factory.mktemp("small") / "small.nitpicker"
    build_report_archive(path, pages=60, external_links=400)
    return path


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The issue's size: 500 pages, 4,000 external links (a 24 MB HTML report before)."""
    path = tmp_path_factory.mktemp("large") / "site.nitpicker"
    build_report_archive(path, pages=500, external_links=4_000)
    return path


def _issues(archive: Path, tmp_path: Path) -> list[list[Any]]:
    """``nitpicker query FILE issues`` as rows of the Issues sheet's columns."""
    done = run("query", str(archive), "issues", "--limit", "1000", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["items"]
    assert len(items) > 5  # the generated site has issues of several priorities
    return [[item[key] for key in ISSUE_COLUMNS] for item in items]


def _pages(archive: Path) -> int:
    """The in-scope HTML pages (the 60 pages and the 404s among them)."""
    conn = open_archive(archive)
    try:
        return summary(conn).internal_pages
    finally:
        conn.close()


def _report(archive: Path, tmp_path: Path, fmt: str, out: Path, *more: str) -> None:
    done = run("report", str(archive), "--format", fmt, "-o", str(out), "--silent", *more,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- the Issues sheet ---------------------------------------------------------------------------


def test_issues_sheet_first_in_xlsx_with_the_rows_of_query_issues(small: Path,
                                                                  tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "report.xlsx"
    _report(small, tmp_path, "xlsx", out)
    workbook = openpyxl.load_workbook(out)
    assert workbook.sheetnames == [*SHEET_NAMES, "Notes"]
    assert workbook.sheetnames[0] == "Issues"
    header, *rows = [list(row) for row in workbook["Issues"].iter_rows(values_only=True)]
    assert header == ["Priority", "Issue", "ID", "Category", "URLs", "Findings", "Source",
                      "Why it matters", "How to fix"]
    assert rows == _issues(small, tmp_path)


def test_issues_csv_with_the_rows_of_query_issues(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "csv"
    _report(small, tmp_path, "csv", out)
    with (out / "issues.csv").open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert header[:3] == ["Priority", "Issue", "ID"]
    assert rows == [[str(value) for value in row] for row in _issues(small, tmp_path)]


def test_html_begins_with_the_summary_then_the_issues_then_the_tables(small: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    _report(small, tmp_path, "html", out)
    html = out.read_text(encoding="utf-8")
    places = [html.index(marker) for marker in (
        '<section id="overview">', '<section id="issues">', '<section id="charts">',
        '<section id="sheet-page-list">')]
    assert places == sorted(places)
    assert 'id="sheet-issues"' not in html  # the Issues are the issues section, not a table
    issues = _issues(small, tmp_path)
    shown = re.findall(r'<article class="issue" id="issue-([a-z0-9-]+)"><h3><span class='
                       r'"priority p-(\w+)">\w+</span> ([^<]+)</h3>', html)
    assert shown == [(row[2].replace("/", "-"), row[0], row[1]) for row in issues]
    overview = html[places[0]:places[1]]
    assert "https://client.example/" in overview and "2026-12-03 09:00" in overview
    assert f"<dt>Pages</dt><dd>{_pages(small)}</dd>" in overview
    top = re.findall(r'<li><span class="priority p-\w+">\w+</span> <a href="#issue-([a-z0-9-]+)"',
                     overview)
    assert top == [row[2].replace("/", "-") for row in issues[:5]]
    scores = re.findall(r"<tr><td>(\w+)</td><td class=\"score\">(\d+)</td>", overview)
    assert [category for category, _ in scores] == [
        "links", "indexing", "content", "accessibility", "performance", "security", "crawl"]
    assert all(0 <= int(score) <= 100 for _, score in scores)


# -- the HTML report's size ---------------------------------------------------------------------


def test_html_report_is_bounded_and_the_long_tables_are_csv_beside_it(
        large: Path, tmp_path: Path) -> None:
    """500 pages, 4,000 external links: the HTML under 5 MB (24 MB before); each table cut
    short says so and links to its whole CSV, which holds every row of the sheet."""
    out = tmp_path / "site.html"
    _report(large, tmp_path, "html", out)
    assert out.stat().st_size <= HTML_BOUND
    html = out.read_text(encoding="utf-8")
    cuts = re.findall(r'The first ([\d,]+) of ([\d,]+) rows\. The whole table: <a href="'
                      r'site-tables/([a-z-]+\.csv)">', html)
    assert {name for _, _, name in cuts} >= {"links.csv", "referrers-relational-table.csv",
                                             "discrepancies.csv"}
    conn = open_archive(large)
    try:
        counts = {sheet.name.lower().replace(" ", "-") + ".csv": sheet.count(conn)
                  for sheet in select_sheets(None)}
        findings = conn.execute("SELECT count(*) FROM findings").fetchone()[0]
    finally:
        conn.close()
    folder = tmp_path / "site-tables"
    for shown, total, name in cuts:
        assert int(shown.replace(",", "")) < int(total.replace(",", "")) == counts[name]
        with (folder / name).open(encoding="utf-8", newline="") as handle:
            assert sum(1 for _ in csv.reader(handle)) == counts[name] + 1, name
    # every finding of every issue is beside it too, the issues showing their first ten
    with (folder / "findings.csv").open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert tuple(header) == FINDINGS_HEADERS and len(rows) == findings
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        {"findings.csv", *(name for _, _, name in cuts)})  # a table shown whole has no file


def test_a_table_shown_whole_leaves_the_report_one_file(large: Path, tmp_path: Path) -> None:
    out = tmp_path / "summary.html"
    _report(large, tmp_path, "html", out, "--only", "Summary")
    assert not (tmp_path / "summary-tables").exists()
    assert '<section id="sheet-summary">' in out.read_text(encoding="utf-8")


def test_the_folder_beside_is_never_overwritten(small: Path, tmp_path: Path) -> None:
    (tmp_path / "report-tables").mkdir()
    (tmp_path / "report-tables" / "mine.txt").write_text("keep", encoding="utf-8")
    done = run("report", str(small), "--format", "html", "-o", str(tmp_path / "report.html"),
               "--silent", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        (f"Error: Output path exists, not overwritten: {tmp_path / 'report-tables'} (the folder"
        " of the report's tables beside report.html)")]
    assert not (tmp_path / "report.html").exists()
    assert [p.name for p in (tmp_path / "report-tables").iterdir()] == ["mine.txt"]


def test_a_failed_html_report_leaves_neither_file_nor_folder(
        large: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nitpicker_reports import html as html_reporter

    written: list[str] = []
    real = html_reporter.write_table

    def failing(out: Any, sheet: Any, source: Any, beside: Any) -> None:
        if len(written) == 3:  # after three tables, two of them cut (their CSV files written)
            raise OSError(28, "No space left on device")
        written.append(sheet.name)
        real(out, sheet, source, beside)

    monkeypatch.setattr(html_reporter, "write_table", failing)
    conn = open_archive(large)
    try:
        with pytest.raises(OSError):
            write_report(html_reporter.HtmlReporter(), ReportSource(conn, select_sheets(None)),
                         tmp_path / "site.html")
    finally:
        conn.close()
    assert written == ["Page List", "Links", "Resources"]
    assert list(tmp_path.iterdir()) == []


def test_write_report_refuses_a_folder_that_appears(small: Path, tmp_path: Path) -> None:
    from nitpicker_reports.html import HtmlReporter

    conn = open_archive(small)
    try:
        (tmp_path / "site-tables").mkdir()
        with pytest.raises(ReportError, match="site-tables"):
            write_report(HtmlReporter(), ReportSource(conn, select_sheets(["Summary"])),
                         tmp_path / "site.html")
    finally:
        conn.close()
    assert [p.name for p in tmp_path.iterdir()] == ["site-tables"]


# -- the XLSX formatting ------------------------------------------------------------------------


def test_xlsx_is_formatted_to_hand_over(small: Path, tmp_path: Path) -> None:
    """Every worksheet: its header row frozen, an autofilter over all its rows, its column
    widths set; URL columns are links; the Issues' priorities coloured."""
    openpyxl = pytest.importorskip("openpyxl")
    from openpyxl.utils import get_column_letter

    out = tmp_path / "report.xlsx"
    _report(small, tmp_path, "xlsx", out)
    workbook = openpyxl.load_workbook(out)
    for sheet in workbook.worksheets:
        rows, columns = sheet.max_row, sheet.max_column
        assert sheet.freeze_panes is not None and int(sheet.freeze_panes[1:]) >= 2, sheet.title
        assert sheet.auto_filter.ref == f"A1:{get_column_letter(columns)}{rows}", sheet.title
        widths = {}
        for dimension in sheet.column_dimensions.values():
            for column in range(dimension.min or 0, (dimension.max or 0) + 1):
                widths[column] = dimension.width
        assert all(widths.get(c) for c in range(1, columns + 1)), (sheet.title, widths)
    issues = workbook["Issues"]
    assert issues.column_dimensions["B"].width > issues.column_dimensions["E"].width  # title
    for (priority,) in issues.iter_rows(min_row=2, max_col=1, values_only=True):
        assert priority in PRIORITY_COLOURS
    for row in issues.iter_rows(min_row=2, max_col=1):
        cell = row[0]
        background, text = PRIORITY_COLOURS[cell.value]
        assert cell.fill.fgColor.rgb == "FF" + background[1:]
        assert cell.font.color.rgb == "FF" + text[1:] and cell.font.bold
    linked = {"Resources": "A", "Images": "A", "Discrepancies": "B", "Page List": "C",
              "Links": "A"}
    for name, column in linked.items():
        cell = workbook[name][f"{column}2"]
        assert str(cell.value).startswith('=HYPERLINK("https://client.example/'), (name, cell.value)
    discrepancy = workbook["Discrepancies"]["E2"]
    assert str(discrepancy.value).startswith('=HYPERLINK("https://'), discrepancy.value
    assert workbook["Referrers Relational Table"]["A2"].value.startswith("https://")  # text


# -- the scores ---------------------------------------------------------------------------------


def _item(priority: str, urls: int) -> Any:
    return {"priority": priority, "urls": urls}


@pytest.mark.parametrize(("items", "pages", "score"), [
    ([], 100, 100),
    ([_item("critical", 100)], 100, 0),
    ([_item("critical", 500)], 100, 0),  # URLs beyond the pages (external ones) count as all
    ([_item("high", 50)], 100, 75),
    ([_item("medium", 100), _item("low", 100)], 100, 65),
    ([_item("info", 100)], 100, 100),
    ([_item("critical", 100), _item("high", 100)], 100, 0),  # never below 0
    ([_item("high", 3)], 0, 50),  # an archive of no pages: every URL is all of it
])
def test_score_of(items: list[Any], pages: int, score: int) -> None:
    assert score_of(items, pages) == score


def test_category_scores(small: Path, tmp_path: Path) -> None:
    conn = open_archive(small)
    try:
        scores = category_scores(conn)
    finally:
        conn.close()
    by_category = {s["category"]: s for s in scores}
    issues = _issues(small, tmp_path)
    for category, score in by_category.items():
        found = [row for row in issues if row[3] == category]
        assert score["issues"] == len(found)
        assert score["score"] == score_of([_item(r[0], r[4]) for r in found], _pages(small))
    assert by_category["links"]["worst"] == "high" and by_category["links"]["score"] < 100


def test_no_scores_before_the_checks_ran(tmp_path: Path) -> None:
    path = tmp_path / "empty.nitpicker"
    conn = sqlite3.connect(path)
    migrate(conn)
    with conn:
        conn.execute("INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
                     " VALUES (1, '1', 'x', 'https://x.example/', '[]', '{}', '2026-12-03')")
    conn.close()
    conn = open_archive(path)
    try:
        assert category_scores(conn) == []
    finally:
        conn.close()
