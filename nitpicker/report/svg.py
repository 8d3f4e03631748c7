"""Inline SVG bar charts for the report's HTML pages (the html reporter's, ``nitpicker diff --format
html``): no script, no network, readable without CSS."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["bar_chart"]

WIDTH: Final = 720
LABEL_WIDTH: Final = 300
BAR_HEIGHT: Final = 20
GAP: Final = 6
MAX_LABEL: Final = 44


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else f"…{label[-(MAX_LABEL - 1) :]}"


def bar_chart(
    chart_id: str, title: str, bars: Sequence[tuple[str, int]], empty_text: str = "No data"
) -> str:
    """A horizontal bar chart as one ``<svg>`` element; an empty one says ``empty_text``."""
    if not bars:
        return (
            f'<svg class="chart" id="{escape(chart_id)}" data-bars="0" role="img" '
            f'width="{WIDTH}" height="40" viewBox="0 0 {WIDTH} 40">'
            f"<title>{escape(title)}</title>"
            f'<text x="10" y="25" class="empty">{escape(empty_text)}</text></svg>'
        )
    top = max(n for _, n in bars) or 1
    plot = WIDTH - LABEL_WIDTH - 70
    height = len(bars) * (BAR_HEIGHT + GAP) + GAP
    parts = [
        (
            f'<svg class="chart" id="{escape(chart_id)}" data-bars="{len(bars)}" role="img" '
            f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}">'
        ),
        f"<title>{escape(title)}</title>",
    ]
    for index, (label, value) in enumerate(bars):
        y = GAP + index * (BAR_HEIGHT + GAP)
        length = max(1, round(plot * value / top))
        parts.append(
            f'<g class="bar"><title>{escape(label)}: {value}</title>'
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">'
            f"{escape(_short(label))}</text>"
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length}" height="{BAR_HEIGHT}"/>'
            f'<text x="{LABEL_WIDTH + length + 6}" y="{y + 15}">{value}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
