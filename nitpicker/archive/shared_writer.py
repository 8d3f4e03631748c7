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
import time
from typing import TYPE_CHECKING

from nitpicker.archive.connection import connect, serialised
from nitpicker.archive.schema import SchemaError, check_readable
from nitpicker.archive.shared_frontier import SharedFrontierStore
from nitpicker.archive.writer import ArchiveError, ArchiveWriter, check_archive_file

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["BUSY_TIMEOUT_MS", "GROUP_PAGES", "GROUP_SECONDS", "LOCK_POLL_SECONDS", "SharedArchiveWriter"]

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 60_000
"""How long a worker waits for another worker's write to end (transactions last milliseconds)."""

GROUP_PAGES = 16
"""At most this many pages in one worker transaction (see :meth:`SharedArchiveWriter.maybe_commit`)."""

GROUP_SECONDS = 0.05
"""At most this old a worker transaction grows by joining queued writes."""

LOCK_POLL_SECONDS = 0.0003
"""How often a worker waiting for the write lock tries again (see :meth:`SharedArchiveWriter.begin`)."""


class SharedArchiveWriter(ArchiveWriter):
    """An archive writer sharing the file with other worker processes."""

    frontier: SharedFrontierStore

    def __init__(self, path: Path, conn: sqlite3.Connection, *, owner: str,
                 lease_seconds: float) -> None:
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.more_queued: Callable[[], bool] = lambda: False
        """Whether writes are queued behind the running one (the session sets it to its
        archive worker's)."""
        self._locked_at = 0.0
        """When the open transaction got the write lock: the age of a group commit."""
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
        """Open a transaction that holds the write lock from its start.

        While another worker holds the lock, this polls for it every
        :data:`LOCK_POLL_SECONDS` (up to :data:`BUSY_TIMEOUT_MS`) rather than through SQLite's
        own busy handler, which sleeps 1, 2, 5, 10 … 100 ms between tries: the other worker's
        page holds the lock for a millisecond or two, and a backed-off wait kept each worker
        waiting most of the time (and its reactor thread behind it).
        """
        conn = self.conn
        if conn.in_transaction:
            return
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    self._locked_at = time.monotonic()
                    return
                except sqlite3.OperationalError as exc:
                    if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                        raise
                time.sleep(LOCK_POLL_SECONDS)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    @serialised
    def maybe_commit(self, max_items: int = GROUP_PAGES, max_seconds: float = GROUP_SECONDS,
                     ) -> None:
        """Commit whatever is open — unless more writes are queued behind this one and the
        transaction is younger than ``max_items`` pages and ``max_seconds``: then the next
        write joins it (a group commit). The other workers wait while a transaction is open,
        so it is short; but a page a transaction made each worker take the lock, and commit,
        for every page, and the lock was the two workers' bottleneck. When this worker's
        writes queue up (the lock was busy), they go in one transaction.

        A group's age counts from when it got the lock, not from the last commit: a worker
        that waited longer than ``max_seconds`` for the lock would otherwise commit after one
        page and wait for the lock again with its queue still full."""
        if not self.conn.in_transaction:
            return
        if (self.more_queued() and self.dirty < max_items
                and time.monotonic() - self._locked_at < max_seconds):
            return
        self.commit()

    def commit_unless_busy(self) -> None:
        """Commit what is open, unless another thread of this worker is writing (it commits
        when its write ends): the reactor thread never waits behind the archive thread, which
        may itself be waiting for another worker's write to end."""
        if not self._mutex.acquire(blocking=False):
            return
        try:
            if self.conn.in_transaction:
                self.commit()
        finally:
            self._mutex.release()

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
            self.pages.signer.close()
            self.conn.close()
