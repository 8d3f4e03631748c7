"""The crawl runs recorded in an archive (the first crawl, then each ``--resume``, ``--append``,
``--retry-failed`` and ``nitpicker recrawl``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_dicts, fetch_one, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CrawlRun", "latest_run", "list_crawl_runs"]


class CrawlRun(TypedDict):
    id: int
    kind: str
    """``crawl``, ``resume``, ``append``, ``retry`` (``--retry-failed``) or ``recrawl``."""
    pid: int
    started_at: str
    ended_at: str | None
    status: str
    """``running``, ``finished``, ``stopped`` or ``failed``."""
    stop_reason: str | None
    pages_done: int
    errors: int
    error_code: str | None
    """From a closed vocabulary (``docs/reference/runs.md``); ``None`` when it ran well."""
    error_detail: str | None
    phase: str | None
    """Where a failed run was (``None`` in archives older than migration ``0004_run_phase``)."""
    auto_retried: int | None
    """URLs the end-of-run retry pass fetched again (failed for a passing reason: timeout,
    connection reset, 429, 503); ``None``: the run had no retry pass."""
    auto_recovered: int | None
    """Of those, the URLs that answered then; ``None``: no retry pass."""


def list_crawl_runs(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                    ) -> Paged[CrawlRun]:
    """Every run, oldest first: its status, how many URLs it did, its errors and error code."""
    check_paging(limit, offset)
    rows = fetch_dicts(conn, "SELECT * FROM runs ORDER BY id LIMIT ? OFFSET ?", (limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM runs")
    items: list[CrawlRun] = [_run(row) for row in rows]
    return paged(items, total[0] if total else 0, limit, offset)


def latest_run(conn: sqlite3.Connection) -> CrawlRun | None:
    """The newest run (the one a crawl just ended), or ``None``."""
    rows = fetch_dicts(conn, "SELECT * FROM runs ORDER BY id DESC LIMIT 1", ())
    return _run(rows[0]) if rows else None


def _run(row: dict[str, Any]) -> CrawlRun:
    return {
        "id": row["id"], "kind": row["kind"], "pid": row["pid"],
        "started_at": row["started_at"], "ended_at": row["ended_at"], "status": row["status"],
        "stop_reason": row["stop_reason"], "pages_done": row["pages_done"],
        "errors": row["errors"], "error_code": row["error_code"],
        "error_detail": row["error_detail"], "phase": row.get("phase"),
        "auto_retried": row.get("auto_retried"), "auto_recovered": row.get("auto_recovered"),
    }
