"""A report of listed URLs only (``nitpicker report --urls FILE``): which pages are listed.

:func:`list_pages` matches the URLs against the archive's (as written, or as the crawl
normalises a URL: lower-case host, no fragment, …) and keeps the pages found in a temporary
table of the reading connection, ``temp.report_listed``; the row builders and the charts given
``listed=True`` keep only the rows about those pages
(:func:`~nitpicker.query._common.listed_filter`). The archive
itself is never written: a temporary table lives in the connection's own temporary database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query._common import find_page_id

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = ["list_pages"]

_CREATE: Final = "CREATE TEMP TABLE IF NOT EXISTS report_listed(id INTEGER PRIMARY KEY)"
_CLEAR: Final = "DELETE FROM temp.report_listed"
_LIST: Final = "INSERT OR IGNORE INTO temp.report_listed(id) VALUES (?)"


def list_pages(conn: sqlite3.Connection, urls: Sequence[str]) -> list[str]:
    """Keep the pages of ``urls`` as the listed ones (replacing any listed before); the URLs
    that are no page of the archive, in the order given, each once."""
    conn.execute(_CREATE)
    conn.execute(_CLEAR)
    missing: list[str] = []
    seen: set[str] = set()
    for url in urls:
        if url in seen:
            continue
        seen.add(url)
        found = find_page_id(conn, url)  # as given, then normalised
        if found is None:
            missing.append(url)
        else:
            conn.execute(_LIST, (found[0],))
    conn.commit()  # the temporary table's; the archive is read-only
    return missing
