"""Reading the pages' content signatures for the near-duplicate clusters
(:mod:`nitpicker.archive.content_clusters`): the compared pages (internal HTML pages that
answered 2xx, with at least :data:`MIN_WORDS` words of main content) a batch at a time, one
page for each content hash (an exact duplicate's copies are the same signature), and the
signatures of some pages by id.

Nothing here holds every signature at once: the batches go to the banding and are dropped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from nitpicker.policy.near_duplicate import PERMUTATIONS
from nitpicker.query._common import INTERNAL_HTML

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator

    import numpy as np
    from numpy.typing import NDArray

__all__ = ["COMPARED", "MIN_WORDS", "read_signatures", "signature_batches"]

MIN_WORDS: Final = 20
"""Pages with fewer words of main content are not compared: a form, an empty shell, a
"coming soon" are alike without being duplicates worth a finding."""

COMPARED: Final = (f"{INTERNAL_HTML} AND +p.status BETWEEN 200 AND 299"
                   f" AND c.words >= {MIN_WORDS} AND c.content_hash IS NOT NULL")
"""The compared pages (``p`` their page, ``c`` their ``page_content`` row)."""

_REPRESENTATIVES_SQL: Final = f"""SELECT min(c.page_id), c.minhash
    FROM page_content c JOIN pages p ON p.id = c.page_id
    WHERE {COMPARED} AND c.minhash IS NOT NULL GROUP BY c.content_hash"""
"""One page a content hash (its smallest id, with its signature: SQLite's bare column of a
``min()``)."""

_BY_ID_SQL: Final = """SELECT c.page_id, c.minhash FROM page_content c
    WHERE c.page_id IN (SELECT value FROM json_each(?))"""

_BATCH: Final = 20_000


def _matrix(rows: list[tuple[int, bytes]]) -> tuple[NDArray[np.int64], NDArray[np.uint32]]:
    import numpy as np  # here: the query library is imported by every crawl, numpy by none

    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    signatures = np.frombuffer(b"".join(row[1] for row in rows), dtype="<u4")
    return ids, signatures.reshape(len(rows), PERMUTATIONS).astype(np.uint32)


def signature_batches(conn: sqlite3.Connection, batch: int = _BATCH
                      ) -> Iterator[tuple[NDArray[np.int64], NDArray[np.uint32]]]:
    """The compared pages' signatures, one page a content hash: ``(page ids, signatures)``,
    at most ``batch`` pages at a time (``batch`` × 512 bytes)."""
    cursor = conn.execute(_REPRESENTATIVES_SQL)
    while rows := cursor.fetchmany(batch):
        yield _matrix(rows)


def read_signatures(conn: sqlite3.Connection, page_ids: Iterable[int]
                    ) -> dict[int, NDArray[np.uint32]]:
    """The signatures of ``page_ids`` (those that have one), by page id."""
    rows = conn.execute(_BY_ID_SQL, (json.dumps(list(page_ids)),)).fetchall()
    if not rows:
        return {}
    ids, signatures = _matrix(rows)
    return dict(zip(ids.tolist(), signatures, strict=True))
