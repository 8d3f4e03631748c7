"""The archive summary: how many URLs of each kind a crawl recorded."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

__all__ = ["Summary", "summary"]


@dataclass(frozen=True)
class Summary:
    total_urls: int
    """Every row of the pages table (discovered, fetched, skipped)."""
    internal_pages: int
    """In-scope HTML pages fetched (redirect sources excluded)."""
    external_urls: int
    """Out-of-scope URLs recorded (fetched or not)."""
    redirects: int
    skipped: int
    fetch_errors: int
    """URLs that could not be fetched (status -1)."""
    status_4xx: int
    status_5xx: int
    pending: int
    """Frontier rows not yet crawled (a stopped crawl can be resumed)."""


def summary(conn: sqlite3.Connection) -> Summary:
    row = conn.execute(
        """SELECT
            count(*),
            count(*) FILTER (WHERE scraped = 1 AND is_external = 0 AND redirect_dest_id IS NULL
                             AND content_type = 'text/html'),
            count(*) FILTER (WHERE is_external = 1),
            count(*) FILTER (WHERE redirect_dest_id IS NOT NULL),
            count(*) FILTER (WHERE is_skipped = 1),
            count(*) FILTER (WHERE status = -1),
            count(*) FILTER (WHERE status BETWEEN 400 AND 499),
            count(*) FILTER (WHERE status BETWEEN 500 AND 599)
        FROM pages"""
    ).fetchone()
    pending = conn.execute("SELECT count(*) FROM frontier WHERE state < 2").fetchone()[0]
    return Summary(*row, pending=pending)
