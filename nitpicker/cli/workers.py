"""``nitpicker crawl --workers N``: N crawler processes crawling into one archive.

This process is the coordinator. It creates (or reopens, ``--resume``) the archive, holds its
lock for the whole run, starts the run's row and queues the roots, exactly as a single crawl
does; then it starts N worker processes (:mod:`nitpicker.cli.worker_process`), which attach to
the archive under its lock and lease rows from the one frontier
(:class:`~nitpicker.archive.shared_writer.SharedArchiveWriter`). It shows one progress line with
the workers' counters summed (they report over a pipe each), passes a Ctrl-C on to every worker,
and when the last worker has stopped it closes the run as a single crawl closes it: unfetched
leases back to pending, the URL order, the inbound-link index, the run's row, one file.

A worker that dies (``kill -9``) is reported; the others go on, and take its leased rows once
their lease expires (``NITPICKER_LEASE_SECONDS``, default 60). Shared between the workers:
``--max-pages`` (one counter in shared memory), the trap cap's counts (a file the coordinator
makes for the run), and the host's politeness budget (``--parallels`` and ``--interval`` are
split between the workers: :class:`~nitpicker.crawl.worker_role.WorkerRole`).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from dataclasses import fields
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.archive.frontier_store import queued as frontier_queued
from nitpicker.archive.trap_counts import TrapCounts
from nitpicker.archive.writer import ArchiveError
from nitpicker.cli.runner import CrawlResult, scrapy_settings
from nitpicker.crawl.config import ConfigError
from nitpicker.crawl.run_failure import RunFailure
from nitpicker.crawl.session import CrawlCounters, CrawlSession
from nitpicker.crawl.worker_role import DEFAULT_LEASE_SECONDS, LeaseBudget, WorkerRole
from nitpicker.default_settings import set_defaults

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from nitpicker.cli.worker_process import WorkerReport
    from nitpicker.crawl.config import CrawlConfig

__all__ = ["LEASE_SECONDS_ENV", "lease_seconds", "run_workers"]

logger = logging.getLogger(__name__)

LEASE_SECONDS_ENV = "NITPICKER_LEASE_SECONDS"

"""Of the URLs not done, the out-of-scope checks (``FollowMode.METADATA``)."""


def lease_seconds() -> float:
    """The workers' lease length: ``NITPICKER_LEASE_SECONDS`` or 60 s."""
    raw = os.environ.get(LEASE_SECONDS_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_LEASE_SECONDS
    except ValueError:
        raise ValueError(f"{LEASE_SECONDS_ENV} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{LEASE_SECONDS_ENV} must be positive, got {raw!r}")
    return value


class _Worker:
    """One worker process as the coordinator sees it."""

    def __init__(self, process: BaseProcess, pipe: Connection, role: WorkerRole) -> None:
        self.process = process
        self.pipe: Connection | None = pipe
        self.role = role
        self.report: WorkerReport | None = None
        self.final = False
        self._owed: list[int] = []
        """Signals that came before the worker could take them (its crawl not running yet)."""

    def signal(self, signum: int) -> None:
        """Pass a signal on: at once when the worker's crawl runs (its first report came:
        Scrapy's handlers are installed), else as soon as it does."""
        if self.report is None:
            self._owed.append(signum)
            return
        if self.process.is_alive() and self.process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signum)

    def receive(self) -> None:
        assert self.pipe is not None
        try:
            self.report = self.pipe.recv()
        except EOFError:
            self.pipe.close()
            self.pipe = None
            return
        self.final = bool(self.report and self.report.get("final"))
        owed, self._owed = self._owed, []
        for signum in owed:
            self.signal(signum)


def _sum(workers: list[_Worker]) -> CrawlCounters:
    total = CrawlCounters()
    for worker in workers:
        counters = worker.report["counters"] if worker.report else {}
        for field in fields(CrawlCounters):
            setattr(total, field.name, getattr(total, field.name) + counters.get(field.name, 0))
    return total


def run_workers(config: CrawlConfig, count: int, *, verbose: bool = False,
                silent: bool = False) -> CrawlResult:
    """Crawl with ``count`` worker processes; blocks until the last one has stopped."""
    from nitpicker.cli.worker_process import run_worker
    from nitpicker.cli.workers_progress import WorkersProgress

    result = CrawlResult()
    ttl = lease_seconds()
    session = CrawlSession(config)
    started = time.monotonic()
    try:
        session.open()  # the archive, its lock, the run's row, the roots: as a single crawl
    except ArchiveError as exc:
        result.failure = str(exc)
        return result
    writer = session.archive
    writer.commit()
    context = multiprocessing.get_context("spawn")
    budget = context.Value("q", 0) if config.max_pages is not None else None
    trap_dir = Path(tempfile.mkdtemp(prefix="nitpicker-traps-")) if config.dedupe_cap else None
    if trap_dir is not None:
        # Made (WAL mode, its table) before the workers start: N of them switching a new file
        # to WAL at once could meet "database is locked".
        TrapCounts(trap_dir / "trap_counts.sqlite").close()
    workers: list[_Worker] = []
    interrupts = 0

    def forward(signum: int, frame: Any) -> None:
        nonlocal interrupts
        interrupts += 1
        for worker in workers:
            worker.signal(signum)

    # The workers start with SIGINT ignored (inherited through exec): a Ctrl-C at the terminal,
    # or one passed on before a worker's crawl runs, never interrupts its start-up with a
    # traceback; Scrapy installs its own handler when the crawl starts.
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    progress = None if silent else WorkersProgress(config, count)
    try:
        for index in range(count):
            role = WorkerRole(
                index, count, owner=f"{os.getpid()}.{index}", lease_seconds=ttl,
                budget=LeaseBudget(config.max_pages, budget) if budget is not None
                and config.max_pages is not None else None,
                trap_counts=trap_dir / "trap_counts.sqlite" if trap_dir else None,
            )
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=run_worker, args=(config, role, sender, verbose),
                                      name=f"nitpicker-worker-{index}")
            process.start()
            sender.close()
            workers.append(_Worker(process, receiver, role))
        for sig in previous:
            signal.signal(sig, forward)
        _read_settings(session, verbose)  # while the workers start
        if progress is not None:
            progress.start()
        _watch(workers, progress, writer.conn, silent=silent)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if progress is not None:
            progress.stop()
        for worker in workers:
            worker.process.join()
        if trap_dir is not None:
            shutil.rmtree(trap_dir, ignore_errors=True)
    result.elapsed = time.monotonic() - started
    _close(session, workers, result, interrupted=interrupts > 0)
    return result


def _read_settings(session: CrawlSession, verbose: bool) -> None:
    """The settings the run's close reads (the site checks, the close reader's threshold), as
    each worker reads them; with ``--verbose`` this process logs to stderr as the workers do."""
    settings = scrapy_settings(verbose)
    set_defaults(settings)  # as the add-on sets them in each worker
    with contextlib.suppress(ConfigError):  # a bad one: each worker reports it, the run fails
        session.read_settings(settings)
    if verbose:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format="%(asctime)s [%(name)s] %(levelname)s: %(message)s")


def _watch(workers: list[_Worker], progress: Any, conn: sqlite3.Connection, *,
           silent: bool) -> None:
    """Read the workers' reports until every one has stopped; show the sum."""
    running = {worker.process.sentinel: worker for worker in workers}
    while running or any(worker.pipe is not None for worker in workers):
        pipes = {worker.pipe: worker for worker in workers if worker.pipe is not None}
        ready = wait([*pipes, *running], timeout=0.5)
        for handle in ready:
            if handle in pipes:
                pipes[handle].receive()
            elif handle in running:
                worker = running.pop(handle)
                _stopped(worker, progress, silent=silent)
        if progress is not None:
            queued = queued_external = 0
            with contextlib.suppress(sqlite3.Error):
                queued, queued_external = frontier_queued(conn)
            progress.update(_sum(workers), queued, queued_external)


def _stopped(worker: _Worker, progress: Any, *, silent: bool) -> None:
    """A worker process ended: say so when it died rather than finished."""
    worker.process.join()
    code = worker.process.exitcode
    if code == 0:
        return
    message = (f"worker {worker.role.index} (PID {worker.process.pid}) stopped with exit code "
               f"{code}; the other workers take its URLs once their lease expires")
    logger.warning(message)
    if not silent:
        if progress is not None:
            progress.note(f"Warning: {message}")
        else:
            print(f"Warning: {message}", file=sys.stderr)


def _lost(session: CrawlSession, workers: list[_Worker]) -> RunFailure | None:
    """``workers_lost`` when workers died (no final report: ``kill -9``, out of memory) and
    URLs are left that no worker will fetch (all of them died, or the last ones did too)."""
    lost = [worker for worker in workers if not worker.final]
    if not lost:
        return None
    try:
        left, _checks = frontier_queued(session.archive.conn)
    except sqlite3.Error:
        return None  # the close reports what is wrong with the archive
    if not left:
        return None
    codes = ", ".join(f"worker {worker.role.index}: {worker.process.exitcode}" for worker in lost)
    return RunFailure("workers_lost", f"{len(lost)} of {len(workers)} worker process(es) died "
                      f"({codes}) with {left} URL(s) left; --resume goes on")


def _close(session: CrawlSession, workers: list[_Worker], result: CrawlResult, *,
           interrupted: bool) -> None:
    """Close the run as a single crawl closes it, with the workers' outcome."""
    reports = [worker.report for worker in workers if worker.report is not None]
    session.counters = result.counters = _sum(workers)
    errors = [report["error"] for report in reports if report.get("error")]
    if errors:
        result.failure = errors[0]  # a worker could not run its crawl: one line
    failures = [report["failure"] for report in reports if report.get("failure")]
    halted = next((report["halted"] for report in reports
                   if report.get("halted") and report["halted"] != "failed"), None)
    if failures:
        session.failure = RunFailure(*failures[0])
    elif not interrupted and halted is None:
        session.failure = _lost(session, workers)
    session.halted = halted
    reason = "shutdown" if interrupted else halted or "finished"  # as Scrapy's close reason
    if session.failure is not None:
        reason = "failed"
    for report in reports:
        if report.get("skeletons") is not None:
            session.archive.templates.merge(report["skeletons"])
    session.close(reason)
    result.run_failure = session.failure
    result.stop_reason = halted or reason
