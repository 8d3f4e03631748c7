"""AutoRetry: the URLs that failed for a passing reason are fetched once more at the end of the run.

When the crawl has nothing left to fetch (the spider goes idle), the URLs this run recorded as
failed for a reason that passes (:meth:`AutoRetry.is_transient`: a timeout, a connection reset,
a 429 or a 503, each after Scrapy's own ``--retry`` retries) go back to the frontier after a
pause (``NITPICKER_AUTO_RETRY_PAUSE`` seconds), each with its depth and follow mode, and are
fetched with at most ``NITPICKER_AUTO_RETRY_CONCURRENCY`` requests at once (the downloader's
total: every host they are on gets that little). A URL that answers then is recorded over its
failed row (same id) and what it newly links to is crawled as any new link is; a URL that fails
again stays failed (``nitpicker crawl --retry-failed`` tries it in a later run). Once per run.

The run log keeps the count: ``runs.auto_retried`` (the URLs fetched again) and
``runs.auto_recovered`` (those that answered, neither a fetch error nor 429/503), written in the
open batch, with the pages. The run's counters count a retried URL once, as its last outcome.

An extension, enabled by the add-on. ``NITPICKER_AUTO_RETRY_CONCURRENCY = 0`` turns it off
(``NotConfigured``); it is off for a worker of ``--workers N`` and of a distributed crawl
(their runs are ended elsewhere). A run that stopped (Ctrl-C, ``--max-pages``,
``--max-duration``, a failure) has no retry pass. Stats: ``nitpicker/auto_retry/retried``,
``nitpicker/auto_retry/recovered``.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.http import Response

from nitpicker.crawl.meta import META_MODE
from nitpicker.crawl.run_failure import classify_exception
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode, PageItem
from nitpicker.policy.urls import frontier_key

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import DelayedCall

    from nitpicker.crawl.session import CrawlSession

__all__ = ["AutoRetry", "AutoRetrySettings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AutoRetrySettings:
    """The ``NITPICKER_AUTO_RETRY_*`` settings, parsed once."""

    concurrency: int = 2
    """Requests at once during the retry pass; 0: no retry pass."""
    pause: float = 10.0
    """Seconds between the end of the crawl and the retry pass."""

    def __post_init__(self) -> None:
        if self.concurrency < 0:
            raise ValueError(
                f"NITPICKER_AUTO_RETRY_CONCURRENCY must not be negative, got {self.concurrency}")
        if not 0 <= self.pause <= 3600:
            raise ValueError(
                f"NITPICKER_AUTO_RETRY_PAUSE must be 0 to 3600 seconds, got {self.pause}")

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> AutoRetrySettings:
        return cls(concurrency=settings.getint("NITPICKER_AUTO_RETRY_CONCURRENCY"),
                   pause=settings.getfloat("NITPICKER_AUTO_RETRY_PAUSE"))


@dataclass
class _Failed:
    """A URL that failed for a passing reason: what its frontier row is queued again with."""

    url: str
    depth: int
    mode: int
    is_external: bool
    had_error: bool
    """Whether it was a fetch error (counted in the run's errors), not a 429/503 answer."""


class _Phase(Enum):
    CRAWLING = "crawling"
    WAITING = "waiting"
    """The crawl is done; the pause before the retry pass runs."""
    RETRYING = "retrying"
    DONE = "done"


class AutoRetry:
    """Fetches the run's transiently failed URLs once more, after a pause, more slowly."""

    TRANSIENT_STATUSES: ClassVar[frozenset[int]] = frozenset({429, 503})
    TRANSIENT_ERRORS: ClassVar[tuple[str, ...]] = ("Timeout", "Connection reset")
    """How the text of a fetch error that passes starts
    (:func:`nitpicker.crawl.fetch_errors.describe_failure`), in a browser's too."""

    def __init__(self, crawler: Crawler, session: CrawlSession, config: AutoRetrySettings,
                 stats: StatsCollector) -> None:
        self.crawler = crawler
        self.session = session
        self.config = config
        self.stats = stats
        self._phase = _Phase.CRAWLING
        self._failed: dict[str, _Failed] = {}
        """By frontier key: the URLs to fetch again; during the pass, those not back yet."""
        self._retried = 0
        self._recovered = 0
        self._timer: DelayedCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AutoRetry:
        config = AutoRetrySettings.from_settings(crawler.settings)
        if not config.concurrency:
            raise NotConfigured("NITPICKER_AUTO_RETRY_CONCURRENCY is 0")
        session = crawl_session(crawler)
        if session.role is not None or session.shared_frontier is not None:
            raise NotConfigured("no retry pass in a crawl of several processes")
        extension = cls(crawler, session, config, crawler.stats)
        connect = crawler.signals.connect
        connect(extension.item_scraped, signal=signals.item_scraped)
        connect(extension.spider_idle, signal=signals.spider_idle)
        connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    # -- policies (override in a subclass) -------------------------------------------------------

    def is_transient(self, item: PageItem) -> bool:
        """Whether the URL failed for a reason that passes: a fetch error that timed out or
        whose connection was reset, or a 429 or 503 answer."""
        if item.error is not None:
            error = item.error.removeprefix("browser: ")
            return error.startswith(self.TRANSIENT_ERRORS)
        return item.status in self.TRANSIENT_STATUSES

    # -- signals -----------------------------------------------------------------------------------

    def item_scraped(self, item: Any, response: Any) -> None:
        if not isinstance(item, PageItem):
            return
        if self._phase is _Phase.CRAWLING:
            if self.is_transient(item):
                self._failed[frontier_key(item.url)] = _Failed(
                    item.url, item.depth, _mode_of(item, response), item.is_external,
                    item.error is not None)
        elif self._phase is _Phase.RETRYING:
            self._came_back(item)

    def spider_idle(self) -> None:
        """The crawl has nothing left to fetch: pause, then the retry pass; once the pass has
        nothing left either, the run ends."""
        session = self.session
        if session.halted is not None or session.writer is None:
            return  # a stopped run ends as it is
        if self._phase is _Phase.CRAWLING and self._failed:
            from twisted.internet import reactor

            self._phase = _Phase.WAITING
            clock: Any = reactor
            self._timer = clock.callLater(self.config.pause, self._start_pass)
            logger.info("auto-retry: %d URL(s) failed for a passing reason; fetching them again "
                        "in %g s", len(self._failed), self.config.pause)
        if self._phase is _Phase.WAITING:
            raise DontCloseSpider
        if self._phase is _Phase.RETRYING:
            self._phase = _Phase.DONE
            logger.info("auto-retry: %d URL(s) fetched again, %d recovered", self._retried,
                        self._recovered)

    def spider_closed(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    # -- the retry pass ----------------------------------------------------------------------------

    def _start_pass(self) -> None:
        self._timer = None
        session = self.session
        if session.halted is not None or session.writer is None or not self.crawler.crawling:
            self._phase = _Phase.DONE
            return
        entries = [(key, failed.url, failed.depth, failed.mode)
                   for key, failed in self._failed.items()]
        self._retried = len(entries)
        downloader = self.crawler.engine.downloader
        most = self.config.concurrency
        downloader.total_concurrency = min(downloader.total_concurrency or most, most)
        try:
            session.archive.frontier.requeue(entries)
            session.archive.runs.record_auto_retry(self._retried, 0)
        except (sqlite3.Error, OSError) as exc:
            session.fail(classify_exception(exc))
            self._phase = _Phase.DONE
            return
        self._phase = _Phase.RETRYING
        self.stats.set_value("nitpicker/auto_retry/retried", self._retried)
        # Wake the engine now, not at its next heartbeat (5 s). Scrapy has no public call.
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()

    def _came_back(self, item: PageItem) -> None:
        """A URL of the pass recorded again: its first outcome no longer counts, and it
        recovered when it answered."""
        keys = [frontier_key(item.url), *(frontier_key(hop.url) for hop in item.redirects)]
        failed = next((self._failed.pop(key) for key in keys if key in self._failed), None)
        if failed is None:
            return  # a link the pass found: a URL like any other
        counters = self.session.counters
        counters.done -= 1  # one URL of the run, leased and recorded once
        counters.leased -= 1
        if failed.had_error:
            if failed.is_external:
                counters.external_errors -= 1
            else:
                counters.internal_errors -= 1
        if item.error is not None or self.is_transient(item):
            return
        self._recovered += 1
        self.stats.inc_value("nitpicker/auto_retry/recovered")
        try:
            self.session.archive.runs.record_auto_retry(self._retried, self._recovered,
                                                        commit=False)
        except (sqlite3.Error, OSError) as exc:
            self.session.fail(classify_exception(exc))


def _mode_of(item: PageItem, response: Any) -> int:
    """The follow mode the URL was fetched with (its request's), else what its scope says."""
    request = response.request if isinstance(response, Response) else getattr(
        response, "request", None)
    meta = getattr(request, "meta", None) or {}
    if META_MODE in meta:
        return int(meta[META_MODE])
    return int(FollowMode.METADATA if item.is_external else FollowMode.FULL)
