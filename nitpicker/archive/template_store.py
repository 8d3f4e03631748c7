"""Recording the template clusters of an archive (migration ``0022_page_templates``).

:func:`record_templates` reads the snapshot of every internal HTML page (``ANALYSABLE``: the
pages ``nitpicker analyze`` sees), a batch at a time by page id, computes each one's skeleton
(:mod:`nitpicker.policy.extract.skeleton`), groups them (:mod:`nitpicker.policy.templates`)
and replaces the ``templates`` and ``page_templates`` rows in one transaction (a savepoint:
the caller's own, if it has one open). Called at the
end of a crawl (``CrawlSession.close``) and by ``nitpicker analyze --sample`` when a page
has none (an archive crawled before, merged from shards, or appended to).

Memory: one skeleton per distinct skeleton (their path strings interned) and one integer per
page, never the snapshots: a batch of ``batch`` snapshots at a time. At the end of a crawl the
skeletons of the pages it recorded come from the crawl's own parse of each page
(:class:`KnownSkeletons`): only the other pages' snapshots (an earlier run's) are read again.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nitpicker.policy.extract.skeleton import skeleton
from nitpicker.policy.templates import cluster_signed, signature
from nitpicker.query.snapshot_encoding import DecodeError, decode

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ANALYSABLE", "KnownSkeletons", "TemplateSummary", "record_templates",
           "record_templates_after_crawl", "templates_missing"]

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

_ANALYSABLE_IDS: Final = (
    "SELECT p.id FROM pages p JOIN snapshots s ON s.page_id = p.id"
    f" WHERE {ANALYSABLE} AND p.id > ? ORDER BY p.id LIMIT ?"
)

_SNAPSHOT: Final = "SELECT encoding, html FROM snapshots WHERE page_id = ?"

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
    snapshots_read: int = 0
    """Snapshots parsed for their skeleton (the others were known from the crawl's parse)."""


def templates_missing(conn: sqlite3.Connection) -> int:
    """How many analysable pages have no cluster row (0 when every page has one)."""
    return int(conn.execute(_MISSING).fetchone()[0])


class KnownSkeletons:
    """The skeletons of the pages a crawl recorded, from its own parse of each page
    (:func:`nitpicker.policy.extract.extract` with ``skeleton=True`` reads the bytes the
    snapshot stores): what :func:`record_templates` would compute from those snapshots.

    Held as :func:`record_templates` holds them: a signature per page, a skeleton per distinct
    signature. Fed on the archive's thread as pages are recorded, read at the close."""

    def __init__(self) -> None:
        self.pages: dict[int, str] = {}
        """page id → signature (``""``: the page has no skeleton)."""
        self.skeletons: dict[str, frozenset[str]] = {}

    def note(self, page_id: int, paths: frozenset[str] | None) -> None:
        """Page ``page_id`` was recorded with a snapshot whose skeleton is ``paths``; ``None``:
        not known (no snapshot, or one recorded without it), read from the archive if it is
        analysable."""
        if not page_id:
            return
        if paths is None:
            self.pages.pop(page_id, None)
            return
        key = sys.intern(signature(paths)) if paths else ""  # one string a skeleton, pickled once
        if key:
            self.skeletons.setdefault(key, paths)
        self.pages[page_id] = key

    def merge(self, other: KnownSkeletons) -> None:
        """Take in the skeletons another writer knows (a worker's of ``crawl --workers N``, at
        the coordinator's close). A page known with two signatures (fetched by two workers, a
        lease taken over) is read from its snapshot instead."""
        for key, paths in other.skeletons.items():
            self.skeletons.setdefault(key, paths)
        both = other.pages.keys() & self.pages.keys()
        differ = {page_id for page_id in both if self.pages[page_id] != other.pages[page_id]}
        self.pages.update(other.pages)
        for page_id in differ:
            del self.pages[page_id]


def _read(page_id: int, encoding: str, blob: bytes, unclustered: list[int], read: list[int]
          ) -> tuple[int, str, frozenset[str]] | None:
    """A snapshot's skeleton and its signature; ``None`` (the page to ``unclustered``) when it
    has none or cannot be read. ``read[0]``: the snapshots read so far."""
    read[0] += 1
    try:
        data = decode(encoding, blob)
    except DecodeError:  # a corrupt snapshot: no skeleton, the page in no cluster
        logger.warning("page %d: its snapshot cannot be read; left out of the "
                       "template clusters", page_id)
        unclustered.append(page_id)
        return None
    paths = skeleton(data)
    if not paths:
        unclustered.append(page_id)
        return None
    return page_id, signature(paths), paths


def _skeletons(conn: sqlite3.Connection, batch: int, unclustered: list[int], read: list[int]
               ) -> Iterator[tuple[int, str, frozenset[str]]]:
    """Each analysable page's (id, signature, skeleton); the pages without one go to
    ``unclustered``."""
    after = 0
    while True:
        rows = conn.execute(_SNAPSHOTS, (after, batch)).fetchall()
        if not rows:
            return
        for page_id, encoding, blob in rows:
            read_one = _read(page_id, encoding, blob, unclustered, read)
            if read_one is not None:
                yield read_one
        after = rows[-1][0]


def _known_skeletons(conn: sqlite3.Connection, batch: int, unclustered: list[int],
                     read: list[int], known: KnownSkeletons
                     ) -> Iterator[tuple[int, str, frozenset[str]]]:
    """As :func:`_skeletons`, the pages ``known`` has taken from there, the others' snapshots
    read."""
    pages, skeletons = known.pages, known.skeletons
    after = 0
    while True:
        ids = [row[0] for row in conn.execute(_ANALYSABLE_IDS, (after, batch))]
        if not ids:
            return
        for page_id in ids:
            key = pages.get(page_id)
            if key is None:
                row = conn.execute(_SNAPSHOT, (page_id,)).fetchone()
                read_one = _read(page_id, row[0], row[1], unclustered, read)
                if read_one is not None:
                    yield read_one
            elif key:
                yield page_id, key, skeletons[key]
            else:
                unclustered.append(page_id)
        after = ids[-1]


def record_templates(conn: sqlite3.Connection, *, batch: int = 200,
                     known: KnownSkeletons | None = None) -> TemplateSummary:
    """Compute the clusters of every analysable page and replace the recorded ones, all or
    nothing (the caller holds the archive lock). ``known``: the skeletons of pages already
    computed (the crawl's), their snapshots not read."""
    started = time.monotonic()
    unclustered: list[int] = []
    read = [0]
    pages = (_skeletons(conn, batch, unclustered, read) if known is None or not known.pages
             else _known_skeletons(conn, batch, unclustered, read, known))
    clusters = cluster_signed(pages)
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
                              time.monotonic() - started, read[0])
    logger.info("template clusters: %d pages in %d clusters, %d snapshots read (%.1f s)",
                summary.clustered, summary.clusters, summary.snapshots_read, summary.seconds)
    return summary


def record_templates_after_crawl(conn: sqlite3.Connection, known: KnownSkeletons | None = None
                                 ) -> TemplateSummary | None:
    """:func:`record_templates` at the end of a crawl: a failure to write them is logged, not
    the crawl's (``nitpicker analyze --sample`` computes them when they are missing)."""
    try:
        return record_templates(conn, known=known)
    except sqlite3.Error as exc:
        logger.warning("template clusters not recorded (%s): nitpicker analyze --sample "
                       "computes them", exc)
        return None
