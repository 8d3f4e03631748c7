"""One worker process of ``nitpicker crawl --workers N``: a Scrapy crawl over the shared archive.

Started by the coordinator (:mod:`nitpicker.cli.workers`) with the ``spawn`` start method: a
fresh interpreter, its own reactor. It crawls with the site spider, its session in the worker's
role (:class:`~nitpicker.crawl.worker_role.WorkerRole`), and reports its counters to the
coordinator over a pipe every :data:`REPORT_EVERY` seconds, and once more, final, when its crawl
has closed. It runs in a process group of its own and starts with SIGINT ignored: a Ctrl-C at
the terminal reaches the coordinator only, which passes it on to each worker once its crawl runs
(Scrapy's handler then installed; a second Ctrl-C, passed on too, stops them at once, as it
stops a single crawl).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.session import CrawlSession
    from nitpicker.crawl.worker_role import WorkerRole

__all__ = ["REPORT_EVERY", "WorkerReport", "run_worker", "worker_settings"]

REPORT_EVERY = 0.25

WorkerReport = dict[str, Any]
"""``{"counters": {...}, "final": bool, "halted": str | None, "closed_reason": str | None,
"failure": (code, detail, phase) | None, "error": str | None,
"skeletons": KnownSkeletons | None}``: ``skeletons`` in the final report only, the skeletons
of the pages the worker recorded (the coordinator's close clusters the templates without
parsing their snapshots again)."""


def _report(session: CrawlSession | None, *, final: bool, error: str | None = None) -> WorkerReport:
    if session is None:
        return {"counters": {}, "final": final, "halted": None, "closed_reason": None,
                "failure": None, "error": error, "skeletons": None}
    failure = session.failure
    return {
        "counters": asdict(session.counters),
        "final": final,
        "halted": session.halted,
        "closed_reason": session.closed_reason,
        "failure": (failure.code, failure.detail, failure.phase) if failure else None,
        "error": error,
        "skeletons": session.known_skeletons if final else None,
    }


def worker_settings(verbose: bool) -> Any:
    """A single crawl's settings (:func:`~nitpicker.cli.runner.scrapy_settings`), the scheduler
    the worker's variant: it leases from the frontier the other workers lease from too."""
    from nitpicker.cli.runner import scrapy_settings
    from nitpicker.crawl.shared_scheduler import SCHEDULER

    settings = scrapy_settings(verbose)
    settings.set("SCHEDULER", SCHEDULER, priority="project")  # over the add-on's
    return settings


def run_worker(config: CrawlConfig, role: WorkerRole, pipe: Connection, verbose: bool) -> None:
    """The worker's life: crawl until the shared frontier is done, report, exit."""
    os.setpgid(0, 0)
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from twisted.internet import task

    from nitpicker.crawl.session import crawl_session
    from nitpicker.spiders.site import SiteSpider

    process = CrawlerProcess(worker_settings(verbose))
    crawler = process.create_crawler(SiteSpider)
    errors: list[str] = []

    def session() -> CrawlSession | None:
        return crawl_session(crawler) if crawler.spider is not None else None

    def send() -> None:
        pipe.send(_report(session(), final=False))

    def on_failure(failure: Any) -> None:
        errors.append(str(failure.value) or type(failure.value).__name__)

    reporter: list[task.LoopingCall] = []

    def on_opened() -> None:  # the reactor exists now (Scrapy installs it with the crawl)
        reporter.append(task.LoopingCall(send))
        reporter[0].start(REPORT_EVERY, now=False)

    def on_closed() -> None:
        if reporter and reporter[0].running:
            reporter[0].stop()

    crawler.signals.connect(on_opened, signal=signals.spider_opened)
    crawler.signals.connect(on_closed, signal=signals.spider_closed)
    deferred = process.crawl(crawler, config=config, worker_role=role)
    deferred.addErrback(on_failure)
    try:
        process.start()
    finally:
        pipe.send(_report(session(), final=True, error=errors[0] if errors else None))
        pipe.close()
