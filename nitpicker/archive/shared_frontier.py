"""SharedFrontierStore: the frontier table leased by several crawler processes at once.

``nitpicker crawl --workers N`` runs N crawler processes over one archive. Each leases rows
under its own owner token with an expiry (migration ``0015_frontier_lease``) and renews its
leases while it lives (:meth:`SharedFrontierStore.renew`). A row whose lease expired — its worker
was killed — is leased again by another worker. A page is recorded only while its row is still
leased by the worker recording it (:meth:`SharedFrontierStore.holds`, checked in the record's
transaction): a page whose lease was taken over is dropped, never recorded twice.

Every lease is committed at once, so the other workers see it; the pending count is the
table's, looked up when this worker's own count runs out.

The lease also exchanges the hosts the workers' breakers gave up on (:attr:`board`, a
:class:`~nitpicker.archive.host_board.HostBoard`; the ``given_up_hosts`` table, migration
``0043_given_up_hosts``): this worker's news are written in the lease's transaction and the
hosts whose probe time is ahead read back, so that a dead host is given up on by every worker
without a statement of its own on any request's path.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from nitpicker.archive.connection import serialised
from nitpicker.archive.frontier_store import (
    CHECK,
    DONE,
    LEASE_ORDER,
    LEASED,
    PENDING,
    FrontierStore,
)
from nitpicker.archive.host_board import GivenUpHost

if TYPE_CHECKING:
    from nitpicker.archive.batch import Batch
    from nitpicker.archive.frontier_store import FrontierEntry
    from nitpicker.archive.host_board import HostBoard

__all__ = ["SharedFrontierStore"]

_LEASE_EXPIRED = ("SELECT id, url, depth, mode FROM frontier WHERE state = 1 AND lease_expires < ?"
                  " ORDER BY lease_expires LIMIT ?")
_TAKE = "UPDATE frontier SET state = 1, lease_owner = ?, lease_expires = ? WHERE id = ?"
_GIVE_UP = ("INSERT INTO given_up_hosts(host, error, why, probe_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(host) DO UPDATE SET error = excluded.error, why = excluded.why,"
            " probe_at = max(probe_at, excluded.probe_at)")
_WELL = "DELETE FROM given_up_hosts WHERE host = ?"
_GIVEN_UP = "SELECT host, error, why, probe_at FROM given_up_hosts WHERE probe_at > ?"


class SharedFrontierStore(FrontierStore):
    """A frontier store whose leases carry this worker's owner token and an expiry."""

    checks_leases: ClassVar[bool] = True

    def __init__(self, archive: Batch, owner: str, lease_seconds: float) -> None:
        super().__init__(archive)
        self.owner = owner
        self.lease_seconds = lease_seconds
        self._commit = archive.commit
        self.board: HostBoard | None = None
        """The hosts given up on, exchanged at each lease (set by the crawl session)."""

    @serialised
    def lease(self, limit: int) -> list[FrontierEntry]:
        """Take up to ``limit`` rows — pending ones, the site's first, each lane shallowest
        first, then rows whose lease expired — under this worker's token, and commit."""
        if limit <= 0:
            return []
        self._begin()
        conn = self._conn
        now = time.time()
        rows: list[FrontierEntry] = conn.execute(LEASE_ORDER, (limit,)).fetchall()
        self._leased(rows, limit)
        if len(rows) == limit:
            self.pending = max(self.pending, 1)  # the others' rows: look again
            if rows[-1][3] == CHECK:
                self.pending_checks = self.pending
        if len(rows) < limit:
            rows += conn.execute(_LEASE_EXPIRED, (now, limit - len(rows))).fetchall()
        if rows:
            expires = now + self.lease_seconds
            conn.executemany(_TAKE, [(self.owner, expires, row[0]) for row in rows])
        if self.board is not None:
            self._exchange(self.board, now)
        self._commit()
        return rows

    def _exchange(self, board: HostBoard, now: float) -> None:
        """Write this worker's given-up hosts (and those that answer again), read everyone's
        whose probe time is ahead (in the lease's transaction)."""
        conn = self._conn
        given_up, well = board.outgoing()
        if given_up:
            conn.executemany(_GIVE_UP, [(host.host, host.error, host.why, now + host.seconds)
                                        for host in given_up])
        if well:
            conn.executemany(_WELL, [(host,) for host in well])
        board.learn([GivenUpHost(host, error, why, probe_at - now, probe_at)
                     for host, error, why, probe_at in conn.execute(_GIVEN_UP, (now,))])

    @serialised
    def holds(self, frontier_id: int) -> bool:
        """Whether the row is still leased by this worker (its page may be recorded)."""
        return self._conn.execute(
            "SELECT 1 FROM frontier WHERE id = ? AND state = ? AND lease_owner = ?",
            (frontier_id, LEASED, self.owner),
        ).fetchone() is not None

    @serialised
    def renew(self) -> int:
        """Push back the expiry of every row this worker holds; how many it holds."""
        self._begin()
        cur = self._conn.execute(
            "UPDATE frontier SET lease_expires = ? WHERE state = ? AND lease_owner = ?",
            (time.time() + self.lease_seconds, LEASED, self.owner),
        )
        self._commit()
        return max(cur.rowcount, 0)

    @serialised
    def has_outstanding(self) -> bool:
        """Whether any row is not done yet: pending, or leased by any worker (whose pages may
        still queue links, or whose lease may expire and come back)."""
        row = self._conn.execute(
            "SELECT EXISTS (SELECT 1 FROM frontier WHERE state = 0)"
            " OR EXISTS (SELECT 1 FROM frontier WHERE state = 1)"
        ).fetchone()
        return bool(row[0])

    @serialised
    def claim(self, key: str, url: str, depth: int) -> bool:
        """As :meth:`FrontierStore.claim`, the row leased under this worker's token."""
        self._begin()
        conn = self._conn
        now = time.time()
        expires = now + self.lease_seconds
        if conn.execute(
            "UPDATE frontier SET state = ?, lease_owner = ?, lease_expires = ? WHERE key = ?"
            " AND (state = ? OR (state = ? AND lease_expires < ?))",
            (LEASED, self.owner, expires, key, PENDING, LEASED, now),
        ).rowcount > 0:
            return True
        cur = conn.execute(
            "INSERT OR IGNORE INTO frontier(key, url, depth, mode, state, lease_owner,"
            " lease_expires) VALUES (?, ?, ?, 0, ?, ?, ?)",
            (key, url, depth, LEASED, self.owner, expires),
        )
        return cur.rowcount > 0

    @serialised
    def release(self, key: str, *, fetch_again: bool = True) -> None:
        """As :meth:`FrontierStore.release`, for a row this worker holds only."""
        self._begin()
        self._conn.execute(
            "UPDATE frontier SET state = ? WHERE key = ? AND state = ? AND lease_owner = ?",
            (PENDING if fetch_again else DONE, key, LEASED, self.owner),
        )

    @serialised
    def release_leases(self) -> None:
        """This worker's leased rows not fetched go back to pending (the others' stay)."""
        self._begin()
        self._conn.execute(
            "UPDATE frontier SET state = ?, lease_owner = NULL, lease_expires = NULL"
            " WHERE state = ? AND lease_owner = ?",
            (PENDING, LEASED, self.owner),
        )
        self._commit()
