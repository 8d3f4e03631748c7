"""ArchiveWorker: the archive's page records written on a thread of their own.

SQLite's B-tree work and the snapshots' zlib compression release the GIL, so writing pages on a
second thread lets them run on a second core while the reactor thread fetches and parses the
next pages. Jobs run in the order they were submitted, one at a time; a page, its links and its
frontier acknowledgement stay one job, so they still commit together. The queue is bounded: a
worker that falls behind slows the crawl down instead of holding pages in memory.

A job that fails (disk full, a corrupt file) stops the worker: later jobs are dropped, and
``on_error`` is told once, on the reactor thread. Killing the process loses what the queue held
and the uncommitted batch, whose frontier rows are still leased and are fetched again on resume.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["REACTOR_NICENESS", "ArchiveWorker", "yield_to_archive_thread"]

logger = logging.getLogger(__name__)

QUEUE_SIZE = 256
"""Pages waiting to be written before ``submit`` blocks the caller."""

SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits (Python's default is 0.005).

The writer thread gives the GIL up for each SQLite statement and for zlib, and takes it back
after; while the reactor thread runs Python (nearly always), taking it back waits until the
reactor is made to let go: up to one interval. A tenth of the default made a 5,000-page crawl
~8 % faster when the HTML parser still handed the GIL back for every tag; with libxml2
building the tree in one call (session 15), 2 ms was 3 % slower and 0.1 ms no faster."""

REACTOR_NICENESS = 5
"""How much nicer than its archive thread a ``--workers`` process runs its reactor thread.

The workers share the archive's one write lock, and a worker's archive thread holds it while
it writes. At the same priority the holder kept losing its core, and the GIL, to the busy
reactor threads (of both workers): it held the lock ~2.5 times as long as it ran, and the other
worker waited. Nicer reactors let the holder run when it can: the lock's hold time halved."""

_STOP = object()


def yield_to_archive_thread(niceness: int = REACTOR_NICENESS) -> None:
    """Make the calling thread (a worker's reactor thread) ``niceness`` nicer, on Linux, where
    a nice value is a thread's own: the archive thread, started before, keeps its priority
    (threads the caller starts later inherit the new one). Elsewhere nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except OSError as exc:
        logger.debug("could not lower the reactor thread's priority: %s", exc)


class ArchiveWorker:
    """Runs submitted write jobs in order on one background thread."""

    def __init__(self, on_error: Callable[[BaseException], None], *,
                 queue_size: int = QUEUE_SIZE) -> None:
        self._on_error = on_error
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._low = queue_size // 2
        self.error: BaseException | None = None
        """The first job's exception; no job runs after it."""
        self.submitted = 0
        """Jobs submitted so far."""
        self.finished = 0
        """Jobs run (or dropped after an error) so far, in submission order: every job
        submitted before the ``n``-th has run once ``finished >= n``."""
        self._thread = threading.Thread(target=self._run, name="nitpicker-archive", daemon=True)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._thread.start()

    @property
    def busy(self) -> bool:
        """Whether a submitted job has not finished yet."""
        return self._queue.unfinished_tasks > 0

    def has_queued(self) -> bool:
        """Whether jobs wait behind the one running."""
        return self._queue.qsize() > 0

    def submit(self, job: Callable[..., Any], *args: Any) -> None:
        """Run ``job(*args)`` on the worker thread, after every job submitted before it."""
        if self.error is None:
            self.submitted += 1
            jobs = self._queue
            if jobs.full():  # let the writer catch up by half the queue, not one job
                with jobs.not_full:
                    while jobs._qsize() > self._low and self._thread.is_alive():  # (its lock held)
                        jobs.not_full.wait(0.1)
            jobs.put((job, args))

    def drain(self) -> None:
        """Wait until every job submitted so far has run."""
        if self._thread.is_alive():
            self._queue.join()

    def stop(self) -> None:
        """Run what is queued, then end the thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()

    def _run(self) -> None:
        while True:
            entry = self._queue.get()
            try:
                if entry is _STOP:
                    return
                if self.error is None:
                    job, args = entry
                    job(*args)
            except Exception as exc:  # noqa: BLE001 (any failure ends the writes; the run reports it)
                self.error = exc
                try:
                    self._on_error(exc)
                except Exception:
                    logger.exception("archive worker: error handler failed")
            finally:
                if entry is not _STOP:
                    self.finished += 1
                self._queue.task_done()
