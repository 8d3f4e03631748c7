"""The trap cap's audit log: each time ``--dedupe-cap`` capped a signature (seed 003).

The rows of ``trap_events`` (migration ``0007_trap_events``), oldest first. An archive written
before that migration has no such table, and a read-only connection never creates it: it
simply has no firings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, paged

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


_EVENTS_SQL = (
    "SELECT signature, parent_path, count, first_url, last_url, created_at, run_id"
    " FROM trap_events ORDER BY id LIMIT ? OFFSET ?"
)


def _has_table(conn: sqlite3.Connection) -> bool:
    row = fetch_one(
        conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trap_events'"
    )
    return row is not None


def list_trap_events(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                     ) -> Paged[TrapEvent]:
    """Every firing of the trap cap, oldest first: which signature, where, after how many."""
    check_paging(limit, offset)
    if not _has_table(conn):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _EVENTS_SQL, (limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM trap_events")
    items: list[TrapEvent] = [
        {"signature": signature, "parent_path": parent, "count": count, "first_url": first,
         "last_url": last, "created_at": created, "run_id": run_id}
        for signature, parent, count, first, last, created, run_id in rows
    ]
    return paged(items, int(total[0]) if total else 0, limit, offset)
