"""The in-scope link graph and its PageRank: each page's **link score**.

The graph's nodes are the internal HTML pages that answered 2xx; its edges the links between
them, each pair of pages once (a page that links to another twice passes it no more), a link
to a redirect counted as one to where the redirect leads, a page's link to itself left out,
and no edge out of a page whose robots meta says ``nofollow``. :func:`read_link_graph` reads
it (the anchors as two integer columns a range of pages at a time, resolved and deduplicated
in numpy, not in SQL);
:func:`pagerank` runs the power iteration over it (sparse: one ``bincount`` an iteration, so
a 1,000,000-edge graph takes about a second); :func:`link_scores` gives each page's score.

A page's link score is its PageRank times the number of pages in the graph: ``1`` is an
average page's share, ``5`` five times that (the home page of a site is often 20 or more), a
page no other page links to gets the least, ``0.15``-ish. Stored in ``pages.link_score``
(migration ``0032_link_score``) by :mod:`nitpicker.archive.link_score` after every crawl and
``nitpicker check``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from nitpicker.query._common import INTERNAL_HTML

if TYPE_CHECKING:
    import sqlite3

    from numpy.typing import NDArray

__all__ = ["DAMPING", "LinkGraph", "link_scores", "pagerank", "read_link_graph"]

DAMPING: Final = 0.85
"""The chance that a reader follows a link rather than jumps to any page (PageRank's usual)."""
TOLERANCE: Final = 1e-9
"""The iteration stops when the scores (summing to 1) moved less than this in all."""
MAX_ITERATIONS: Final = 200

_NODES_SQL: Final = (f"SELECT json_group_array(p.id), json_group_array(p.nofollow) FROM"
                     f" (SELECT p.id, p.nofollow FROM pages p WHERE {INTERNAL_HTML}"
                     " AND +p.status BETWEEN 200 AND 299 ORDER BY p.id) p")
_REDIRECTS_SQL: Final = ("SELECT json_group_array(id), json_group_array(redirect_dest_id)"
                         " FROM pages WHERE redirect_dest_id IS NOT NULL")
_ANCHORS_SQL: Final = ("SELECT json_group_array(page_id), json_group_array(href_id) FROM anchors"
                       " WHERE href_id > ? AND href_id <= ?")
"""The anchors to a range of pages (``anchors_href_page``, a covering index): the two columns
as JSON arrays, which SQLite writes and :func:`json.loads` reads far faster than a million
rows go through Python one by one."""
_MAX_ID_SQL: Final = "SELECT max(id) FROM pages"
_CHUNK: Final = 50_000
"""Pages whose anchors are read at once."""


@dataclass(frozen=True, slots=True)
class LinkGraph:
    """Pages as nodes ``0 … n-1`` and the edges between them."""

    page_ids: NDArray[np.int64]
    """The page id of each node, ascending."""
    sources: NDArray[np.int64]
    """The node each edge leaves (edges sorted, each pair once)."""
    targets: NDArray[np.int64]

    @property
    def nodes(self) -> int:
        return len(self.page_ids)

    @property
    def edges(self) -> int:
        return len(self.sources)


def _columns(conn: sqlite3.Connection, sql: str, params: tuple[int, ...] = ()
             ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The two JSON arrays of a query's one row, as arrays."""
    first, second = conn.execute(sql, params).fetchone()
    return (np.array(json.loads(first), dtype=np.int64),
            np.array(json.loads(second), dtype=np.int64))


def read_link_graph(conn: sqlite3.Connection) -> LinkGraph:
    """The archive's in-scope link graph (see the module's docstring)."""
    row = conn.execute(_MAX_ID_SQL).fetchone()
    size = (row[0] or 0) + 1
    page_ids, nofollow = _columns(conn, _NODES_SQL)
    node_of = np.full(size, -1, dtype=np.int64)  # page id -> node, -1: not a node
    node_of[page_ids] = np.arange(len(page_ids), dtype=np.int64)
    follows = np.ones(size, dtype=bool)
    follows[page_ids[nofollow != 0]] = False
    lands = np.arange(size, dtype=np.int64)  # page id -> where a link to it lands
    sources_of, destinations = _columns(conn, _REDIRECTS_SQL)
    lands[sources_of] = destinations
    nodes = max(len(page_ids), 1)
    pairs = []
    for first in range(0, size, _CHUNK):
        sources, targets = _columns(conn, _ANCHORS_SQL, (first - 1, first + _CHUNK - 1))
        followed = follows[sources]
        sources = node_of[sources[followed]]
        targets = node_of[lands[targets[followed]]]
        keep = (sources >= 0) & (targets >= 0) & (sources != targets)
        pairs.append(_distinct(sources[keep] * nodes + targets[keep]))
    unique = _distinct(np.concatenate(pairs)) if pairs else np.zeros(0, dtype=np.int64)
    return LinkGraph(page_ids, unique // nodes, unique % nodes)


def _distinct(values: NDArray[np.int64]) -> NDArray[np.int64]:
    """``values`` sorted, each once (``np.unique``'s hashing path is many times slower on a
    million integers than a sort)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def pagerank(nodes: int, sources: NDArray[np.int64], targets: NDArray[np.int64], *,
             damping: float = DAMPING, tolerance: float = TOLERANCE,
             max_iterations: int = MAX_ITERATIONS) -> NDArray[np.float64]:
    """The PageRank of each of ``nodes`` nodes over the edges ``sources[i] → targets[i]``
    (summing to 1). A node with no link out (dangling) shares its rank with every node."""
    if nodes == 0:
        return np.zeros(0)
    out_degree = np.bincount(sources, minlength=nodes).astype(np.float64)
    dangling = out_degree == 0
    share = 1.0 / out_degree[sources]  # each edge's part of its source's rank
    rank: NDArray[np.float64] = np.full(nodes, 1.0 / nodes)
    for _ in range(max_iterations):
        passed = np.bincount(targets, weights=rank[sources] * share, minlength=nodes)
        spread = rank[dangling].sum() / nodes
        new: NDArray[np.float64] = damping * (passed + spread) + (1.0 - damping) / nodes
        moved = float(np.abs(new - rank).sum())
        rank = new
        if moved < tolerance:
            break
    total = float(rank.sum())
    return rank / total


def link_scores(graph: LinkGraph) -> NDArray[np.float64]:
    """Each node's link score: its PageRank times the number of nodes (1: an average page)."""
    return pagerank(graph.nodes, graph.sources, graph.targets) * graph.nodes
