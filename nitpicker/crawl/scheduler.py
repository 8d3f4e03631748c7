"""FrontierScheduler: Scrapy's scheduler replaced by the archive's frontier table.

Discovered links never become ``Request`` objects: the archive pipeline inserts them into
the frontier (deduplicated by their protocol-agnostic key). This scheduler leases pending
rows breadth-first (shallowest depth first) in small batches and builds one ``Request`` per
leased row. Requests the engine hands back (redirect hops, retries) are kept in memory:
they belong to a row that is already leased, and a leased row goes back to pending on
resume. While the session is paused (a network outage) it hands out nothing. Enabled by the
add-on as ``SCHEDULER``; it opens the crawl session
(:func:`~nitpicker.crawl.session.crawl_session`) when the spider opens. A worker of
``--workers N`` has its variant instead,
:class:`~nitpicker.crawl.shared_scheduler.SharedFrontierScheduler` (its process's settings name it).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.core.scheduler import BaseScheduler

from nitpicker.crawl.meta import META_DEPTH, META_FRONTIER_ID, META_MODE, META_PREDICTED
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider

    from nitpicker.archive.frontier_store import FrontierEntry
    from nitpicker.crawl.session import CrawlSession

__all__ = ["FrontierScheduler"]

logger = logging.getLogger(__name__)

LEASE_BATCH = 32


class FrontierScheduler(BaseScheduler):
    """Hands the engine requests leased from the archive's frontier."""

    def __init__(self, crawler: Crawler, session: CrawlSession) -> None:
        self.crawler = crawler
        self.session = session
        self._requeued: deque[Request] = deque()
        self._leased: deque[FrontierEntry] = deque()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler, crawl_session(crawler))

    def open(self, spider: Spider) -> None:
        self.session.open()

    def close(self, reason: str) -> None:
        self._leased.clear()

    def has_pending_requests(self) -> bool:
        if self._requeued:
            return True
        session = self.session
        if session.halted is not None:
            self._leased.clear()  # released back to pending when the run closes
            return False
        if session.paused is not None:
            return True  # the crawl goes on when the pause ends
        return bool(self._leased) or session.archive.frontier.pending > 0 or session.writing

    def enqueue_request(self, request: Request) -> bool:
        self._requeued.append(request)
        return True

    def next_request(self) -> Request | None:
        if self.session.paused is not None:
            return None  # an outage: nothing starts, not even a retry, until it ends
        if self._requeued:
            return self._requeued.popleft()
        if self.session.halted is not None:
            return None
        if not self._leased:
            self._lease()
            if not self._leased and self.session.writing:
                # Pages still being written may queue new links: wait for them, then look again.
                self.session.settle()
                self._lease()
            if not self._leased:
                return None
        frontier_id, url, depth, mode = self._leased.popleft()
        return self.request_for(url, frontier_id=frontier_id, depth=depth, mode=mode)

    def _lease(self) -> None:
        session = self.session
        budget = session.budget_left
        if budget == 0:
            session.halt("max_pages")
            return
        limit = LEASE_BATCH if budget is None else min(LEASE_BATCH, budget)
        rows = session.archive.frontier.lease(limit)
        session.counters.leased += len(rows)
        self._leased.extend(rows)

    def request_for(self, url: str, *, frontier_id: int, depth: int, mode: int) -> Request:
        """The request for one frontier row. Override to add headers or meta.

        A predicted row (``FollowMode.PREDICTED``) is fetched as a full crawl, marked
        ``nitpicker_predicted``.
        """
        spider: Any = self.crawler.spider
        meta = {META_FRONTIER_ID: frontier_id, META_DEPTH: depth, META_MODE: mode}
        if mode == FollowMode.PREDICTED:
            meta[META_MODE] = FollowMode.FULL
            meta[META_PREDICTED] = True
        return Request(
            url,
            callback=spider.parse,
            errback=spider.errback,
            dont_filter=True,
            meta=meta,
        )
