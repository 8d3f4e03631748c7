"""TrapCounts: the trap cap's page counts, shared by the workers of ``--workers N``.

One small SQLite file (in WAL mode) made by the coordinator for the run and removed after it;
each worker opens it with a connection of its own. :meth:`TrapCounts.count` adds one page to a
signature's count and returns the count of all workers together, and whether the signature is
capped already; :meth:`TrapCounts.fire` caps it, and tells exactly one worker — the one whose
page reached the threshold first — that it fired (that worker records the trap event). Each call
is one short autocommitted statement.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["TrapCounts"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS trap_counts (
    signature TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    first_url TEXT NOT NULL,
    capped INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID"""

_COUNT = """INSERT INTO trap_counts(signature, count, first_url) VALUES (?, 1, ?)
ON CONFLICT(signature) DO UPDATE SET count = count + 1
RETURNING count, capped, first_url"""

_BUSY_TIMEOUT_MS = 60_000


class TrapCounts:
    """Page counts per meta signature, shared through one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                     timeout=_BUSY_TIMEOUT_MS / 1000)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=OFF")  # thrown away after the run
        self._conn.execute(_SCHEMA)

    def count(self, signature: str, url: str) -> tuple[int, bool, str]:
        """One more page of ``signature``: (pages counted by every worker, capped already,
        the first page's URL)."""
        count, capped, first_url = self._conn.execute(_COUNT, (signature, url)).fetchone()
        return int(count), bool(capped), str(first_url)

    def fire(self, signature: str) -> bool:
        """Cap ``signature``; ``True`` for the one caller that capped it."""
        cur = self._conn.execute(
            "UPDATE trap_counts SET capped = 1 WHERE signature = ? AND capped = 0", (signature,))
        return cur.rowcount > 0

    def close(self) -> None:
        self._conn.close()
