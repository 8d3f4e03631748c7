"""Running a crawl in this process, with a rich progress display."""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nitpicker.crawl.session import CrawlCounters, crawl_session
from nitpicker.default_settings import from_environment

if TYPE_CHECKING:
    from nitpicker.archive.lock import ArchiveLock
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.run_failure import RunFailure

__all__ = ["CrawlResult", "run_crawl"]


@dataclass
class CrawlResult:
    counters: CrawlCounters = field(default_factory=CrawlCounters)
    elapsed: float = 0.0
    failure: str | None = None
    """Why the crawl could not run (one line), or ``None``."""
    traceback: str | None = None
    stop_reason: str | None = None
    run_failure: RunFailure | None = None
    """Why the run failed (disk full, database error, …), or ``None``."""
    interrupted: bool = False
    """Ctrl-C came before the crawl started (``run_crawl`` then raises ``KeyboardInterrupt``)."""


def scrapy_settings(verbose: bool) -> Any:
    """The project's settings, the ``NITPICKER_*`` settings given as environment variables over
    them (:func:`~nitpicker.default_settings.from_environment`), and the log level."""
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("nitpicker.settings", priority="project")
    settings.setdict(from_environment(os.environ), priority="project")
    settings.set("LOG_LEVEL", "DEBUG" if verbose else "CRITICAL", priority="cmdline")
    return settings


def run_crawl(config: CrawlConfig, *, verbose: bool = False, silent: bool = False,
              lock: ArchiveLock | None = None, frontier: str | None = None) -> CrawlResult:
    """Crawl with ``config`` in a Scrapy ``CrawlerProcess``; blocks until the crawl ends.

    ``lock``: the archive's lock, already held by the caller (``--append``); it stays held.
    ``frontier``: a shared frontier's URL (``--frontier``): the archive is one shard.
    """
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    from nitpicker.spiders.site import SiteSpider

    result = CrawlResult()
    process = CrawlerProcess(scrapy_settings(verbose))
    crawler = process.create_crawler(SiteSpider)

    def on_closed(spider: Any, reason: str) -> None:
        result.stop_reason = reason

    crawler.signals.connect(on_closed, signal=signals.spider_closed)
    progress = None
    if not silent:  # rich, only when it draws
        from nitpicker.cli.progress import CrawlProgress

        progress = CrawlProgress(crawler, config)

    def on_failure(failure: Any) -> None:
        exc = failure.value
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C while the spider was being made
            result.interrupted = True
            return
        result.failure = str(exc) or type(exc).__name__
        result.traceback = "".join(traceback.format_exception(exc))

    started = time.monotonic()
    extra = {"frontier": frontier} if frontier else {}
    deferred = process.crawl(crawler, config=config, archive_lock=lock, **extra)
    deferred.addErrback(on_failure)
    if result.interrupted:  # before Scrapy handles SIGINT, so before the archive was created
        raise KeyboardInterrupt
    if progress is not None:
        progress.start()
    try:
        process.start()
    finally:
        if progress is not None:
            progress.stop()
    result.elapsed = time.monotonic() - started
    if crawler.spider is not None:
        session = crawl_session(crawler)
        result.counters = session.counters
        result.run_failure = session.failure
        # A second signal stops the reactor before the spider closes: the archive was
        # closed on the way out, with this reason.
        result.stop_reason = result.stop_reason or session.closed_reason
    return result
