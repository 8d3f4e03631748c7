"""FrontierStore: the archive's ``frontier`` table, the crawl's durable queue of URLs.

A discovered link becomes a frontier row (deduplicated by its protocol-agnostic key,
:func:`nitpicker.policy.urls.frontier_key`), pending; the scheduler leases pending rows shallowest
first; a page's record acknowledges its row (done). Leased rows not fetched go back to pending
when a run stops, and when an interrupted crawl is reopened: a row is never lost, and a page
recorded in a committed batch is never fetched again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.archive.connection import json_rows, serialised
from nitpicker.policy.urls import frontier_key

if TYPE_CHECKING:
    from collections.abc import Iterable

    from nitpicker.archive.writer import ArchiveWriter

__all__ = ["DONE", "LEASED", "PENDING", "FrontierEntry", "FrontierStore"]

PENDING, LEASED, DONE = 0, 1, 2
"""The states of a frontier row."""

FrontierEntry = tuple[int, str, int, int]
"""(frontier id, url, depth, mode)"""

_KNOWN_KEYS_SIZE = 100_000


class FrontierStore:
    """Adds, leases and acknowledges frontier rows; keeps the count of pending ones."""

    def __init__(self, archive: ArchiveWriter) -> None:
        self._conn = archive.conn
        self._mutex = archive.mutex
        self._begin = archive.begin
        self._known_keys: dict[str, None] = {}
        self.pending = 0
        """Frontier rows in state pending (kept in step with every insert and lease)."""

    def forget(self) -> None:
        """The open batch was rolled back: the keys sent in it may be gone."""
        self._known_keys.clear()

    @serialised
    def add(self, entries: Iterable[tuple[str, str, int, int]]) -> int:
        """Insert (key, url, depth, mode) rows not yet known; returns how many were new.

        Keys this writer has already sent to the frontier are skipped without a round trip
        to SQLite (most links of a page are the site's navigation, known long ago); the
        memory of them is bounded and simply starts afresh when full.
        """
        known = self._known_keys
        fresh = [entry for entry in entries if entry[0] not in known]
        if not fresh:
            return 0
        self._begin()
        cur = self._conn.execute(
            "INSERT OR IGNORE INTO frontier(key, url, depth, mode)"
            " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)",
            (json_rows(fresh),),
        )
        if len(known) + len(fresh) > _KNOWN_KEYS_SIZE:
            known.clear()
        known.update(dict.fromkeys(entry[0] for entry in fresh))
        added = max(cur.rowcount, 0)
        self.pending += added
        return added

    @serialised
    def lease(self, limit: int) -> list[FrontierEntry]:
        """Take up to ``limit`` pending rows, shallowest first, and mark them leased."""
        if self.pending <= 0 or limit <= 0:
            return []
        self._begin()
        rows: list[FrontierEntry] = self._conn.execute(
            "SELECT id, url, depth, mode FROM frontier WHERE state = 0 ORDER BY depth, id LIMIT ?",
            (limit,),
        ).fetchall()
        if rows:
            self._conn.executemany(
                "UPDATE frontier SET state = 1 WHERE id = ?", [(r[0],) for r in rows]
            )
        self.pending = self.pending - len(rows) if len(rows) == limit else 0
        return rows

    @serialised
    def acknowledge(self, frontier_id: int) -> None:
        """The row's URL is recorded: done."""
        self._begin()
        self._conn.execute("UPDATE frontier SET state = 2 WHERE id = ?", (frontier_id,))

    def mark_done(self, key: str) -> None:
        """A pending row with this key is done (its URL was recorded as a redirect's target).

        Called inside :meth:`nitpicker.archive.page_recorder.PageRecorder.record`, in its
        transaction and under its lock.
        """
        cur = self._conn.execute(
            "UPDATE frontier SET state = 2 WHERE key = ? AND state = 0", (key,)
        )
        self.pending -= max(cur.rowcount, 0)

    def settle(self, key: str, url: str, depth: int, mode: int) -> bool:
        """A URL answered without a request of its own: its row is done. ``True`` when it
        was new (inserted done) or pending (marked done); ``False`` when it is leased or done
        already (its own request answers it).

        Called inside :meth:`nitpicker.archive.page_recorder.PageRecorder.record_answered`, in
        its transaction and under its lock.
        """
        row = self._conn.execute("SELECT state FROM frontier WHERE key = ?", (key,)).fetchone()
        if row is None:
            self._conn.execute(
                "INSERT INTO frontier(key, url, depth, mode, state) VALUES (?, ?, ?, ?, ?)",
                (key, url, depth, mode, DONE),
            )
            return True
        if row[0] != PENDING:
            return False
        self._conn.execute("UPDATE frontier SET state = ? WHERE key = ?", (DONE, key))
        self.pending -= 1
        return True

    @serialised
    def release_leases(self) -> None:
        """Leased rows not fetched (a stopped run) go back to pending."""
        self._begin()
        cur = self._conn.execute("UPDATE frontier SET state = 0 WHERE state = 1")
        self.pending += max(cur.rowcount, 0)

    @serialised
    def requeue_leased(self) -> None:
        """Reopening an archive: rows a killed run had leased are pending again (no batch:
        nothing else is written yet), and the pending count is taken afresh."""
        self._conn.execute("UPDATE frontier SET state = ? WHERE state = ?", (PENDING, LEASED))
        self.pending = int(self._conn.execute(
            "SELECT count(*) FROM frontier WHERE state = ?", (PENDING,)).fetchone()[0])

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
        self.pending = self.pending_count()

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
        self.pending = self.pending_count()

    @serialised
    def has_pending_under(self, key_prefix: str) -> bool:
        """Whether a row not done yet has a key starting with ``key_prefix`` (``//host/path/``)."""
        row = self._conn.execute(
            "SELECT 1 FROM frontier WHERE key >= ? AND key < ? AND state < 2 LIMIT 1",
            (key_prefix, key_prefix + "\U0010ffff"),
        ).fetchone()
        return row is not None
