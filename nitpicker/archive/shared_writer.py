"""SharedArchiveWriter: one of several crawler processes writing one archive (``--workers``).

The coordinating process (``nitpicker crawl --workers N``) creates or reopens the archive,
holds its lock for the whole run, starts the run's row and closes it at the end. Each worker
process attaches to the archive under that lock (:meth:`SharedArchiveWriter.attach`) and writes
through its own connection, in short transactions: every transaction begins ``IMMEDIATE`` (it
waits, up to the busy timeout, for the other workers' write to end, instead of failing on a
stale snapshot) and is committed after each page, each lease and at least every tick of the
worker's scheduler. SQLite's WAL lets the others read meanwhile.

Its frontier is a :class:`~nitpicker.archive.shared_frontier.SharedFrontierStore`: leases with
this worker's owner token and an expiry. :meth:`SharedArchiveWriter.detach` commits, puts this
worker's unfetched leases back to pending and closes the connection; the close work of a run
(URL order, inbound index, the run row, folding the WAL) is the coordinator's.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from nitpicker.archive.connection import connect, serialised
from nitpicker.archive.schema import SchemaError, check_readable
from nitpicker.archive.shared_frontier import SharedFrontierStore
from nitpicker.archive.writer import ArchiveError, ArchiveWriter, check_archive_file

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["BUSY_TIMEOUT_MS", "SharedArchiveWriter"]

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 60_000
"""How long a worker waits for another worker's write to end (transactions last milliseconds)."""


class SharedArchiveWriter(ArchiveWriter):
    """An archive writer sharing the file with other worker processes."""

    frontier: SharedFrontierStore

    def __init__(self, path: Path, conn: sqlite3.Connection, *, owner: str,
                 lease_seconds: float) -> None:
        self.owner = owner
        self.lease_seconds = lease_seconds
        super().__init__(path, conn, None)

    def make_frontier(self) -> SharedFrontierStore:
        return SharedFrontierStore(self, self.owner, self.lease_seconds)

    @classmethod
    def attach(cls, path: Path, *, owner: str, lease_seconds: float) -> SharedArchiveWriter:
        """Open the archive the coordinator created (and holds the lock of) as one worker."""
        check_archive_file(path)
        conn = connect(path)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            check_readable(conn)
        except SchemaError as exc:
            conn.close()
            raise ArchiveError(f"{path}: {exc}") from exc
        return cls(path, conn, owner=owner, lease_seconds=lease_seconds)

    def begin(self) -> None:
        """Open a transaction that holds the write lock from its start."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")

    @serialised
    def maybe_commit(self, max_items: int = 100, max_seconds: float = 0.2) -> None:
        """Commit whatever is open: the other workers wait while a transaction is."""
        if self.conn.in_transaction:
            self.commit()

    @serialised
    def detach(self, *, failed: bool = False) -> None:
        """Commit (or, ``failed``, roll back) the open batch, put this worker's unfetched
        leases back to pending, close the connection. The coordinator closes the run."""
        try:
            if failed:
                self.rollback()
            else:
                self.commit()
            self.frontier.release_leases()
        except sqlite3.Error as exc:  # its leases expire instead; the others take them
            logger.warning("worker %s could not release its leases: %s", self.owner, exc)
        finally:
            self.conn.close()
