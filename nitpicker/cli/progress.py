"""The crawl's progress display: done, the site and the external checks each done of known,
queued, errors, pages per second (rich)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from nitpicker.crawl.session import CrawlCounters, crawl_session

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from nitpicker.crawl.config import CrawlConfig

__all__ = ["CrawlProgress", "lanes"]


def lanes(counters: CrawlCounters, queued_site: int, queued_external: int) -> str:
    """``site 8/10 · external 2/40``: the in-scope URLs and the out-of-scope checks, each
    recorded of known (recorded and queued); the site's are fetched first."""
    site = counters.done - counters.external
    return (f"site {site}/{site + queued_site} · "
            f"external {counters.external}/{counters.external + queued_external}")


class CrawlProgress:
    """Polls the crawl session's counters from the reactor and redraws a progress line."""

    def __init__(self, crawler: Crawler, config: CrawlConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[lanes]} · queued {task.fields[queued]}"
                       " · errors {task.fields[errors]}"
                       " · {task.fields[rate]:.1f} URLs/s"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.description = escape(config.base_url)  # printed as is, never read as markup
        self.task = self.progress.add_task(
            self.description, total=None, queued=0, errors=0, rate=0.0,
            lanes=lanes(CrawlCounters(), 0, 0),
        )
        self._loop: Any = None
        self._started = time.monotonic()

    def start(self) -> None:
        from twisted.internet import task

        self.progress.start()
        self._started = time.monotonic()
        self._loop = task.LoopingCall(self.refresh)
        self._loop.start(0.25, now=True)

    def refresh(self) -> None:
        if self.crawler.spider is None:
            return  # not made yet
        session = crawl_session(self.crawler)
        counters = session.counters
        writer = session.writer
        frontier = writer.frontier if writer is not None else None
        pending = frontier.pending if frontier is not None else 0
        checks = frontier.pending_checks if frontier is not None else 0
        in_flight = max(counters.leased - counters.done, 0)
        queued = pending + in_flight
        checks_in_flight = max(counters.leased_checks - counters.external, 0)
        queued_external = min(checks + checks_in_flight, queued)
        elapsed = max(time.monotonic() - self._started, 1e-6)
        paused = " — paused: network outage, probing" if session.paused == "outage" else ""
        self.progress.update(
            self.task,
            description=self.description + paused,
            completed=counters.done,
            total=counters.done + queued,
            queued=queued,
            lanes=lanes(counters, queued - queued_external, queued_external),
            errors=counters.internal_errors + counters.external_errors,
            rate=counters.done / elapsed,
        )

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.refresh()
        self.progress.stop()
