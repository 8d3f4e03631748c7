"""Inline SVG charts: the geometry of a bar chart, computed here, drawn by a template.

No script and no CDN: a chart is a few ``<rect>`` and ``<text>`` elements whose coordinates
come from :func:`bar_chart`. Colours are SVG presentation attributes, allowed by the viewer's
CSP (which forbids inline ``style``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bar", "BarChart", "bar_chart", "status_colour"]

_BAR_HEIGHT = 22
_GAP = 6
_LABEL_WIDTH = 90
_PLOT_WIDTH = 420


@dataclass(frozen=True)
class Bar:
    label: str
    count: int
    y: int
    width: int
    colour: str


@dataclass(frozen=True)
class BarChart:
    bars: tuple[Bar, ...]
    width: int
    height: int
    label_width: int
    bar_height: int


def status_colour(status: int | None) -> str:
    """The colour of a status-code bar: green 2xx, blue 3xx, orange 4xx, red 5xx and errors."""
    if status is None:
        return "#999999"
    if 200 <= status < 300:
        return "#2e7d32"
    if 300 <= status < 400:
        return "#1565c0"
    if 400 <= status < 500:
        return "#ef6c00"
    return "#c62828"


def bar_chart(rows: list[tuple[str, int, str]]) -> BarChart:
    """A horizontal bar chart of ``(label, count, colour)`` rows, bars scaled to the largest."""
    largest = max((count for _, count, _ in rows), default=0)
    bars = tuple(
        Bar(label, count, index * (_BAR_HEIGHT + _GAP),
            max(1, round(_PLOT_WIDTH * count / largest)) if largest and count else 0, colour)
        for index, (label, count, colour) in enumerate(rows)
    )
    height = max(len(bars) * (_BAR_HEIGHT + _GAP), _BAR_HEIGHT)
    return BarChart(bars, _LABEL_WIDTH + _PLOT_WIDTH + 80, height, _LABEL_WIDTH, _BAR_HEIGHT)
