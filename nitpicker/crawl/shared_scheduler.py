"""SharedFrontierScheduler: the frontier scheduler of one worker of ``--workers N``.

As :class:`~nitpicker.crawl.scheduler.FrontierScheduler`, with the frontier shared by N processes:

- rows are leased under this worker's token, within the shared ``--max-pages`` budget
  (:class:`~nitpicker.crawl.worker_role.LeaseBudget`); the leases are renewed while it lives;
- the crawl is not over while any row is pending *or leased by any worker*: another worker's
  pages may still queue links, and a killed worker's rows come back when their lease expires.
  A worker with nothing to fetch waits (ticking every :data:`TICK` seconds) and takes work as
  soon as there is some;
- the tick also stops the worker when its coordinator is gone, commits what this worker's reactor thread wrote (a claim, a trap event), so no
  transaction holds the other workers back for long, and picks up roots another worker added
  (a redirecting root) into this worker's scope.

The ``SCHEDULER`` of a worker's crawl (:data:`SCHEDULER`, set by
:func:`nitpicker.cli.worker_process.run_worker`), in place of the add-on's.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from twisted.internet import task

from nitpicker.archive.shared_frontier import SharedFrontierStore
from nitpicker.archive.shared_writer import SharedArchiveWriter
from nitpicker.crawl.run_failure import classify_exception
from nitpicker.crawl.scheduler import LEASE_BATCH, FrontierScheduler

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider

    from nitpicker.crawl.session import CrawlSession
    from nitpicker.crawl.worker_role import WorkerRole

__all__ = ["LOOK_AGAIN", "SCHEDULER", "TICK", "SharedFrontierScheduler"]

logger = logging.getLogger(__name__)

SCHEDULER = "nitpicker.crawl.shared_scheduler.SharedFrontierScheduler"
"""The ``SCHEDULER`` setting of a worker's crawl."""

TICK = 0.1
"""Seconds between two ticks: commit, renew, look for work."""

LOOK_AGAIN = 0.02
"""Seconds before a worker that found nothing to lease asks the frontier again."""


class SharedFrontierScheduler(FrontierScheduler):
    """Leases from the frontier the other workers lease from too."""

    def __init__(self, crawler: Crawler, session: CrawlSession) -> None:
        super().__init__(crawler, session)
        assert session.role is not None
        self.role: WorkerRole = session.role
        self._ticker: task.LoopingCall | None = None
        self._outstanding = True
        self._looked = 0.0
        self._look_again = 0.0
        self._renewed = time.monotonic()
        self._roots: set[str] = set(session.config.roots)
        self._coordinator = os.getppid()

    def open(self, spider: Spider) -> None:
        super().open(spider)
        self._ticker = task.LoopingCall(self.tick)
        self._ticker.start(TICK, now=False)

    def close(self, reason: str) -> None:
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        super().close(reason)

    @property
    def frontier(self) -> SharedFrontierStore:
        frontier = self.session.archive.frontier
        assert isinstance(frontier, SharedFrontierStore)  # a SharedArchiveWriter's
        return frontier

    def has_pending_requests(self) -> bool:
        if self._requeued:
            return True
        session = self.session
        if session.halted is not None:
            self._leased.clear()  # released back to pending when the worker detaches
            return False
        if session.paused is not None or self._leased or session.writing:
            return True
        return self._any_outstanding()

    def _any_outstanding(self, *, fresh: bool = False) -> bool:
        """Whether any row is pending or leased (looked up at most once a tick)."""
        now = time.monotonic()
        if fresh or now - self._looked >= TICK:
            self._looked = now
            self._outstanding = self.frontier.has_outstanding()
        return self._outstanding

    def next_request(self) -> Request | None:
        """As the one-process scheduler's, except when there is nothing to lease: a worker
        does not wait for its own page writes then (the other workers' pages queue links too,
        and its writes may be waiting for their write lock, so the wait held its reactor
        still), and looks again at most every :data:`LOOK_AGAIN` seconds; its tick looks too."""
        if self.session.paused is not None:
            return None
        if self._requeued:
            return self._requeued.popleft()
        if self.session.halted is not None:
            return None
        if not self._leased:
            now = time.monotonic()
            if now < self._look_again:
                return None
            self._lease()
            if not self._leased:
                self._look_again = now + LOOK_AGAIN
                return None
        frontier_id, url, depth, mode = self._leased.popleft()
        return self.request_for(url, frontier_id=frontier_id, depth=depth, mode=mode)

    def _lease(self) -> None:
        session = self.session
        budget = self.role.budget
        limit = LEASE_BATCH
        if budget is not None:
            limit = budget.reserve(LEASE_BATCH)
            if limit == 0:
                session.halt("max_pages")
                return
        self._adopt_roots()
        rows = self.frontier.lease(limit)
        if budget is not None:
            budget.give_back(limit - len(rows))
        session.counters.leased += len(rows)
        self._leased.extend(rows)

    def _adopt_roots(self) -> None:
        """Roots another worker added (a redirecting root's destination) join this scope."""
        session = self.session
        stored = session.archive.stored_roots()
        for root in stored:
            if root not in self._roots:
                self._roots.add(root)
                session.scope.add(root)
                session.scope_version += 1

    def tick(self) -> None:
        """Commit, renew the leases, and fetch rows that turned up while this worker idled."""
        session = self.session
        writer = session.writer
        if writer is None or session.failure is not None:
            return
        if os.getppid() != self._coordinator and session.halted is None:
            logger.error("the coordinating process is gone: this worker stops")
            session.halt("shutdown")
        try:
            assert isinstance(writer, SharedArchiveWriter)  # a worker's
            writer.commit_unless_busy()
            if time.monotonic() - self._renewed >= self.role.lease_seconds / 3:
                self._renewed = time.monotonic()
                self.frontier.renew()
            if (self._leased or self._requeued or session.halted is not None
                    or session.paused is not None):
                return
            self._lease()
        except (sqlite3.Error, OSError) as exc:
            session.fail(classify_exception(exc))
            return
        engine: Any = self.crawler.engine
        if self._leased:
            frontier_id, url, depth, mode = self._leased.popleft()
            engine.crawl(self.request_for(url, frontier_id=frontier_id, depth=depth, mode=mode))
        elif not session.writing and not self._any_outstanding(fresh=True):
            # All done: wake the engine now rather than at its next heartbeat (5 s), so it
            # finds itself idle and closes. Scrapy has no public call for it.
            slot = getattr(engine, "_slot", None)
            if slot is not None:
                slot.nextcall.schedule()
