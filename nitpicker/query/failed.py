"""Failed URLs: what ``nitpicker crawl --retry-failed`` fetches again.

A failed URL is one the crawl fetched and got no HTTP answer for (``status = -1``: refused,
reset, timeout, DNS…), not a URL it refused to fetch (a skip: ``is_skipped = 1``), or one
that answered a server error (5xx). Redirect sources are not failed URLs: their destination is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import fetch_all, has_tables

if TYPE_CHECKING:
    import sqlite3

__all__ = ["FailedUrl", "failed_urls", "pending_urls", "trap_first_urls"]


class FailedUrl(TypedDict):
    url: str
    status: int
    """-1 (no HTTP answer) or a 5xx status."""
    status_text: str | None
    is_external: bool
    depth: int | None


_FAILED_SQL = """SELECT url, status, status_text, is_external, depth FROM pages
    WHERE redirect_dest_id IS NULL
      AND ((status = -1 AND is_skipped = 0) OR status BETWEEN 500 AND 599)
    ORDER BY id"""

_TRAP_FIRST_URLS_SQL = "SELECT first_url FROM trap_events GROUP BY first_url ORDER BY min(id)"

_PENDING_SQL = "SELECT count(*) FROM frontier WHERE state < 2"


def failed_urls(conn: sqlite3.Connection) -> list[FailedUrl]:
    """Every failed URL of the archive (status -1 not skipped, or 5xx), in crawl order."""
    return [{"url": url, "status": status, "status_text": text, "is_external": bool(external),
             "depth": depth}
            for url, status, text, external, depth in fetch_all(conn, _FAILED_SQL)]


def trap_first_urls(conn: sqlite3.Connection) -> list[str]:
    """The first page of each trap the trap cap capped (``trap_events.first_url``; none in an
    archive written before migration ``0007_trap_events``)."""
    if not has_tables(conn, "trap_events"):
        return []
    return [url for (url,) in fetch_all(conn, _TRAP_FIRST_URLS_SQL)]


def pending_urls(conn: sqlite3.Connection) -> int:
    """URLs the crawl has queued and not fetched yet (a stopped crawl's frontier)."""
    return int(fetch_all(conn, _PENDING_SQL)[0][0])
