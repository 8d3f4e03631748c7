"""The site's HTML pages as a URL list: what the original's ``crawl --diff`` writes
(SPEC §3.15.5): in-scope pages answering ``text/html`` with a status from 200 to 399, their
URLs as the archive keys them (no fragment, no credentials), in the natural URL order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["html_page_urls"]

_HTML_PAGES_SQL: Final = """SELECT url FROM pages
    WHERE is_external = 0 AND content_type = 'text/html' AND status BETWEEN 200 AND 399
    ORDER BY "order" IS NULL, "order", url"""
"""``order`` is the natural URL order, set when a crawl ends (an interrupted crawl's pages
without one come last, by URL)."""


def html_page_urls(conn: sqlite3.Connection) -> Iterator[str]:
    """The URLs of the archive's HTML pages (read row by row)."""
    cursor = conn.execute(_HTML_PAGES_SQL)
    try:
        for (url,) in cursor:
            yield url
    finally:
        cursor.close()
