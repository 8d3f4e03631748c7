"""Server-drawn SVG for the Tree and Graph views: the geometry here, the template draws it.

No script (the viewer's CSP allows none): the link graph is laid out radially, a ring per
level (a page's link depth, a folder's depth below the graph's folder), the nodes of a ring
spread evenly in URL order, so a folder's pages sit together; an edge is a straight line, its
width by its link count; a node's size grows with its pages, its colour is its status mix's
(the worst class holding a tenth of its pages or more). Each node is an SVG link: to the page
detail, or to the graph of the folder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nitpicker.viewer.charts import status_colour

if TYPE_CHECKING:
    from nitpicker.query.site_graph import SiteGraph
    from nitpicker.query.site_tree import StatusMix

__all__ = ["DrawnEdge", "DrawnGraph", "DrawnNode", "MixBar", "draw_graph", "mix_bar",
           "mix_colour"]

SIZE: Final = 880
_CENTRE: Final = SIZE / 2
_MARGIN: Final = 70
_LABELS_UP_TO: Final = 60
"""A graph of at most this many nodes shows every node's label; a larger one, on hover."""

_CLASS_STATUS: Final = (("server_error", 500), ("error", -1), ("client_error", 404),
                        ("redirect", 301), ("ok", 200), ("other", None))
"""The status mix's classes, worst first, and a status of each for its colour."""


@dataclass(frozen=True)
class DrawnNode:
    x: float
    y: float
    r: float
    colour: str
    label: str
    title: str
    href: str
    show_label: bool


@dataclass(frozen=True)
class DrawnEdge:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    title: str


@dataclass(frozen=True)
class DrawnGraph:
    size: int
    nodes: tuple[DrawnNode, ...]
    edges: tuple[DrawnEdge, ...]


def mix_colour(mix: StatusMix) -> str:
    """The colour of a status mix: its worst class holding a tenth of its URLs or more."""
    total = sum(mix.values())  # type: ignore[arg-type]
    for key, status in _CLASS_STATUS:
        count = mix[key]  # type: ignore[literal-required]
        if count and count * 10 >= total:
            return status_colour(status)
    return status_colour(None)


@dataclass(frozen=True)
class MixBar:
    """A status mix as a stacked bar: ``(x, width, colour, label)`` segments."""

    width: int
    segments: tuple[tuple[float, float, str, str], ...]


def mix_bar(mix: StatusMix, width: int = 160) -> MixBar:
    total = sum(mix.values()) or 1  # type: ignore[arg-type]
    x = 0.0
    segments = []
    for key, status in reversed(_CLASS_STATUS):
        count = mix[key]  # type: ignore[literal-required]
        if count:
            share = width * count / total
            segments.append((round(x, 2), round(share, 2), status_colour(status),
                             f"{key.replace('_', ' ')}: {count}"))
            x += share
    return MixBar(width, tuple(segments))


def draw_graph(graph: SiteGraph, base: str) -> DrawnGraph:
    """Lay out ``graph``; ``base`` is the archive's viewer path (``/a/0/``)."""
    from urllib.parse import urlencode

    nodes = graph["nodes"]
    if not nodes:
        return DrawnGraph(SIZE, (), ())
    rings: dict[int, list[int]] = {}
    for index, node in enumerate(nodes):
        rings.setdefault(node["level"], []).append(index)
    levels = sorted(rings)
    step = (_CENTRE - _MARGIN) / max(1, len(levels) - (1 if len(rings[levels[0]]) == 1 else 0))
    largest = max((node["pages"] for node in nodes), default=1)
    positions: dict[int, tuple[float, float]] = {}
    for ring, level in enumerate(levels):
        members = sorted(rings[level], key=lambda i: nodes[i]["id"])
        radius = 0.0 if ring == 0 and len(members) == 1 else step * (ring + (
            0 if len(rings[levels[0]]) == 1 else 1))
        for place, index in enumerate(members):
            angle = 2 * math.pi * place / len(members) - math.pi / 2 + ring * 0.3
            positions[index] = (round(_CENTRE + radius * math.cos(angle), 1),
                                round(_CENTRE + radius * math.sin(angle), 1))
    show = len(nodes) <= _LABELS_UP_TO
    drawn_nodes = []
    for index, node in enumerate(nodes):
        x, y = positions[index]
        if node["is_folder"]:
            href = f"{base}graph?{urlencode({'folder': node['id'], 'origin': graph['origin']})}" \
                if node["id"] != "…" else ""
            title = f"{node['label']}: {node['pages']} pages"
        else:
            href = f"{base}page?{urlencode({'url': node['id']})}"
            title = f"{node['label']} — {node['id']}"
        radius = 4 + 12 * math.sqrt(node["pages"] / largest) if node["is_folder"] else 6
        drawn_nodes.append(DrawnNode(x, y, round(radius, 1), mix_colour(node["status"]),
                                     node["label"][:40], title, href, show))
    heaviest = max((edge["links"] for edge in graph["edges"]), default=1)
    drawn_edges = tuple(
        DrawnEdge(*positions[edge["source"]], *positions[edge["target"]],
                  round(0.6 + 3 * edge["links"] / heaviest, 2),
                  f"{nodes[edge['source']]['label']} → {nodes[edge['target']]['label']}:"
                  f" {edge['links']} links")
        for edge in graph["edges"])
    return DrawnGraph(SIZE, tuple(drawn_nodes), drawn_edges)
