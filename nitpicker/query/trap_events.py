"""The trap cap's audit log: each time ``--dedupe-cap`` capped a signature (seed 003).

The rows of ``trap_events`` (migration ``0007_trap_events``), oldest first. An archive written
before that migration has no such table, and a read-only connection never creates it: it
simply has no firings. Each firing's score (migration ``0016_trap_score``: the threshold of the
page that made the signature reach it, and the trap and legit signals that gave it, seed 003
§3) is ``None`` in the rows of an archive written before.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_paging,
    fetch_all,
    fetch_one,
    has_migration,
    has_tables,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["TrapEvent", "list_trap_events"]


class TrapEvent(TypedDict):
    signature: str
    """sha1 hex of the meta signature (:func:`nitpicker.policy.signature.meta_signature`)."""
    parent_path: str
    """The parent path of the capped pages (``/list/date``)."""
    count: int
    """Pages of the signature counted when the cap fired (its threshold)."""
    first_url: str
    """The first page counted with the signature."""
    last_url: str
    """The page that made it reach the threshold."""
    created_at: str
    run_id: int | None
    """The run (``runs.id``) that capped it."""
    threshold: int | None
    """The threshold the firing page's signals gave (``--dedupe-cap`` N: ``5 × N`` with a
    legit signal, ``ceil(0.3 × N)`` with a trap signal only, else N); ``None``: not recorded
    (an archive before ``0016_trap_score``)."""
    trap_signals: list[str] | None
    """The firing page's trap signals (``og:url elsewhere``): what counts for a trap."""
    legit_signals: list[str] | None
    """Its legit signals (``og:url self``, ``canonical self``, ``title ordinal``,
    ``rel prev/next``): what counts against."""


_COLUMNS = "signature, parent_path, count, first_url, last_url, created_at, run_id"
_SCORE_COLUMNS = ", threshold, trap_signals, legit_signals"


def _signals(text: str | None) -> list[str] | None:
    return None if text is None else [str(name) for name in json.loads(text)]


def list_trap_events(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                     ) -> Paged[TrapEvent]:
    """Every firing of the trap cap, oldest first: which signature, where, after how many."""
    check_paging(limit, offset)
    if not has_tables(conn, "trap_events"):
        return paged([], 0, limit, offset)
    score = has_migration(conn, "0016_trap_score")
    columns = _COLUMNS + (_SCORE_COLUMNS if score else ", NULL, NULL, NULL")
    rows = fetch_all(conn, f"SELECT {columns} FROM trap_events ORDER BY id LIMIT ? OFFSET ?",
                     (limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM trap_events")
    items: list[TrapEvent] = [
        {"signature": signature, "parent_path": parent, "count": count, "first_url": first,
         "last_url": last, "created_at": created, "run_id": run_id, "threshold": threshold,
         "trap_signals": _signals(trap), "legit_signals": _signals(legit)}
        for signature, parent, count, first, last, created, run_id, threshold, trap, legit
        in rows
    ]
    return paged(items, int(total[0]) if total else 0, limit, offset)
