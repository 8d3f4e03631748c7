"""The views of the site as a whole: its directory tree, its link graph, its technologies.

Each a ``(archive, params) -> (template, data)`` view over the query library, as
:mod:`nitpicker.viewer.views` (which lists them in ``VIEWS``). A link graph is computed once
per archive and folder (the archive is read-only) and kept, the last ``GRAPHS_KEPT``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final, Protocol

from nitpicker.query.site_graph import MAX_EDGES, MAX_NODES, site_graph
from nitpicker.query.site_tree import folder_tree
from nitpicker.query.technologies import get_technologies, list_technology_pages
from nitpicker.viewer.graph import draw_graph, mix_bar
from nitpicker.viewer.params import int_param, text_param

if TYPE_CHECKING:
    import sqlite3
    from collections import OrderedDict
    from collections.abc import Mapping

    from nitpicker.query.site_graph import SiteGraph

__all__ = ["graph_view", "technologies_view", "tree_view"]

ROWS: Final = 50
"""Rows of a list on one page of a view."""
GRAPHS_KEPT: Final = 32
_PAGE_MAX: Final = 10**12


class SiteArchive(Protocol):
    """What these views use of an open archive (:class:`~nitpicker.viewer.views.OpenArchive`)."""

    index: int
    conn: sqlite3.Connection
    graphs: OrderedDict[tuple[str | None, str], SiteGraph]


def _page(params: Mapping[str, str]) -> int:
    number = int_param(params, "page", 1, 1, _PAGE_MAX)
    assert number is not None  # a default was given
    return number


def _origin(params: Mapping[str, str]) -> str | None:
    return text_param(params, "origin", max_length=500) or None


def tree_view(archive: SiteArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """One folder of the site: its sub-folders with their page counts and status mix (each a
    link down), then its own pages, one page of them (``?folder=/blog/&origin=&page=``)."""
    path = text_param(params, "folder", max_length=2000) or "/"
    number = _page(params)
    tree = folder_tree(archive.conn, path, origin=_origin(params), limit=ROWS,
                       offset=(number - 1) * ROWS)
    bars = {folder["path"]: dataclasses.asdict(mix_bar(folder["status"]))
            for folder in tree["folders"]}
    return "tree.html", {"tree": tree, "bars": bars, "page": number,
                         "total_bar": dataclasses.asdict(mix_bar(tree["status"], 320))}


def graph_view(archive: SiteArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The link graph under a folder (``?folder=/blog/&origin=``): its pages, or past
    ``MAX_NODES`` pages its folders, drawn as server-side SVG."""
    folder = text_param(params, "folder", max_length=2000) or "/"
    origin = _origin(params)
    key = (origin, folder)
    graph = archive.graphs.get(key)
    if graph is None:
        graph = site_graph(archive.conn, folder, origin=origin)
        archive.graphs[key] = graph
        while len(archive.graphs) > GRAPHS_KEPT:
            archive.graphs.popitem(last=False)
    archive.graphs.move_to_end(key)
    drawn = draw_graph(graph, f"/a/{archive.index}/")
    return "graph.html", {"graph": graph, "drawing": dataclasses.asdict(drawn),
                          "max_nodes": MAX_NODES, "max_edges": MAX_EDGES}


def technologies_view(archive: SiteArchive, params: Mapping[str, str]
                      ) -> tuple[str, dict[str, Any]]:
    """The technologies the pages use, most pages first (``?category=``); ``?name=`` one
    technology's pages."""
    number = _page(params)
    offset = (number - 1) * ROWS
    name = text_param(params, "name", max_length=200)
    category = text_param(params, "category", max_length=200) or None
    overview = get_technologies(archive.conn, category=category,
                                limit=ROWS if not name else 1000, offset=0 if name else offset)
    pages = (list_technology_pages(archive.conn, name, limit=ROWS, offset=offset)
             if name else None)
    return "technologies.html", {"technologies": overview, "name": name, "category": category,
                                 "pages": pages, "page": number}
