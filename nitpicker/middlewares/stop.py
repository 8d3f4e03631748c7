"""GracefulStop: a stopping crawl starts no download and waits for running ones only briefly.

Scrapy's graceful stop (the first SIGINT or SIGTERM, a Scrapyd cancel, a ``CloseSpider``, a
failed run) and the ``--max-duration`` deadline (the session halts: no more leases) close the
spider once every request the engine holds is done, and the downloader goes on starting the
requests already queued in its per-host slots, one per ``DOWNLOAD_DELAY`` or ``Retry-After``
hold: with ``--interval 60000`` the ten queued requests kept a stopped crawl
running for ten minutes, and a tarpit held it for the whole ``DOWNLOAD_TIMEOUT``. Here, as
soon as the crawl stops (checked every ``POLL_INTERVAL`` seconds):

- the requests queued in the downloader's slots are dropped, and a request reaching the end of
  the downloader middlewares is refused (``CrawlStopped``, an ``IgnoreRequest``);
- downloads in flight get ``NITPICKER_STOP_GRACE`` seconds (default 3) to finish, then they are
  cancelled.

Such a request carries ``nitpicker_stopped`` and the spider records nothing for it: its frontier
row, still leased, goes back to pending when the run closes, so ``--resume`` fetches it (a
redirect hop or a retry scheduled after the stop is never fetched either, for the same reason).

A second signal makes Scrapy stop the reactor at once: the archive is then closed before the
process ends (recorded pages committed, leases released, the run marked stopped).

A downloader middleware, the last before the downloader, enabled by the add-on. Stats:
``nitpicker/stop/dropped`` (queued requests dropped), ``nitpicker/stop/refused`` (requests
refused after the stop), ``nitpicker/stop/cancelled`` (downloads cancelled after the grace).
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.asyncio import create_looping_call
from twisted.python.failure import Failure

from nitpicker.crawl.meta import META_DOWNLOAD_TASK, META_STOPPED
from nitpicker.crawl.session import crawl_session

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.utils.asyncio import AsyncioLoopingCall
    from twisted.internet.base import DelayedCall
    from twisted.internet.task import LoopingCall

    from nitpicker.crawl.session import CrawlSession

__all__ = ["CrawlStopped", "GracefulStop", "StopSettings"]

logger = logging.getLogger(__name__)

POLL_INTERVAL = 0.1
"""Seconds between two looks at whether the crawl is stopping."""

STOP_HALTS = frozenset({"max_duration", "failed"})
"""The session's halt reasons that stop the downloads too (``--max-pages`` is not one)."""


class CrawlStopped(IgnoreRequest):
    """A request not downloaded because the crawl is stopping."""


@dataclass(frozen=True)
class StopSettings:
    """The ``NITPICKER_STOP_*`` settings, parsed once."""

    grace: float = 3.0
    """Seconds in-flight downloads may still take once the crawl stops."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.grace) and self.grace >= 0):
            raise ValueError(
                f"NITPICKER_STOP_GRACE must be 0 or more seconds, got {self.grace}"
            )

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> StopSettings:
        return cls(grace=settings.getfloat("NITPICKER_STOP_GRACE"))


class GracefulStop:
    """Drops queued requests, refuses new ones and cancels late downloads once the crawl stops."""

    def __init__(self, crawler: Crawler, config: StopSettings,
                 session: CrawlSession | None = None) -> None:
        self.crawler = crawler
        self.config = config
        self.session = session
        """The crawl session, closed at once when the reactor stops first (``None`` for a
        spider without one)."""
        self.stats = crawler.stats
        self.stopping = False
        self._fetches: dict[Request, asyncio.Task[Any]] = {}
        """The task awaiting each request's download (the one running the middlewares)."""
        self._watch: AsyncioLoopingCall | LoopingCall | None = None
        self._grace: DelayedCall | None = None
        self._shutdown_trigger: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GracefulStop:
        try:
            session: CrawlSession | None = crawl_session(crawler)
        except NotConfigured:
            session = None  # another spider: the stop still holds, there is no archive
        guard = cls(crawler, StopSettings.from_settings(crawler.settings), session)
        crawler.signals.connect(guard.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(guard.spider_closed, signal=signals.spider_closed)
        return guard

    # -- the stop --------------------------------------------------------------------------------

    def is_stopping(self) -> bool:
        """Whether the crawl was asked to stop: ``Crawler.stop_async`` (signals, Scrapyd), the
        engine closing the spider (Scrapy has no public flag for it) or the session halted at
        its deadline. Not a ``--max-pages`` halt: the requests queued then were leased within
        the budget, and they finish."""
        if not self.crawler.crawling:
            return True
        session: Any = getattr(self.crawler.spider, "session", None)
        if session is not None and session.halted in STOP_HALTS:
            return True
        engine_slot = getattr(self.crawler.engine, "_slot", None)
        return engine_slot is not None and engine_slot.closing is not None

    def stop(self) -> None:
        """No request starts from now on; in-flight downloads are cancelled after the grace."""
        if self.stopping:
            return
        self.stopping = True
        self._stop_watching()
        slots = self._slots()
        in_downloader = sum(len(slot.active) for slot in slots)
        dropped = sum(self._drop_queue(slot) for slot in slots)
        in_flight = in_downloader - dropped
        if dropped:
            self.stats.inc_value("nitpicker/stop/dropped", dropped)
        if dropped or in_flight:  # (a finished crawl closes with nothing left to stop)
            logger.info("stopping: %d queued request(s) dropped, %d download(s) in flight"
                        " given %g s", dropped, in_flight, self.config.grace)
        if in_flight:
            from twisted.internet import reactor

            clock: Any = reactor
            self._grace = clock.callLater(self.config.grace, self.cancel_in_flight)

    def _slots(self) -> list[Slot]:
        return list(self.crawler.engine.downloader.slots.values())

    def _drop_queue(self, slot: Slot) -> int:
        """Fail the requests waiting in ``slot``'s queue; they never start."""
        queued = list(slot.queue)
        slot.queue.clear()  # not popleft(): the throttle's queue counts those as transferring
        for request, waiting in queued:
            request.meta[META_STOPPED] = True
            stopped = CrawlStopped("the crawl stopped before this download")
            waiting.errback(Failure(stopped))  # type: ignore[no-untyped-call]
        return len(queued)

    def cancel_in_flight(self) -> None:
        """Cancel every download still running (the grace is over)."""
        self._grace = None
        cancelled = 0
        for slot in self._slots():
            # A transfer still running (one that has just ended is left to be recorded).
            for request in list(slot.transferring):
                fetch = self._fetches.pop(request, None)
                if fetch is None or fetch.done():
                    continue
                request.meta[META_STOPPED] = True
                download = request.meta.pop(META_DOWNLOAD_TASK, None)
                if isinstance(download, asyncio.Task):
                    download.cancel()
                fetch.cancel()
                cancelled += 1
        if cancelled:
            self.stats.inc_value("nitpicker/stop/cancelled", cancelled)
            logger.info("stopping: %d download(s) cancelled after %g s", cancelled,
                        self.config.grace)

    # -- downloader middleware -------------------------------------------------------------------

    def process_request(self, request: Request) -> None:
        if self.stopping or self.is_stopping():
            self.stop()
            request.meta[META_STOPPED] = True
            self.stats.inc_value("nitpicker/stop/refused")
            raise CrawlStopped("the crawl stopped before this download")
        fetch = asyncio.current_task()
        if fetch is not None:
            self._fetches[request] = fetch
            fetch.add_done_callback(lambda _: self._fetches.pop(request, None))

    # -- signals ---------------------------------------------------------------------------------

    def spider_opened(self) -> None:
        from twisted.internet import reactor

        self._watch = create_looping_call(self._look)
        self._watch.start(POLL_INTERVAL, now=False)
        clock: Any = reactor
        self._shutdown_trigger = clock.addSystemEventTrigger(
            "before", "shutdown", self.reactor_stopping
        )

    def _look(self) -> None:
        if self.is_stopping():
            self.stop()

    def _stop_watching(self) -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()
        self._watch = None

    def spider_closed(self) -> None:
        self._stop_watching()
        if self._grace is not None and self._grace.active():
            self._grace.cancel()
        self._grace = None
        self._fetches.clear()
        if self._shutdown_trigger is not None:
            from twisted.internet import reactor

            clock: Any = reactor
            clock.removeSystemEventTrigger(self._shutdown_trigger)
            self._shutdown_trigger = None

    def reactor_stopping(self) -> None:
        """The reactor stops before the spider closed (a second signal): close the archive now."""
        self._shutdown_trigger = None
        session = self.session
        if session is not None and session.writer is not None:
            logger.info("stopping at once: closing the archive")
            session.close("shutdown")
