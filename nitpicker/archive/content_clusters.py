"""Storing the near-duplicate clusters (``content_clusters``, migration
``0041_content_signatures``), computed after the crawl with the site checks
(:func:`nitpicker.archive.check_store.record_checks`), before the checks that read them.

The compared pages (:data:`nitpicker.query.content_signatures.COMPARED`) are read a batch at a
time, one page for each content hash; each signature is cut into bands
(:func:`nitpicker.policy.minhash.band_shape` for the threshold) and only its band keys, 8
bytes a band, stay in memory: the signatures stay in the archive. Pages that share a band's
key are candidates; their signatures are read then, and two pages join one cluster when their
estimated similarity reaches the threshold (a cluster is the connected pages: A like B and B
like C put A, B and C together). A small group of candidates is compared pair by pair; a
large one (:data:`PAIRWISE`) against the group's leaders, each page joining the first leader
it is like or becoming one. An exact duplicate's copies then join their page's cluster.

Each clustered page gets a row: its cluster (the cluster's smallest page id) and its estimated
similarity to that page. The rows are replaced whole by each run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from nitpicker.policy.minhash import band_keys, band_shape
from nitpicker.policy.near_duplicate import PERMUTATIONS
from nitpicker.query.content_signatures import COMPARED, read_signatures, signature_batches

if TYPE_CHECKING:
    import sqlite3

    from numpy.typing import NDArray

__all__ = ["PAIRWISE", "ContentClusterSummary", "record_content_clusters"]

PAIRWISE: Final = 64
"""Candidate groups up to this size are compared pair by pair."""

_FORGET: Final = "DELETE FROM content_clusters"
_INSERT: Final = "INSERT INTO content_clusters(page_id, cluster_id, similarity) VALUES (?, ?, ?)"
_COPIES: Final = f"""INSERT OR IGNORE INTO content_clusters(page_id, cluster_id, similarity)
    SELECT c.page_id, k.cluster_id, k.similarity
    FROM content_clusters k JOIN page_content r ON r.page_id = k.page_id
        JOIN page_content c ON c.content_hash = r.content_hash AND c.page_id != r.page_id
        JOIN pages p ON p.id = c.page_id
    WHERE {COMPARED}"""
"""An exact duplicate's copies join the cluster of the page that stood for them."""


@dataclass(frozen=True, slots=True)
class ContentClusterSummary:
    pages: int
    """Compared pages (one a content hash)."""
    clusters: int
    clustered: int
    """Pages in a cluster, copies included."""
    elapsed: float
    """Seconds."""


class _Clusters:
    """Union-find over page ids, the candidates' signatures read once."""

    def __init__(self, conn: sqlite3.Connection, threshold: float) -> None:
        self.conn = conn
        self.agree = threshold * PERMUTATIONS  # positions two signatures must share
        self.parent: dict[int, int] = {}
        self.signatures: dict[int, NDArray[np.uint32]] = {}

    def find(self, page: int) -> int:
        parent = self.parent
        root = page
        while parent.get(root, root) != root:
            root = parent[root]
        while page != root:  # path compression
            parent[page], page = root, parent.get(page, page)
        return root

    def union(self, first: int, second: int) -> None:
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)

    def compare(self, group: list[int]) -> None:
        missing = [page for page in group if page not in self.signatures]
        if missing:
            self.signatures.update(read_signatures(self.conn, missing))
        matrix = np.stack([self.signatures[page] for page in group])
        if len(group) <= PAIRWISE:
            agree = (matrix[:, None, :] == matrix[None, :, :]).sum(axis=2)
            for i, j in zip(*np.nonzero(np.triu(agree >= self.agree, k=1)), strict=True):
                self.union(group[int(i)], group[int(j)])
            return
        leaders: list[int] = []
        for index, page in enumerate(group):
            if leaders:
                agree = (matrix[leaders] == matrix[index]).sum(axis=1)
                best = int(np.argmax(agree))
                if agree[best] >= self.agree:
                    self.union(group[leaders[best]], page)
                    continue
            leaders.append(index)

    def similarity(self, first: int, second: int) -> float:
        return float((self.signatures[first] == self.signatures[second]).sum()) / PERMUTATIONS


def _groups(ids: NDArray[np.int64], keys: NDArray[np.int64]) -> list[list[int]]:
    """The runs of equal keys of one band, as page ids (runs of one left out)."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(ordered)]
    return [ids[order[start:end]].tolist()
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True)
            if end - start > 1]


def record_content_clusters(conn: sqlite3.Connection,
                            threshold: float) -> ContentClusterSummary:
    """Compute and store the near-duplicate clusters on ``conn`` at ``threshold``, within the
    caller's transaction."""
    started = time.monotonic()
    bands, rows = band_shape(threshold)
    id_parts: list[NDArray[np.int64]] = []
    key_parts: list[NDArray[np.int64]] = []
    for ids, signatures in signature_batches(conn):
        id_parts.append(ids)
        key_parts.append(band_keys(signatures, bands, rows))
    clusters = _Clusters(conn, threshold)
    pages = 0
    if id_parts:
        ids = np.concatenate(id_parts)
        keys = np.concatenate(key_parts)
        pages = len(ids)
        del id_parts, key_parts
        for band in range(bands):
            for group in _groups(ids, keys[:, band]):
                clusters.compare(group)
    members: dict[int, list[int]] = {}
    for page in clusters.parent:
        members.setdefault(clusters.find(page), []).append(page)
    conn.execute(_FORGET)
    rows_out: list[tuple[int, int, float]] = []
    for root, pages_of in members.items():
        rows_out.extend((page, root, round(clusters.similarity(root, page), 4))
                        for page in sorted({root, *pages_of}))
    conn.executemany(_INSERT, rows_out)
    conn.execute(_COPIES)
    clustered = conn.execute("SELECT count(*) FROM content_clusters").fetchone()[0]
    return ContentClusterSummary(pages, len(members), clustered, time.monotonic() - started)
