"""The crawl runs recorded in an archive (the first crawl, then each ``--resume``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CrawlRun", "list_crawl_runs"]


class CrawlRun(TypedDict):
    id: int
    kind: str
    """``crawl`` or ``resume``."""
    pid: int
    started_at: str
    ended_at: str | None
    status: str
    """``running``, ``finished``, ``stopped`` or ``failed``."""
    stop_reason: str | None
    pages_done: int
    errors: int
    error_code: str | None
    error_detail: str | None


_COLUMNS = ("id", "kind", "pid", "started_at", "ended_at", "status", "stop_reason",
            "pages_done", "errors", "error_code", "error_detail")


def list_crawl_runs(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                    ) -> Paged[CrawlRun]:
    """Every run, oldest first: its status, how many URLs it did, its errors and error code."""
    check_paging(limit, offset)
    rows = fetch_all(conn, f"SELECT {', '.join(_COLUMNS)} FROM runs ORDER BY id LIMIT ? OFFSET ?",
                     (limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM runs")
    items: list[CrawlRun] = [
        {"id": id_, "kind": kind, "pid": pid, "started_at": started, "ended_at": ended,
         "status": status, "stop_reason": reason, "pages_done": done, "errors": errors,
         "error_code": code, "error_detail": detail}
        for id_, kind, pid, started, ended, status, reason, done, errors, code, detail in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)
