"""FrontierStore: the archive's ``frontier`` table, the crawl's durable queue of URLs.

A discovered link becomes a frontier row (deduplicated by its protocol-agnostic key,
:func:`nitpicker.policy.urls.frontier_key`), pending; the scheduler leases pending rows in two
lanes, the site first: the rows the crawl reads in full (``FollowMode.FULL``, predicted pages)
before the rows it only checks (``FollowMode.METADATA``: out-of-scope URLs), each lane
shallowest first (migration ``0036_frontier_site_first``); a page's record acknowledges its row
(done). Leased rows not fetched go back to pending
when a run stops, and when an interrupted crawl is reopened: a row is never lost, and a page
recorded in a committed batch is never fetched again.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, ClassVar

from nitpicker.archive.connection import json_rows, serialised
from nitpicker.items import FollowMode
from nitpicker.policy.urls import frontier_key

if TYPE_CHECKING:
    from collections.abc import Iterable

    from nitpicker.archive.batch import Batch

__all__ = ["CHECK", "DONE", "LEASED", "PENDING", "FrontierEntry", "FrontierStore", "queued"]

PENDING, LEASED, DONE = 0, 1, 2
"""The states of a frontier row."""

FrontierEntry = tuple[int, str, int, int]
"""(frontier id, url, depth, mode)"""

_KNOWN_KEYS_SIZE = 100_000
_PREDICTED = int(FollowMode.PREDICTED)
CHECK = int(FollowMode.METADATA)
"""The mode of the rows leased last: URLs only checked (out of scope), after the site's."""


class FrontierStore:
    """Adds, leases and acknowledges frontier rows; keeps the count of pending ones."""

    checks_leases: ClassVar[bool] = False
    """Whether a page is recorded only while its row is leased by this writer (``--workers``:
    :class:`~nitpicker.archive.shared_frontier.SharedFrontierStore`); one writer owns every
    lease."""

    def __init__(self, archive: Batch) -> None:
        self._conn = archive.conn
        self._mutex = archive.mutex
        self._begin = archive.begin
        self._known_keys: dict[str, None] = {}
        self._missed_keys: dict[str, None] = {}
        """Keys of predictions that missed: not predicted again (a real link still queues)."""
        self.pending = 0
        """Frontier rows in state pending (kept in step with every insert and lease)."""
        self.pending_checks = 0
        """Of :attr:`pending`, the rows only checked (mode ``CHECK``, leased after the site's)."""

    @property
    def pending_site(self) -> int:
        """Pending rows of the site's lane (leased before any check)."""
        return max(self.pending - self.pending_checks, 0)

    def forget(self) -> None:
        """The open batch was rolled back: the keys sent in it may be gone."""
        self._known_keys.clear()

    @serialised
    def add(self, entries: Iterable[tuple[str, str, int, int]]) -> int:
        """Insert (key, url, depth, mode) rows not yet known; returns how many were new.

        Keys this writer has already sent to the frontier are skipped without a round trip
        to SQLite (most links of a page are the site's navigation, known long ago); the
        memory of them is bounded and simply starts afresh when full. A predicted row
        (``FollowMode.PREDICTED``) whose key already missed once is not queued again.
        """
        known = self._known_keys
        fresh = [entry for entry in entries if entry[0] not in known]
        missed = self._missed_keys
        if missed:
            fresh = [e for e in fresh if e[3] != _PREDICTED or e[0] not in missed]
        if not fresh:
            return 0
        self._begin()
        modes = self._conn.execute(
            "INSERT OR IGNORE INTO frontier(key, url, depth, mode)"
            " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)"
            " RETURNING mode",
            (json_rows(fresh),),
        ).fetchall()
        if len(known) + len(fresh) > _KNOWN_KEYS_SIZE:
            known.clear()
        known.update(dict.fromkeys(entry[0] for entry in fresh))
        added = len(modes)
        self.pending += added
        if added:
            self.pending_checks += modes.count((CHECK,))
        return added

    @serialised
    def lease(self, limit: int) -> list[FrontierEntry]:
        """Take up to ``limit`` pending rows, the site's first, each lane shallowest first,
        and mark them leased."""
        if self.pending <= 0 or limit <= 0:
            return []
        self._begin()
        rows: list[FrontierEntry] = self._conn.execute(LEASE_ORDER, (limit,)).fetchall()
        if rows:  # one statement: the reactor thread holds the writer's lock meanwhile
            self._conn.execute(_MARK_LEASED, (json.dumps([row[0] for row in rows]),))
        self._leased(rows, limit)
        return rows

    def _leased(self, rows: list[FrontierEntry], limit: int) -> None:
        """The pending counts after leasing ``rows`` (fewer than ``limit``: none is left)."""
        if len(rows) < limit:
            self.pending = self.pending_checks = 0
            return
        self.pending -= len(rows)
        if rows[-1][3] == CHECK:  # the site's lane is empty: what is left are checks
            self.pending_checks = self.pending

    def _recount(self) -> None:
        """The pending counts taken afresh from the table."""
        pending, checks = self._conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE mode = ?) FROM frontier WHERE state = ?",
            (CHECK, PENDING)).fetchone()
        self.pending, self.pending_checks = int(pending), int(checks)

    def holds(self, frontier_id: int) -> bool:
        """Whether this writer still holds the row's lease: always, when it is the only one."""
        return True

    @serialised
    def acknowledge(self, frontier_id: int) -> None:
        """The row's URL is recorded: done."""
        self._begin()
        self._conn.execute("UPDATE frontier SET state = 2 WHERE id = ?", (frontier_id,))

    @serialised
    def claim(self, key: str, url: str, depth: int) -> bool:
        """A full-crawl request is redirected to ``url`` (in scope): whether it may follow.

        It may when no other request has the URL: its row is then taken (a new row, or a
        pending one) and leased, and the page recorded at the end of the redirect chain marks
        it done. It may not when the row is leased (another request is fetching it) or done
        (it was recorded): the redirect is then handed over (see
        :mod:`nitpicker.middlewares.redirect`). A leased row goes back to pending if the run
        stops first, as any leased row.
        """
        self._begin()
        conn = self._conn
        taken = conn.execute("UPDATE frontier SET state = ? WHERE key = ? AND state = ?"
                             " RETURNING mode", (LEASED, key, PENDING)).fetchone()
        if taken is not None:
            self._took(taken[0])
            return True
        cur = conn.execute(
            "INSERT OR IGNORE INTO frontier(key, url, depth, mode, state) VALUES (?, ?, ?, 0, ?)",
            (key, url, depth, LEASED),
        )
        self._known_keys[key] = None
        return cur.rowcount > 0

    def _took(self, mode: int) -> None:
        """One pending row of ``mode`` is leased or done."""
        self.pending -= 1
        if mode == CHECK:
            self.pending_checks = max(self.pending_checks - 1, 0)

    @serialised
    def release(self, key: str, *, fetch_again: bool = True) -> None:
        """A row :meth:`claim` took for a redirect chain that failed: pending again, so that
        its URL is fetched on its own, or (``fetch_again=False``) done, its failure recorded
        under the chain's source."""
        self._begin()
        row = self._conn.execute(
            "UPDATE frontier SET state = ? WHERE key = ? AND state = ? RETURNING mode",
            (PENDING if fetch_again else DONE, key, LEASED)).fetchone()
        if fetch_again and row is not None:
            self.pending += 1
            self.pending_checks += row[0] == CHECK

    def mark_done(self, key: str) -> None:
        """The row with this key, pending or leased, is done (its URL was recorded at the end
        of, or as a hop of, a redirect chain). Called inside
        :meth:`nitpicker.archive.page_recorder.PageRecorder.record`, in its transaction and
        under its lock.
        """
        conn = self._conn
        row = conn.execute("UPDATE frontier SET state = ? WHERE key = ? AND state = ?"
                           " RETURNING mode", (DONE, key, PENDING)).fetchone()
        if row is not None:
            self._took(row[0])
            return
        conn.execute("UPDATE frontier SET state = ? WHERE key = ? AND state = ?",
                     (DONE, key, LEASED))

    def settle(self, key: str, url: str, depth: int, mode: int) -> bool:
        """A URL answered without a request of its own: its row is done. ``True`` when it
        was new (inserted done) or pending (marked done); ``False`` when it is leased or done
        already (its own request answers it).

        Called inside :meth:`nitpicker.archive.page_recorder.PageRecorder.record_answered`, in
        its transaction and under its lock.
        """
        row = self._conn.execute("SELECT state, mode FROM frontier WHERE key = ?",
                                 (key,)).fetchone()
        if row is None:
            self._conn.execute(
                "INSERT INTO frontier(key, url, depth, mode, state) VALUES (?, ?, ?, ?, ?)",
                (key, url, depth, mode, DONE),
            )
            return True
        if row[0] != PENDING:
            return False
        self._conn.execute("UPDATE frontier SET state = ? WHERE key = ?", (DONE, key))
        self._took(row[1])
        return True

    @serialised
    def drop_prediction(self, frontier_id: int) -> bool:
        """A predicted row's URL missed (an error, a redirect, a skip): the row goes, and its
        key is forgotten, so a real link found later queues the URL afresh. When a page row
        exists for the URL already (a real link, a sitemap or a redirect reached it while it
        was in flight), the row is queued again as a normal full crawl instead: the URL is then
        fetched and recorded like any other. Returns whether it was queued again."""
        self._begin()
        row = self._conn.execute(
            "SELECT key, url FROM frontier WHERE id = ? AND mode = ?",
            (frontier_id, int(FollowMode.PREDICTED)),
        ).fetchone()
        if row is None:
            return False
        key, url = row
        if self._conn.execute("SELECT 1 FROM pages WHERE url = ?", (url,)).fetchone():
            self._conn.execute(
                "UPDATE frontier SET state = ?, mode = ? WHERE id = ?",
                (PENDING, int(FollowMode.FULL), frontier_id),
            )
            self.pending += 1
            return True
        self._conn.execute("DELETE FROM frontier WHERE id = ?", (frontier_id,))
        remember_missed(self._known_keys, self._missed_keys, key)
        return False

    @serialised
    def release_leases(self) -> None:
        """Leased rows not fetched (a stopped run) go back to pending."""
        self._begin()
        self._conn.execute("UPDATE frontier SET state = 0 WHERE state = 1")
        self._recount()

    @serialised
    def requeue_leased(self) -> None:
        """Reopening an archive: rows a killed run had leased are pending again (no batch:
        nothing else is written yet), and the pending count is taken afresh."""
        self._conn.execute("UPDATE frontier SET state = ? WHERE state = ?", (PENDING, LEASED))
        self._recount()

    @serialised
    def pending_count(self) -> int:
        """Rows not done yet, counted in the table (pending and leased)."""
        return int(self._conn.execute(
            "SELECT count(*) FROM frontier WHERE state < 2").fetchone()[0])

    @serialised
    def repromote(self, urls: Iterable[str]) -> None:
        """Queue ``urls`` for a full crawl again, at depth 1: new rows, or known ones pending
        again (``--append``: pages that were out of scope and are in scope now)."""
        self._begin()
        self._conn.executemany(
            "INSERT INTO frontier(key, url, depth, mode) VALUES (?, ?, 1, 0)"
            " ON CONFLICT(key) DO UPDATE SET state = 0, mode = 0",
            [(frontier_key(url), url) for url in urls],
        )
        self._recount()

    @serialised
    def requeue(self, entries: Iterable[tuple[str, str, int, int]]) -> None:
        """(key, url, depth, mode) rows pending again, added when missing (``--retry-failed``:
        URLs fetched before, to fetch once more)."""
        self._begin()
        self._conn.executemany(
            "INSERT INTO frontier(key, url, depth, mode) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET state = 0, mode = excluded.mode",
            list(entries),
        )
        self._recount()

    @serialised
    def has_pending_under(self, key_prefix: str) -> bool:
        """Whether a row not done yet has a key starting with ``key_prefix`` (``//host/path/``)."""
        row = self._conn.execute(
            "SELECT 1 FROM frontier WHERE key >= ? AND key < ? AND state < 2 LIMIT 1",
            (key_prefix, key_prefix + "\U0010ffff"),
        ).fetchone()
        return row is not None


_MARK_LEASED = ("UPDATE frontier SET state = 1"
                " WHERE id IN (SELECT value FROM json_each(?))")

LEASE_ORDER = ("SELECT id, url, depth, mode FROM frontier WHERE state = 0"
               f" ORDER BY mode = {CHECK}, depth, id LIMIT ?")
"""The next pending rows: the site's first, then the checks, each lane shallowest first (the
order of the index ``frontier_pending``, migration ``0036_frontier_site_first``)."""


def queued(conn: sqlite3.Connection) -> tuple[int, int]:
    """The frontier rows not done yet (pending or leased), and how many of them are checks: a
    crawl's progress from any connection to its archive (the workers' parent reads it)."""
    total, checks = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE mode = ?) FROM frontier WHERE state < ?",
        (CHECK, DONE)).fetchone()
    return int(total), int(checks)


def remember_missed(known: dict[str, None], missed: dict[str, None], key: str) -> None:
    """A missed prediction's key: no longer known (a real link queues it afresh), remembered
    as missed in a bounded memory (cleared when full)."""
    known.pop(key, None)
    if len(missed) >= _KNOWN_KEYS_SIZE:
        missed.clear()
    missed[key] = None
