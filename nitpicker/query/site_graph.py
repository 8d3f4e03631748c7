"""The internal link graph as the viewer draws it, bounded to what a browser draws smoothly
(the link score's graph, for PageRank, is :mod:`nitpicker.query.link_graph`).

Under one folder of one origin: when it holds at most ``MAX_NODES`` internal HTML pages, the
pages are the nodes and the links between them the edges (a link to a redirect counted to its
destination); past that, the folders are: those at the deepest level below the folder that
still gives at most ``MAX_NODES`` (the largest kept, the rest one ``…`` node), the folder's own
pages one node, and an edge the count of links from a page of one to a page of another. At most
``MAX_EDGES`` edges, the heaviest. Folder-level counts are made in SQL over a temporary table
of the pages' folders (``temp.graph_folders``), so memory holds the graph, not the site.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import INTERNAL_HTML, fetch_all
from nitpicker.query.site_tree import (
    StatusMix,
    add_status,
    crawled_origin,
    empty_mix,
    normalise_folder,
    url_range,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["MAX_EDGES", "MAX_NODES", "GraphEdge", "GraphNode", "SiteGraph", "site_graph"]

MAX_NODES: Final = 150
MAX_EDGES: Final = 600
MAX_LEVEL: Final = 8
"""The deepest folder level a folder-level graph goes down to."""
BATCH: Final = 5000
OTHER: Final = "…"
"""The node of the folders past ``MAX_NODES`` at the first level."""

_PAGES: Final = f"""SELECT p.id, p.url, p.status, p.title, p.depth FROM pages p
WHERE p.is_external = 0 AND p.url >= :low AND p.url < :high AND {INTERNAL_HTML}
ORDER BY p.url"""

_PAGE_EDGES: Final = """SELECT a.page_id, coalesce(h.redirect_dest_id, h.id), count(*)
FROM anchors a JOIN pages h ON h.id = a.href_id
WHERE a.page_id IN (SELECT value FROM json_each(:ids))
  AND coalesce(h.redirect_dest_id, h.id) IN (SELECT value FROM json_each(:ids))
  AND coalesce(h.redirect_dest_id, h.id) != a.page_id
GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2"""

_FOLDER_TABLE: Final = ("CREATE TEMP TABLE IF NOT EXISTS graph_folders"
                        " (page_id INTEGER PRIMARY KEY, folder INTEGER NOT NULL)")
_FOLDER_EDGES: Final = """SELECT s.folder, t.folder, count(*) FROM anchors a
JOIN temp.graph_folders s ON s.page_id = a.page_id JOIN pages h ON h.id = a.href_id
JOIN temp.graph_folders t ON t.page_id = coalesce(h.redirect_dest_id, h.id)
WHERE s.folder != t.folder GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2"""
_FOLDER_INSERT: Final = "INSERT INTO temp.graph_folders(page_id, folder) VALUES (?, ?)"


class GraphNode(TypedDict):
    id: str
    """A page's URL, or a folder's path (``/blog/``)."""
    label: str
    is_folder: bool
    level: int
    """Path segments below the graph's folder (a page: its crawl depth from the folder's
    shallowest page)."""
    pages: int
    """1 for a page; a folder's pages."""
    status: StatusMix


class GraphEdge(TypedDict):
    source: int
    """Index of the linking node in ``nodes``."""
    target: int
    links: int


class SiteGraph(TypedDict):
    origin: str
    folder: str
    kind: str
    """``page`` or ``folder``."""
    pages: int
    """Internal HTML pages under the folder."""
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    edges_total: int
    """Edges before the heaviest ``MAX_EDGES`` were kept."""


def site_graph(conn: sqlite3.Connection, folder: str = "/", *, origin: str | None = None
               ) -> SiteGraph:
    """The link graph under ``folder`` of ``origin`` (default: the first origin)."""
    origin = crawled_origin(conn, origin)
    folder = normalise_folder(folder)
    low, high = url_range(origin + folder)
    rows = fetch_all(conn, f"SELECT count(*) FROM ({_PAGES})", {"low": low, "high": high})
    pages = int(rows[0][0])
    graph: SiteGraph = {"origin": origin, "folder": folder, "kind": "page", "pages": pages,
                        "nodes": [], "edges": [], "edges_total": 0}
    if pages <= MAX_NODES:
        _page_graph(conn, graph, low, high)
    else:
        graph["kind"] = "folder"
        _folder_graph(conn, graph, low, high)
    return graph


def _page_graph(conn: sqlite3.Connection, graph: SiteGraph, low: str, high: str) -> None:
    rows = fetch_all(conn, _PAGES, {"low": low, "high": high})
    shallowest = min((depth for *_, depth in rows if depth is not None), default=0)
    index: dict[int, int] = {}
    prefix = len(graph["origin"]) + len(graph["folder"])
    for page_id, url, status, title, depth in rows:
        mix = empty_mix()
        add_status(mix, status)
        index[page_id] = len(graph["nodes"])
        graph["nodes"].append({"id": url, "label": title or url[prefix:] or "/",
                               "is_folder": False, "level": (depth or 0) - shallowest,
                               "pages": 1, "status": mix})
    edges = fetch_all(conn, _PAGE_EDGES, {"ids": json.dumps(list(index))})
    graph["edges_total"] = len(edges)
    graph["edges"] = [{"source": index[s], "target": index[t], "links": n}
                      for s, t, n in edges[:MAX_EDGES]]


def _folder_paths(conn: sqlite3.Connection, graph: SiteGraph, low: str, high: str
                  ) -> Iterator[tuple[int, int | None, tuple[str, ...]]]:
    """``(page id, status, folder segments below the graph's folder)`` of each page, streamed."""
    prefix = len(graph["origin"]) + len(graph["folder"])
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        for page_id, url, status, _title, _depth in cursor.execute(
                _PAGES, {"low": low, "high": high}):
            yield page_id, status, tuple(url[prefix:].split("?", 1)[0].split("/")[:-1])
    finally:
        cursor.close()


def _folder_graph(conn: sqlite3.Connection, graph: SiteGraph, low: str, high: str) -> None:
    """Two passes over the pages: the level and the largest first-level folders, then each
    page's node (into ``temp.graph_folders``, a batch at a time)."""
    seen: list[set[tuple[str, ...]]] = [set() for _ in range(MAX_LEVEL + 1)]
    sizes: dict[str, int] = {}
    for _page_id, _status, segments in _folder_paths(conn, graph, low, high):
        if segments:
            sizes[segments[0]] = sizes.get(segments[0], 0) + 1
        for depth in range(1, MAX_LEVEL + 1):
            if len(seen[depth]) <= MAX_NODES:
                seen[depth].add(segments[:depth])
    level = 1
    while level < MAX_LEVEL and len(seen[level + 1]) <= MAX_NODES \
            and seen[level + 1] != seen[level]:
        level += 1
    kept = set(sorted(sizes, key=lambda name: (-sizes[name], name))[:MAX_NODES - 2])
    node_of: dict[tuple[str, ...], int] = {}
    conn.execute(_FOLDER_TABLE)
    try:
        batch: list[tuple[int, int]] = []
        for page_id, status, segments in _folder_paths(conn, graph, low, high):
            key = (OTHER,) if segments and segments[0] not in kept else segments[:level]
            node = node_of.get(key)
            if node is None:
                node = node_of[key] = len(graph["nodes"])
                graph["nodes"].append({
                    "id": graph["folder"] + "".join(f"{s}/" for s in key) if key[:1] != (OTHER,)
                    else OTHER, "label": "/".join(key) + "/" if key else "./",
                    "is_folder": True, "level": len(key), "pages": 0, "status": empty_mix()})
            graph["nodes"][node]["pages"] += 1
            add_status(graph["nodes"][node]["status"], status)
            batch.append((page_id, node))
            if len(batch) >= BATCH:
                conn.executemany(_FOLDER_INSERT, batch)
                batch.clear()
        conn.executemany(_FOLDER_INSERT, batch)
        edges = fetch_all(conn, _FOLDER_EDGES)
    finally:
        conn.execute("DROP TABLE temp.graph_folders")
    graph["edges_total"] = len(edges)
    graph["edges"] = [{"source": s, "target": t, "links": n} for s, t, n in edges[:MAX_EDGES]]
