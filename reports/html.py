"""The ``html`` reporter: a report to hand a client (issue 26), bounded in size.

On top, the **executive summary** (the site, when it was crawled, its pages, the issues by
priority, a score per category, the top issues) and the **issues**, each with why it matters,
how to fix it and its first findings (:mod:`nitpicker_reports.html_audit`: the Issues sheet).
Then inline SVG charts: status codes, pages by depth, response sizes, response times (request
to response headers, migration ``0014_response_time``; empty for an older archive), top
violations by rule and by page (empty when the archive was never analysed), pages with the
most broken links. Then one table per sheet (:mod:`nitpicker_reports.html_tables`): red cells
for errors, links as links, notes as the cell's tooltip (``title``), the first rows only,
the whole of a longer table as a CSV file in the folder ``<name>-tables/`` beside the report,
linked. No script, no CDN, nothing fetched when it opens: a report whose tables are shown
whole is one file.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final, TextIO

from nitpicker_reports.html_audit import AUDIT_STYLE, write_issues, write_summary
from nitpicker_reports.html_tables import Beside, anchor, write_table
from nitpicker_reports.html_tables import table_cell as _table_cell

from nitpicker.query import charts, crawl_info
from nitpicker.report.html_page import STYLE as PAGE_STYLE
from nitpicker.report.svg import bar_chart

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.query.report_rows import Cell, Sheet, Value
    from nitpicker.report import ReportSource

__all__ = ["CHART_IDS", "STYLE", "HtmlReporter", "table_cell"]

STYLE: Final = PAGE_STYLE + AUDIT_STYLE
"""The report host's page style (:mod:`nitpicker.report.html_page`) and the audit's."""

CHART_IDS: Final = (
    "chart-status",
    "chart-depth",
    "chart-size",
    "chart-response-time",
    "chart-violation-rules",
    "chart-violation-pages",
    "chart-broken-links",
)


ISSUES_SHEET: Final = "Issues"
"""The sheet the executive summary's top issues and the Issues section show."""


class HtmlReporter:
    """``nitpicker report FILE --format html``."""

    def default_path(self, archive: Path) -> Path:
        return archive.with_suffix(".html")

    def files_path(self, path: Path) -> Path:
        """The folder of the tables too long to show whole: ``report-tables/`` beside
        ``report.html``."""
        return path.with_name(f"{path.stem}-tables")

    def write(self, source: ReportSource, path: Path) -> None:
        files = self.files_path(path)
        self.write_beside(source, path, files, files.name)

    def write_beside(self, source: ReportSource, path: Path, files: Path, files_href: str
                     ) -> None:
        beside = Beside(files, files_href)
        tables = [sheet for sheet in source.sheets if sheet.name != ISSUES_SHEET]
        issues = _issue_rows(source)
        with path.open("w", encoding="utf-8") as out:
            _head(out, source, tables, issues is not None)
            write_summary(out, source, issues)
            if issues is not None:
                write_issues(out, source, issues, beside)
            _charts(out, source)
            for sheet in tables:
                write_table(out, sheet, source, beside)
            out.write("</body></html>\n")
        beside.finish()


def _issue_rows(source: ReportSource) -> list[list[Value]] | None:
    """The Issues sheet's rows (``None``: the sheet is not reported)."""
    for sheet in source.sheets:
        if sheet.name == ISSUES_SHEET:
            return [list(row) for chunk in source.chunks(sheet) for row in chunk.values]
    return None


def _head(out: TextIO, source: ReportSource, tables: list[Sheet], issues: bool) -> None:
    info = crawl_info(source.conn)
    title = f"Site audit: {info.base_url}"
    out.write(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>Crawled from {escape(', '.join(info.roots))} by"
        ' nitpicker.</p><nav><a href="#overview">Executive summary</a>'
    )
    if issues:
        out.write('<a href="#issues">Issues</a>')
    out.write('<a href="#charts">Charts</a>')
    out.writelines(
        f'<a href="#{anchor(sheet.name)}">{escape(sheet.name)}</a>' for sheet in tables
    )
    out.write("</nav>")


def _charts(out: TextIO, source: ReportSource) -> None:
    conn, listed = source.conn, source.listed
    figures = (
        ("chart-status", "Status codes (pages)",
         charts.status_distribution(conn, listed=listed), ""),
        ("chart-depth", "In-scope pages by depth", charts.pages_by_depth(conn, listed=listed),
         ""),
        ("chart-size", "In-scope pages by response size",
         charts.size_distribution(conn, listed=listed), ""),
        (
            "chart-response-time",
            "In-scope pages by response time",
            charts.response_time_distribution(conn, listed=listed),
            "No response times (recorded by crawls since nitpicker 0.1's 0014_response_time)",
        ),
        (
            "chart-violation-rules",
            "Top violations by rule",
            charts.top_violation_rules(conn, listed=listed),
            "No violations (the archive has not been analysed, or nothing was found)",
        ),
        (
            "chart-violation-pages",
            "Pages with the most violations",
            charts.top_violation_pages(conn, listed=listed),
            "No violations (the archive has not been analysed, or nothing was found)",
        ),
        (
            "chart-broken-links",
            "Pages with the most broken links",
            charts.broken_links_by_source(conn, listed=listed),
            "No broken links",
        ),
    )
    out.write('<section id="charts"><h2>Charts</h2><div class="charts">')
    out.writelines(
        f"<figure><figcaption>{escape(caption)}</figcaption>"
        f"{bar_chart(chart_id, caption, bars, empty or 'No data')}</figure>"
        for chart_id, caption, bars, empty in figures
    )
    out.write("</div></section>")


def table_cell(cell: Cell) -> str:
    """One cell as the report's tables write it (``<td>``: red when an error, its note the
    tooltip, a web URL a link): for other pages in the report's look (``nitpicker diff``)."""
    return _table_cell(cell)
