"""``nitpicker diff --format html``: the comparison as one self-contained page (no script, no
network), in the HTML report's look (:mod:`nitpicker.report.html_page`): its style sheet, its
table cells and its SVG bar charts (:func:`nitpicker.report.svg.bar_chart`).

At the top, two charts: the count of every category with items, and the findings new, fixed
and persisting. Then one table per category with every item. The tables are streamed into a
temporary file while the counts are gathered, then copied after the charts: memory stays flat.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from html import escape
from typing import IO, TYPE_CHECKING, Any, Final

from nitpicker.cli.diff_format import findings_note, no_common_note
from nitpicker.query.diff import CATEGORIES
from nitpicker.query.report_rows import Cell
from nitpicker.report.html_page import STYLE, table_cell
from nitpicker.report.svg import bar_chart

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from nitpicker.query.diff import ArchiveDiff

__all__ = ["CHART_IDS", "write_html"]

CHART_IDS: Final = ("chart-diff-categories", "chart-diff-findings")

_FINDINGS: Final = ("violations_new", "violations_fixed", "violations_persisting")
_RED: Final = frozenset({"pages_removed", "new_4xx", "new_5xx", "links_broken",
                         "resources_failing", "images_lost_alt", "violations_new"})
"""Categories whose items are shown as errors (red cells), as the report marks them."""

_EXTRA_STYLE: Final = "p.note{color:#555}"


def _cell(value: Any, error: bool) -> str:
    if isinstance(value, (bool, dict, list)):
        value = json.dumps(value)
    return str(table_cell(Cell(value, error=error)))


def _table(out: IO[str], name: str, fields: tuple[str, ...],
           items: Iterator[dict[str, Any]]) -> int:
    out.write(f'<section id="diff-{escape(name)}"><h2>{escape(name)} '
              f'<span class="count"></span></h2><div class="table-wrap"><table><thead><tr>')
    out.write("".join(f"<th>{escape(field)}</th>" for field in fields))
    out.write("</tr></thead><tbody>")
    count = 0
    error = name in _RED
    for item in items:
        count += 1
        out.write("<tr>" + "".join(_cell(item.get(field), error) for field in fields) + "</tr>")
    out.write(f"</tbody></table></div><p>{count} item{'s' if count != 1 else ''}</p></section>")
    return count


def write_html(diff: ArchiveDiff, out: IO[str],
               read: Callable[[ArchiveDiff, str], Iterator[dict[str, Any]]]) -> None:
    """The page: ``read(diff, category)`` gives each category's items (the caller counts and
    gates them as they pass)."""
    counts: dict[str, int] = {}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as tables:
        for category in CATEGORIES:
            counts[category.name] = _table(tables, category.name, category.fields,
                                           read(diff, category.name))
        title = f"nitpicker diff: {diff.old['base_url']} → {diff.new['base_url']}"
        out.write(f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
                  f"<title>{escape(title)}</title><style>{STYLE}{_EXTRA_STYLE}</style></head>"
                  f"<body><h1>{escape(title)}</h1>")
        for side in ("old", "new"):
            info = getattr(diff, side)
            out.write(f"<p>{side.upper()}: {escape(info['path'])} ({escape(info['base_url'])}, "
                      f"{escape(info['created_at'])})</p>")
        notes = [note for note in (no_common_note(diff), findings_note(diff)) if note]
        out.writelines(f'<p class="note">{escape(note)}</p>' for note in notes)
        out.write(f"<p>pages: {diff.common_pages} in both, {counts['pages_added']} added, "
                  f"{counts['pages_removed']} removed</p>")
        out.write('<nav><a href="#charts">Charts</a>')
        out.writelines(f'<a href="#diff-{name}">{name} ({count})</a>'
                       for name, count in counts.items())
        out.write("</nav>")
        changed = [(name, count) for name, count in counts.items()
                   if count and name not in _FINDINGS]
        findings = [(name, counts[name]) for name in _FINDINGS if counts[name]]
        figures = (
            ("chart-diff-categories", "What changed (items per category)", changed,
             "Nothing changed"),
            ("chart-diff-findings", "Findings: new, fixed, persisting", findings,
             "No findings compared (no analyzer ran on both archives, or nothing found)"),
        )
        out.write('<section id="charts"><h2>Charts</h2><div class="charts">')
        out.writelines(f"<figure><figcaption>{escape(caption)}</figcaption>"
                       f"{bar_chart(chart_id, caption, bars, empty)}</figure>"
                       for chart_id, caption, bars, empty in figures)
        out.write("</div></section>")
        tables.seek(0)
        shutil.copyfileobj(tables, out)
    out.write("</body></html>\n")
