"""Recording the template clusters of an archive (migration ``0022_page_templates``).

:func:`record_templates` reads the snapshot of every internal HTML page (``ANALYSABLE``: the
pages ``nitpicker analyze`` sees), a batch at a time by page id, computes each one's skeleton
(:mod:`nitpicker.policy.extract.skeleton`), groups them (:mod:`nitpicker.policy.templates`)
and replaces the ``templates`` and ``page_templates`` rows in one transaction (a savepoint:
the caller's own, if it has one open). Called at the
end of a crawl (``CrawlSession.close``) and by ``nitpicker analyze --sample`` when a page
has none (an archive crawled before, merged from shards, or appended to).

Memory: one skeleton per distinct skeleton (their path strings interned) and one integer per
page, never the snapshots: a batch of ``batch`` snapshots at a time.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nitpicker.policy.extract.skeleton import skeleton
from nitpicker.policy.templates import cluster_pages

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ANALYSABLE", "TemplateSummary", "record_templates", "record_templates_after_crawl",
           "templates_missing"]

logger = logging.getLogger(__name__)

ANALYSABLE: Final = (
    "p.scraped = 1 AND p.is_external = 0 AND p.content_type = 'text/html'"
    " AND p.redirect_dest_id IS NULL"
)
"""Internal HTML pages (a snapshot is kept only for those): the analysis's pages."""

_SNAPSHOTS: Final = (
    "SELECT p.id, s.encoding, s.html FROM pages p JOIN snapshots s ON s.page_id = p.id"
    f" WHERE {ANALYSABLE} AND p.id > ? ORDER BY p.id LIMIT ?"
)

_MISSING: Final = (
    "SELECT count(*) FROM pages p JOIN snapshots s ON s.page_id = p.id"
    f" WHERE {ANALYSABLE} AND NOT EXISTS (SELECT 1 FROM page_templates t WHERE t.page_id = p.id)"
)
"""Analysable pages without a row (a page without a skeleton has one, its template NULL)."""


@dataclass(frozen=True, slots=True)
class TemplateSummary:
    """What :func:`record_templates` recorded."""

    pages: int
    """Pages read."""
    clusters: int
    clustered: int
    """Pages in a cluster (the others have no skeleton)."""
    seconds: float


def templates_missing(conn: sqlite3.Connection) -> int:
    """How many analysable pages have no cluster row (0 when every page has one)."""
    return int(conn.execute(_MISSING).fetchone()[0])


def _skeletons(conn: sqlite3.Connection, batch: int, unclustered: list[int]
               ) -> Iterator[tuple[int, frozenset[str]]]:
    """Each analysable page's skeleton; the pages without one go to ``unclustered``."""
    after = 0
    while True:
        rows = conn.execute(_SNAPSHOTS, (after, batch)).fetchall()
        if not rows:
            return
        for page_id, encoding, blob in rows:
            try:
                data = zlib.decompress(blob) if encoding == "zlib" else bytes(blob)
            except zlib.error:  # a corrupt snapshot: no skeleton, the page in no cluster
                logger.warning("page %d: its snapshot cannot be read; left out of the "
                               "template clusters", page_id)
                unclustered.append(page_id)
                continue
            paths = skeleton(data)
            if paths:
                yield page_id, paths
            else:
                unclustered.append(page_id)
        after = rows[-1][0]


def record_templates(conn: sqlite3.Connection, *, batch: int = 200) -> TemplateSummary:
    """Compute the clusters of every analysable page and replace the recorded ones, all or
    nothing (the caller holds the archive lock)."""
    started = time.monotonic()
    unclustered: list[int] = []
    clusters = cluster_pages(_skeletons(conn, batch, unclustered))
    conn.execute("SAVEPOINT templates")  # a transaction of its own, or nested in the caller's
    try:
        conn.execute("DELETE FROM page_templates")
        conn.execute("DELETE FROM templates")
        for cluster in clusters:
            conn.execute(
                "INSERT INTO templates(id, signature, pages, example_page_id, paths)"
                " VALUES (?, ?, ?, ?, ?)",
                (cluster.number, cluster.signature, len(cluster.pages), cluster.example,
                 len(cluster.skeleton)))
            conn.executemany(
                "INSERT INTO page_templates(page_id, template_id, similarity) VALUES (?, ?, ?)",
                [(page_id, cluster.number, round(score, 4)) for page_id, score in cluster.pages])
        conn.executemany("INSERT INTO page_templates(page_id) VALUES (?)",
                         [(page_id,) for page_id in unclustered])
    except BaseException:
        conn.execute("ROLLBACK TO templates")
        conn.execute("RELEASE templates")
        raise
    conn.execute("RELEASE templates")
    clustered = sum(len(c.pages) for c in clusters)
    summary = TemplateSummary(clustered + len(unclustered), len(clusters), clustered,
                              time.monotonic() - started)
    logger.info("template clusters: %d pages in %d clusters (%.1f s)", summary.clustered,
                summary.clusters, summary.seconds)
    return summary


def record_templates_after_crawl(conn: sqlite3.Connection) -> TemplateSummary | None:
    """:func:`record_templates` at the end of a crawl: a failure to write them is logged, not
    the crawl's (``nitpicker analyze --sample`` computes them when they are missing)."""
    try:
        return record_templates(conn)
    except sqlite3.Error as exc:
        logger.warning("template clusters not recorded (%s): nitpicker analyze --sample "
                       "computes them", exc)
        return None
