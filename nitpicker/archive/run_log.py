"""RunLog: the archive's ``runs``, ``trap_events``, ``outages`` and ``inventory_runs`` tables,
the history of a crawl's runs.

Each run (a crawl, a resume, an append, a retry, a recrawl) is a row, ``running`` from its
start until its end records the status, the stop reason, the counts and, when it failed, the
error code, detail and phase; a run with an end-of-run retry pass records how many URLs it
fetched again and how many recovered (:meth:`RunLog.record_auto_retry`). A run whose process died without ending it is found by the watchdog
(:meth:`RunLog.mark_lost`) when the archive is next opened for writing. The trap cap's
firings are its audit log, and the state a resumed run's trap cap starts from
(:meth:`RunLog.capped_signatures`). The network outages a run waited out are rows of their
own, started when one is confirmed and ended when it is over. Each ``--inventory`` file a crawl
seeded has its audit record (:meth:`RunLog.record_inventory_run`).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Protocol

from nitpicker.archive.connection import now, serialised
from nitpicker.archive.lock import pid_alive

if TYPE_CHECKING:
    from collections.abc import Collection

    from nitpicker.archive.batch import Batch

__all__ = ["InventoryCounts", "RunLog"]


class InventoryCounts(Protocol):
    """What an ``--inventory`` file seeded, as its audit record counts it (the crawl's
    :class:`~nitpicker.crawl.inventory.InventorySeed`)."""

    @property
    def urls(self) -> int: ...

    @property
    def new_pages(self) -> int: ...

    @property
    def new_resources(self) -> int: ...

    @property
    def scope_skipped(self) -> int: ...

    @property
    def excluded(self) -> Collection[str]: ...


class RunLog:
    """Starts and ends this process's run; records the trap cap's firings."""

    def __init__(self, archive: Batch) -> None:
        self._conn = archive.conn
        self._mutex = archive.mutex
        self._begin = archive.begin
        self._commit = archive.commit
        self.run_id: int | None = None
        """This process's run (``runs.id``), once started."""

    @serialised
    def start(self, kind: str) -> int:
        """Start a run of ``kind`` (``crawl``, ``resume``, ``append``, ``retry``, ``recrawl``);
        committed at once."""
        self._begin()
        cur = self._conn.execute(
            "INSERT INTO runs(kind, pid, started_at, status) VALUES (?, ?, ?, 'running')",
            (kind, os.getpid(), now()),
        )
        self._commit()
        self.run_id = int(cur.lastrowid or 0)
        return self.run_id

    @serialised
    def end(self, status: str, stop_reason: str, pages_done: int, errors: int,
            error_code: str | None = None, error_detail: str | None = None,
            phase: str | None = None) -> None:
        """End this run with its outcome; committed at once."""
        self._begin()
        self._conn.execute(
            "UPDATE runs SET ended_at = ?, status = ?, stop_reason = ?, pages_done = ?, errors = ?,"
            " error_code = ?, error_detail = ?, phase = ? WHERE id = ?",
            (now(), status, stop_reason, pages_done, errors, error_code, error_detail, phase,
             self.run_id),
        )
        self._commit()

    @serialised
    def record_auto_retry(self, retried: int, recovered: int, *, commit: bool = True) -> None:
        """The end-of-run retry pass of this run: the URLs it fetched again and those that
        recovered (committed at once, or with the open batch: ``commit=False``)."""
        self._begin()
        self._conn.execute("UPDATE runs SET auto_retried = ?, auto_recovered = ? WHERE id = ?",
                           (retried, recovered, self.run_id))
        if commit:
            self._commit()

    @serialised
    def mark_lost(self) -> int:
        """The watchdog: runs still ``running`` whose process is gone become ``instance_lost``."""
        rows = self._conn.execute("SELECT id, pid FROM runs WHERE status = 'running'").fetchall()
        lost = [run_id for run_id, pid in rows if pid != os.getpid() and not pid_alive(pid)]
        if lost:
            self._begin()
            self._conn.executemany(
                "UPDATE runs SET status = 'failed', error_code = 'instance_lost',"
                " error_detail = 'the crawling process ended without closing its run',"
                " ended_at = coalesce(ended_at, ?) WHERE id = ?",
                [(now(), run_id) for run_id in lost],
            )
            self._commit()
        return len(lost)

    @serialised
    def record_trap_event(self, signature: str, parent_path: str, count: int, first_url: str,
                          last_url: str, *, threshold: int | None = None,
                          trap_signals: tuple[str, ...] = (),
                          legit_signals: tuple[str, ...] = ()) -> None:
        """The audit log of the trap cap: one row each time a signature reaches the cap
        (in the open batch, with the page that made it fire), with its score: the firing
        page's threshold and the trap and legit signals that gave it."""
        self._begin()
        self._conn.execute(
            "INSERT INTO trap_events(run_id, signature, parent_path, count, first_url, last_url,"
            " created_at, threshold, trap_signals, legit_signals)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, signature, parent_path, count, first_url, last_url, now(), threshold,
             json.dumps(list(trap_signals)), json.dumps(list(legit_signals))),
        )

    @serialised
    def record_inventory_run(self, path: str, label: str, sha256: str, lines_read: int,
                             seed: InventoryCounts) -> None:
        """The audit record of an ``--inventory`` file, in the open batch (with its rows)."""
        self._begin()
        self._conn.execute(
            "INSERT INTO inventory_runs(run_id, label, path, sha256, lines_read, urls,"
            " new_pages, new_resources, scope_skipped, excluded, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, label, path, sha256, lines_read, seed.urls, seed.new_pages,
             seed.new_resources, seed.scope_skipped, len(seed.excluded), now()),
        )

    @serialised
    def capped_signatures(self) -> list[str]:
        """The signatures the trap cap capped in this archive (any run, this one included),
        each once, in the order they were first capped: what a resumed trap cap restores."""
        return [signature for (signature,) in self._conn.execute(
            "SELECT signature FROM trap_events GROUP BY signature ORDER BY min(id)")]

    @serialised
    def start_outage(self, started_at: str, error: str, probe_url: str,
                     worker: int | None = None) -> int:
        """A network outage confirmed (its row, committed at once): the run of this process,
        or for a worker of ``--workers N`` (which starts no run) the newest run."""
        self._begin()
        cur = self._conn.execute(
            "INSERT INTO outages(run_id, worker, started_at, error, probe_url)"
            " VALUES (coalesce(?, (SELECT max(id) FROM runs)), ?, ?, ?, ?)",
            (self.run_id, worker, started_at, error, probe_url),
        )
        self._commit()
        return int(cur.lastrowid or 0)

    @serialised
    def end_outage(self, outage_id: int, *, seconds: float, outcome: str, probes: int,
                   requeued: int) -> None:
        """The outage is over (``resumed``, ``gave_up``, ``stopped``); committed at once."""
        self._begin()
        self._conn.execute(
            "UPDATE outages SET ended_at = ?, seconds = ?, outcome = ?, probes = ?, requeued = ?"
            " WHERE id = ?",
            (now(), round(seconds, 3), outcome, probes, requeued, outage_id),
        )
        self._commit()
