"""The network outages a crawl waited out (:mod:`nitpicker.middlewares.outage`).

The rows of ``outages`` (migration ``0017_outages``), oldest first. An archive written before
that migration has no such table, and a read-only connection never creates it: it simply has
no outages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_integer,
    check_paging,
    fetch_all,
    fetch_one,
    has_tables,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["OUTAGE_OUTCOMES", "Outage", "list_outages"]

OUTAGE_OUTCOMES = ("resumed", "gave_up", "stopped")
"""How an outage ended: a probe answered and the crawl went on; the run gave up
(``NITPICKER_OUTAGE_GIVE_UP``, ``error_code = outage``); the crawl stopped during it."""


class Outage(TypedDict):
    run_id: int | None
    """The run (``runs.id``) it paused."""
    worker: int | None
    """``crawl --workers N``: the worker process that paused (from 0); ``None`` otherwise."""
    started_at: str
    """The first connection failure of the outage (UTC, ISO 8601)."""
    ended_at: str | None
    """When it ended; ``None`` when its process died during it."""
    seconds: float | None
    """How long the crawl was paused."""
    outcome: str | None
    """One of :data:`OUTAGE_OUTCOMES`; ``None`` when it never ended."""
    probes: int
    """Probes sent, the one that confirmed the outage included."""
    requeued: int
    """URLs that failed during it and were not recorded: fetched again when it ended
    (``resumed``), left pending for ``--resume`` otherwise."""
    error: str
    """The failure that started it (``Connection refused: …``, ``DNS lookup failed: …``)."""
    probe_url: str
    """The URL probed."""


_COLUMNS = ("run_id, worker, started_at, ended_at, seconds, outcome, probes, requeued, error,"
            " probe_url")
_LIST_SQL = f"SELECT {_COLUMNS} FROM outages{{where}} ORDER BY id LIMIT ? OFFSET ?"
_COUNT_SQL = "SELECT count(*) FROM outages{where}"
_OF_RUN = " WHERE run_id = ?"


def list_outages(conn: sqlite3.Connection, *, run_id: int | None = None, limit: int = 100,
                 offset: int = 0) -> Paged[Outage]:
    """Every network outage the crawl paused for, oldest first (``run_id``: that run's only):
    when, how long, how it ended, the probes sent, the URLs fetched again, what started it."""
    check_paging(limit, offset)
    check_integer("run_id", run_id, "run id")
    if not has_tables(conn, "outages"):
        return paged([], 0, limit, offset)
    where, args = (_OF_RUN, (run_id,)) if run_id is not None else ("", ())
    rows = fetch_all(conn, _LIST_SQL.format(where=where), (*args, limit, offset))
    total = fetch_one(conn, _COUNT_SQL.format(where=where), args)
    items: list[Outage] = [
        {"run_id": run, "worker": worker, "started_at": started, "ended_at": ended,
         "seconds": seconds, "outcome": outcome, "probes": probes, "requeued": requeued,
         "error": error, "probe_url": probe_url}
        for run, worker, started, ended, seconds, outcome, probes, requeued, error, probe_url
        in rows
    ]
    return paged(items, int(total[0]) if total else 0, limit, offset)
