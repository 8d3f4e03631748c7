"""The audit records of the ``--inventory`` files a crawl seeded: which file (path, sha256,
label), what it listed and what the crawl made of it (``inventory_runs``, migration
``0018_inventory_runs``).

An archive written before that migration has no such table, and a read-only connection never
creates it: it simply has no records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, has_tables, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["InventoryRun", "list_inventory_runs"]


class InventoryRun(TypedDict):
    run_id: int | None
    """The run (``runs.id``) that read the file: the crawl that created the archive."""
    label: str
    """``--inventory-label``; ``""`` when none was given."""
    path: str
    """The file, absolute."""
    sha256: str
    """The digest of the file's bytes as read."""
    lines_read: int
    """URL lines (blank lines and ``#`` comments not counted)."""
    urls: int
    """Distinct URLs: normalised, a URL's ``http`` and ``https`` forms one."""
    new_pages: int
    """In scope and new to the archive: queued for a full crawl (a path naming an HTML page,
    or no file type)."""
    new_resources: int
    """In scope and new: queued, a path whose extension names another type of file
    (``.pdf``, ``.png``…), recorded from its headers."""
    scope_skipped: int
    """Out of scope: recorded as rows, never fetched."""
    excluded: int
    """Skipped by ``--exclude`` or ``--exclude-url``: skipped rows."""
    created_at: str


_COLUMNS = ("run_id, label, path, sha256, lines_read, urls, new_pages, new_resources,"
            " scope_skipped, excluded, created_at")
_LIST_SQL = f"SELECT {_COLUMNS} FROM inventory_runs ORDER BY id LIMIT ? OFFSET ?"
_TOTAL_SQL = "SELECT count(*) FROM inventory_runs"


def list_inventory_runs(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                        ) -> Paged[InventoryRun]:
    """Every ``--inventory`` file the archive's crawl read, oldest first."""
    check_paging(limit, offset)
    if not has_tables(conn, "inventory_runs"):
        return paged([], 0, limit, offset)
    items: list[InventoryRun] = [
        {"run_id": run_id, "label": label, "path": path, "sha256": sha256,
         "lines_read": lines, "urls": urls, "new_pages": pages, "new_resources": resources,
         "scope_skipped": skipped, "excluded": excluded, "created_at": created}
        for run_id, label, path, sha256, lines, urls, pages, resources, skipped, excluded, created
        in fetch_all(conn, _LIST_SQL, (limit, offset))
    ]
    total = fetch_one(conn, _TOTAL_SQL)
    return paged(items, int(total[0]) if total else 0, limit, offset)
