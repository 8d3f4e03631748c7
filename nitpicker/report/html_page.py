"""The look of the report's HTML pages: the html reporter's, and ``nitpicker diff --format html``.

One style sheet (:data:`STYLE`) and one way to write a table cell (:func:`table_cell`); their
charts are :func:`nitpicker.report.svg.bar_chart`. Here in the host, so that a page of the core
shares them without importing a bundled reporter.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nitpicker.query.report_rows import Cell

__all__ = ["STYLE", "table_cell"]

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


def table_cell(cell: Cell) -> str:
    """One cell as the report's tables write it (``<td>``: red when an error, its note the
    tooltip, a web URL a link)."""
    attrs = ' class="error"' if cell.error else ""
    if cell.note:
        attrs += f' title="{escape(cell.note)}"'
    text = "" if cell.value is None else escape(str(cell.value))
    link = cell.link or (cell.value if isinstance(cell.value, str) else None)
    if link and link.startswith(("http://", "https://")):  # every web URL is a link here
        text = f'<a href="{escape(link)}">{text}</a>'
    return f"<td{attrs}>{text}</td>"

