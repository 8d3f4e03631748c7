"""Running one plugin over an archive's snapshots: bounded, resumable, never a process per page.

- A thread pool of ``plugin.concurrency`` threads calls ``each_page``; at most twice that many
  snapshots are in flight (read from the archive ``batch`` at a time, never all at once), so
  memory does not grow with the archive.
- A call that raises is made once more for the same page; a second failure is a plugin error
  recorded for that page, and the run goes on. A snapshot that cannot be read (a corrupt blob)
  is that page's error too, without a call.
- Results are written on the calling thread, the store's only writer, in batches: Ctrl-C
  (``KeyboardInterrupt``) keeps every page written so far and re-raises once the run's row is
  closed as ``interrupted``.
- Pages the same plugin version analysed with the same settings are skipped unless ``force``.
- A plugin with an ``each_url`` is then called, on this thread, for every fetched URL
  (internal and external), with the same retry, skipping and recording.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from nitpicker.analyze.plugin import NEEDS_REVIEW, STATUSES, Findings, PageValue, Violation
from nitpicker.archive.analysis_store import URL, RunKey, UnreadableSnapshot

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from nitpicker.analyze.plugin import AnalyzePlugin, PageUrl, Snapshot
    from nitpicker.archive.analysis_store import AnalysisStore

_Item = TypeVar("_Item", "Snapshot", "PageUrl")

__all__ = ["PluginRun", "Progress", "RunSummary", "analyze_plugin"]

logger = logging.getLogger(__name__)

IN_FLIGHT_PER_THREAD = 2
"""Snapshots in flight per pool thread: one being analysed, one waiting."""


class Progress(Protocol):
    """What the runner reports while it runs (the CLI draws it with rich)."""

    def start(self, name: str, label: str, total: int) -> None: ...

    def advance(self, name: str, findings: int, error: bool) -> None: ...

    def finish(self, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class PluginRun:
    """A plugin to run: its name, the object its factory made, and the settings it got."""

    name: str
    plugin: AnalyzePlugin
    settings: Mapping[str, Any]


@dataclass(slots=True)
class RunSummary:
    """How one plugin's run went."""

    name: str
    label: str
    outcome: str = "running"  # finished, interrupted, failed
    done: int = 0
    skipped: int = 0
    urls: int | None = None  # URLs each_url was called on (None: the plugin has none)
    errors: int = 0
    values: int = 0
    violations: int = 0
    reviews: int = 0  # findings the engine could not decide (status needs-review)
    elapsed: float = 0.0
    detail: str | None = None

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0


_Outcome = tuple[Findings | None, str | None]


def _analyse(call: Callable[[_Item], Findings | None], item: _Item) -> _Outcome:
    """``each_page`` on a snapshot (or ``each_url`` on a URL), once more if it raises:
    (findings, None), or (None, the second failure in one line)."""
    for attempt in (1, 2):
        try:
            result = call(item)
        except Exception as exc:  # the plugin's own failure, whatever it is: retried, recorded
            logger.debug("%s failed on %s (attempt %d)", getattr(call, "__qualname__", call),
                         item.url, attempt, exc_info=True)
            if attempt == 2:
                return None, one_line(exc)
            continue
        problem = _malformed(result)
        if problem:
            return None, f"{getattr(call, '__name__', 'the plugin')} returned {problem}"
        return result, None
    raise AssertionError("unreachable")


_SCALARS = (str, int, float, bool, type(None))


def _malformed(result: object) -> str | None:
    """What is wrong with a plugin's answer (the archive stores only what the contract
    allows), or ``None``."""
    if result is None:
        return None
    if not isinstance(result, Findings):
        return f"{type(result).__name__}, not Findings or None"
    for key, cell in result.values.items():
        if not isinstance(key, str) or not isinstance(cell, PageValue):
            return f"the value {key!r}: not a PageValue under a string key"
        if not isinstance(cell.value, _SCALARS) or not isinstance(cell.note, str | None):
            return (f"the value {key!r}: {type(cell.value).__name__} (a value is a string, "
                    "number, boolean or None; a note a string or None)")
    for violation in result.violations:
        if not isinstance(violation, Violation):
            return f"a violation that is a {type(violation).__name__}, not a Violation"
        if not all(isinstance(getattr(violation, name), str)
                   for name in ("validator", "severity", "rule", "message")):
            return "a violation whose validator, severity, rule or message is not a string"
        if violation.status not in STATUSES:
            return (f"a violation whose status is {violation.status!r}, not one of "
                    f"{', '.join(STATUSES)}")
        if not all(isinstance(getattr(violation, name), str | None)
                   for name in ("impact", "help_url", "element", "summary")):
            return "a violation whose impact, help_url, element or summary is not a string"
        if not isinstance(violation.tags, tuple | list) or not all(
                isinstance(tag, str) for tag in violation.tags):
            return "a violation whose tags are not a sequence of strings"
    return None


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 500 else text[:499] + "…"


def analyze_plugin(store: AnalysisStore, run: PluginRun, *, force: bool, progress: Progress,
                   batch: int = 50) -> RunSummary:
    """Run one plugin over the archive's pending snapshots and record what it finds."""
    plugin = run.plugin
    label = str(getattr(plugin, "label", "") or run.name)
    summary = RunSummary(run.name, label)
    key = RunKey(run.name, str(plugin.version), run.settings)
    pending = store.pending_count(key, force=force)
    summary.skipped = store.snapshot_count() - pending
    run_id = store.start_run(key, run.settings, dict(plugin.headers))
    store.commit()
    started = time.monotonic()
    unwritable = False
    progress.start(run.name, label, pending)
    try:
        try:
            plugin.open()
        except Exception as exc:  # an engine that cannot start: the whole run fails, one line
            logger.debug("plugin %s failed to open", run.name, exc_info=True)
            summary.outcome = "failed"
            summary.detail = one_line(exc)
            return summary
        try:
            _run_pages(store, run, key, run_id, summary, force=force, progress=progress,
                       batch=batch)
            each_url = getattr(plugin, "each_url", None)
            if callable(each_url):
                _run_urls(store, run, each_url, key, run_id, summary, force=force,
                          progress=progress)
            summary.outcome = "finished"
        except KeyboardInterrupt:
            summary.outcome = "interrupted"
            raise
        except sqlite3.Error:  # the archive cannot be written (a full disk): the caller's
            unwritable = True
            raise
        finally:
            try:
                plugin.close()
            except Exception:  # a failing close must not lose the results: logged only
                logger.warning("plugin %s failed to close", run.name, exc_info=True)
    finally:
        summary.elapsed = time.monotonic() - started
        if summary.outcome == "running":  # an unexpected exception: a bug, re-raised
            summary.outcome = "failed"
        if not unwritable:  # else the run's row stays "running": the next run marks it lost
            store.end_run(run_id, summary.outcome, done=summary.done, skipped=summary.skipped,
                          errors=summary.errors, detail=summary.detail)
            store.commit()
        progress.finish(run.name)
    return summary


def _run_pages(store: AnalysisStore, run: PluginRun, key: RunKey, run_id: int,
               summary: RunSummary, *, force: bool, progress: Progress, batch: int) -> None:
    plugin = run.plugin
    threads = int(plugin.concurrency)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"analyze-{run.name}")
    in_flight: dict[Future[_Outcome], Snapshot] = {}

    def collect(finished: set[Future[_Outcome]]) -> None:
        for future in finished:
            snapshot = in_flight.pop(future)
            _keep(store, run, key, run_id, summary, snapshot, future.result(), progress)
            summary.done += 1
        store.maybe_commit()

    try:
        snapshots = store.pending_snapshots(key, force=force, batch=batch)
        while True:
            # make room first, then take the next snapshot: never more than the bound in hand
            while len(in_flight) >= threads * IN_FLIGHT_PER_THREAD:
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                collect(finished)
            snapshot = next(snapshots, None)
            if snapshot is None:
                break
            if isinstance(snapshot, UnreadableSnapshot):
                _keep(store, run, key, run_id, summary, snapshot, (None, snapshot.error),
                      progress)
                summary.done += 1
                continue
            in_flight[pool.submit(_analyse, plugin.each_page, snapshot)] = snapshot
        while in_flight:
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            collect(finished)
    except BaseException as exc:
        # Ctrl-C: keep what has finished, drop what has not started; the pool's threads end
        # after their current page (the plugin's close() may end it sooner). An archive that
        # cannot be written (a full disk) keeps nothing more.
        try:
            if not isinstance(exc, sqlite3.Error):
                collect({future for future in in_flight
                         if future.done() and not future.cancelled()})
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    store.commit()
    pool.shutdown(wait=True)


def _keep(store: AnalysisStore, run: PluginRun, key: RunKey, run_id: int, summary: RunSummary,
          item: Snapshot | PageUrl | UnreadableSnapshot, outcome: _Outcome, progress: Progress,
          phase: str = "page", task: str | None = None) -> None:
    """Record one call's outcome and count it."""
    findings, error = outcome
    if error is not None:
        store.record_error(key, run_id, item, error, phase)
        summary.errors += 1
        logger.info("[%s] failed to analyse %s: %s", run.name, item.url, error)
    else:
        store.record(key, run_id, item, findings, phase)
    found = 0
    if findings is not None:
        reviews = sum(1 for violation in findings.violations
                      if violation.status == NEEDS_REVIEW)
        summary.values += len(findings.values)
        summary.violations += len(findings.violations) - reviews
        summary.reviews += reviews
        found = len(findings.values) + len(findings.violations)
    progress.advance(task or run.name, found, error is not None)


def _run_urls(store: AnalysisStore, run: PluginRun, each_url: Callable[[PageUrl], Any],
              key: RunKey, run_id: int, summary: RunSummary, *, force: bool,
              progress: Progress) -> None:
    """``each_url`` on every fetched URL not yet seen, one at a time on this thread."""
    task = f"{run.name} (URLs)"
    summary.urls = 0
    progress.start(task, task, store.pending_url_count(key, force=force))
    try:
        for target in store.pending_urls(key, force=force):
            _keep(store, run, key, run_id, summary, target, _analyse(each_url, target),
                  progress, URL, task)
            summary.urls += 1
            store.maybe_commit()
    finally:
        store.commit()
        progress.finish(task)
