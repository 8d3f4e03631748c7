"""FrontierScheduler: Scrapy's scheduler replaced by the archive's frontier table.

Discovered links never become ``Request`` objects: the archive pipeline inserts them into
the frontier (deduplicated by their protocol-agnostic key). This scheduler leases pending
rows in small batches, the site first (the rows crawled in full, then the out-of-scope
checks), each lane breadth-first (shallowest depth first), and builds one ``Request`` per
leased row. When the next row it holds is a check and a row of the site is waiting in the
frontier (found since), it leases again and hands out the site's rows first; and while the
site has work (rows pending, its requests in the downloader, pages being written), checks take at
most half of ``CONCURRENT_REQUESTS``, so that a slow external host never fills the downloader
the site's next pages need. When the last page of the site is recorded, at most the checks
already handed to the engine are left. Requests the engine hands back (redirect hops, retries) are kept in memory:
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
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.core.scheduler import BaseScheduler

from nitpicker.archive.frontier_store import CHECK
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
        self._downloader: Any = None
        """The engine's downloader (its ``active`` requests), once open."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler, crawl_session(crawler))

    def open(self, spider: Spider) -> None:
        self.session.open()
        try:
            self._downloader = self.crawler.engine.downloader
        except RuntimeError:  # no engine: the scheduler driven alone (its unit tests)
            self._downloader = None

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
        leased = self._leased
        if not leased:
            self._lease()
            if not leased and self.session.writing:
                # Pages still being written may queue new links: wait for them, then look again.
                self.session.settle()
                self._lease()
            if not leased:
                return None
        elif leased[0][3] == CHECK and self.session.archive.frontier.pending_site > 0:
            self._lease()  # the site's rows found since go before the checks held
        if leased[0][3] == CHECK and self._checks_wait():
            return None  # the engine asks again when a download ends
        frontier_id, url, depth, mode = leased.popleft()
        return self.request_for(url, frontier_id=frontier_id, depth=depth, mode=mode)

    def _checks_wait(self) -> bool:
        """Whether the next check waits: the site has work and checks hold half of the
        downloader's concurrency already."""
        downloader = self._downloader
        if downloader is None:
            return False
        checks = sum(1 for request in downloader.active if request.meta.get(META_MODE) == CHECK)
        if checks < downloader.total_concurrency // 2:
            return False
        session = self.session
        counters = session.counters
        return (session.archive.frontier.pending_site > 0
                or counters.leased - counters.leased_checks > session.site_written)

    def _lease(self) -> None:
        session = self.session
        budget = session.budget_left
        if budget == 0:
            session.halt("max_pages")
            return
        limit = LEASE_BATCH if budget is None else min(LEASE_BATCH, budget)
        rows = session.archive.frontier.lease(limit)
        counters = session.counters
        counters.leased += len(rows)
        leased = self._leased
        site = [row for row in rows if row[3] != CHECK]
        if leased and site:
            leased.extendleft(reversed(site))
            leased.extend(row for row in rows if row[3] == CHECK)
        else:
            leased.extend(rows)
        counters.leased_checks += len(rows) - len(site)

    def request_for(self, url: str, *, frontier_id: int, depth: int, mode: int) -> Request:
        """The request for one frontier row. Override to add headers or meta.

        A predicted row (``FollowMode.PREDICTED``) is fetched as a full crawl, marked
        ``nitpicker_predicted``. A check (``FollowMode.METADATA``) goes to a download slot of
        its host and port (Scrapy's is the host's): two servers on one host name are two hosts
        to wait for, each throttled and given up on (:mod:`~nitpicker.middlewares.host_breaker`)
        by itself.
        """
        spider: Any = self.crawler.spider
        meta: dict[str, Any] = {META_FRONTIER_ID: frontier_id, META_DEPTH: depth, META_MODE: mode}
        if mode == FollowMode.PREDICTED:
            meta[META_MODE] = FollowMode.FULL
            meta[META_PREDICTED] = True
        elif mode == CHECK:
            meta["download_slot"] = urlsplit(url).netloc
        return Request(
            url,
            callback=spider.parse,
            errback=spider.errback,
            dont_filter=True,
            meta=meta,
        )
