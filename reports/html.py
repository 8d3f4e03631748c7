"""The ``html`` reporter: one self-contained HTML file (no script, no CDN, no network).

At the top, inline SVG charts: status codes, pages by depth, response sizes, response times
(request to response headers, migration ``0014_response_time``; empty for an older archive),
top violations by rule and by page (empty when the archive was never analysed), pages with
the most broken links. Then one table per sheet, streamed row by row into the file: red cells
for errors, links as links, notes as the cell's tooltip (``title``).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final, TextIO

from nitpicker_reports.svg import bar_chart

from nitpicker.query import charts, crawl_info

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.query.report_rows import Cell, Sheet
    from nitpicker.report import ReportSource

__all__ = ["CHART_IDS", "STYLE", "HtmlReporter", "table_cell"]

STYLE: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
nav a{margin-right:.8rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:1rem}
svg.chart{max-width:100%;height:auto}
figure{margin:0;border:1px solid #ddd;padding:.5rem}figcaption{font-weight:600}
svg.chart rect{fill:#3b6fb6}svg.chart text{font-size:12px;fill:#222}
svg.chart text.empty{fill:#777;font-style:italic}
.table-wrap{overflow:auto;max-height:70vh;border:1px solid #ddd}
table{border-collapse:collapse;font-size:12px}
th{position:sticky;top:0;background:#eee;text-align:left}
th,td{border:1px solid #ddd;padding:2px 6px;white-space:nowrap;max-width:40em;
overflow:hidden;text-overflow:ellipsis;vertical-align:top}
td.error{background:#e60000;color:#fff}td.error a{color:#fff}
td[title]{text-decoration:underline dotted}
"""

CHART_IDS: Final = (
    "chart-status",
    "chart-depth",
    "chart-size",
    "chart-response-time",
    "chart-violation-rules",
    "chart-violation-pages",
    "chart-broken-links",
)


class HtmlReporter:
    """``nitpicker report FILE --format html``."""

    def default_path(self, archive: Path) -> Path:
        return archive.with_suffix(".html")

    def write(self, source: ReportSource, path: Path) -> None:
        with path.open("w", encoding="utf-8") as out:
            _head(out, source)
            _charts(out, source)
            for sheet in source.sheets:
                _table(out, sheet, source)
            out.write("</body></html>\n")


def _anchor(name: str) -> str:
    return "sheet-" + name.lower().replace(" ", "-")


def _head(out: TextIO, source: ReportSource) -> None:
    info = crawl_info(source.conn)
    title = f"nitpicker report: {info.base_url}"
    out.write(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>Crawled {escape(info.created_at)} · roots: "
        f'{escape(", ".join(info.roots))}</p><nav><a href="#charts">Charts</a>'
    )
    out.writelines(
        f'<a href="#{_anchor(sheet.name)}">{escape(sheet.name)}</a>' for sheet in source.sheets
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


def _table(out: TextIO, sheet: Sheet, source: ReportSource) -> None:
    spec = sheet.spec(source.conn)
    hidden = set(spec.hidden_columns)
    out.write(
        f'<section id="{_anchor(spec.name)}"><h2>{escape(spec.name)}</h2>'
        '<div class="table-wrap"><table><thead><tr>'
    )
    out.write(
        "".join(f"<th>{escape(h)}</th>" for i, h in enumerate(spec.headers) if i not in hidden)
    )
    out.write("</tr></thead><tbody>")
    out.writelines(
        "".join(
            "<tr>" + "".join(_cell(c) for i, c in enumerate(row) if i not in hidden) + "</tr>"
            for row in chunk
        )
        for chunk in source.rows(sheet)
    )
    out.write("</tbody></table></div></section>")


def _cell(cell: Cell) -> str:
    attrs = ' class="error"' if cell.error else ""
    if cell.note:
        attrs += f' title="{escape(cell.note)}"'
    text = "" if cell.value is None else escape(str(cell.value))
    link = cell.link or (cell.value if isinstance(cell.value, str) else None)
    if link and link.startswith(("http://", "https://")):  # every web URL is a link here
        text = f'<a href="{escape(link)}">{text}</a>'
    return f"<td{attrs}>{text}</td>"


def table_cell(cell: Cell) -> str:
    """One cell as the report's tables write it (``<td>``: red when an error, its note the
    tooltip, a web URL a link): for other pages in the report's look (``nitpicker diff``)."""
    return _cell(cell)
