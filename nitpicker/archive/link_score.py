"""Storing each page's link score (``pages.link_score``, migration ``0032_link_score``): the
PageRank of the in-scope link graph (:mod:`nitpicker.query.link_graph`), computed after the
crawl with the site checks (:func:`nitpicker.archive.check_store.record_checks`, hence at the
end of every crawl and merge, and by ``nitpicker check``). Every page's score is written
afresh; a page out of the graph has none (``NULL``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nitpicker.query.link_graph import link_scores, read_link_graph

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.archive.close_reader import ComputedLinkScores

__all__ = ["LinkScoreSummary", "record_link_scores"]

_FORGET: Final = "UPDATE pages SET link_score = NULL WHERE link_score IS NOT NULL"
_SET: Final = "UPDATE pages SET link_score = ? WHERE id = ?"


@dataclass(frozen=True, slots=True)
class LinkScoreSummary:
    pages: int
    links: int
    """Edges of the graph: pairs of linked pages."""
    elapsed: float
    """Seconds."""


def record_link_scores(conn: sqlite3.Connection,
                       computed: ComputedLinkScores | None = None) -> LinkScoreSummary:
    """Compute and store every page's link score on ``conn``, within the caller's transaction
    (none: one of its own). ``computed``: the scores of the archive as it is, computed already
    (:class:`~nitpicker.archive.close_reader.CloseReader`): only stored."""
    started = time.monotonic()
    if computed is None:
        graph = read_link_graph(conn)
        page_ids, scores, edges = graph.page_ids, link_scores(graph), graph.edges
    else:
        page_ids, scores, edges = computed.page_ids, computed.scores, computed.edges
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_FORGET)
        conn.executemany(_SET, zip(scores.round(6).tolist(), page_ids.tolist(), strict=True))
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")
    return LinkScoreSummary(len(page_ids), edges, time.monotonic() - started)
