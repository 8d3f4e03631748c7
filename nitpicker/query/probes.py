"""The soft-404 probes (:mod:`nitpicker.crawl.soft404`): one guaranteed-missing URL a crawl
fetched for each directory of its pages, and what the site answered; never pages of the site.
``content/soft-404`` reads them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_counted, has_tables, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["Soft404ProbeItem", "list_probes"]


class Soft404ProbeItem(TypedDict):
    directory: str
    """The directory of pages it stands for: ``https://host/path/``."""
    url: str
    """The probe: the directory and a random token."""
    checked_at: str
    status: int | None
    """What the site answered, after redirects (``None``: no answer)."""
    final_url: str | None
    title: str | None
    soft_404: bool
    """It answered 200: the site hides its missing URLs."""
    pages_matched: int
    """Pages reported as soft 404s against it (``content/soft-404``)."""
    error: str | None


_PROBES_SQL: Final = """SELECT s.directory, s.url, s.checked_at, s.status, s.final_url, s.title,
        s.error, (SELECT count(*) FROM check_findings f WHERE f.rule = 'content/soft-404'
                  AND f.message LIKE '%(' || s.url || ')%'),
        count(*) OVER ()
    FROM soft404_probes s ORDER BY s.directory LIMIT :limit OFFSET :offset"""
_COUNT_SQL: Final = "SELECT count(*) FROM soft404_probes"


def list_probes(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                ) -> Paged[Soft404ProbeItem]:
    """Every soft-404 probe, by directory; empty for an archive crawled without them."""
    check_paging(limit, offset)
    if not has_tables(conn, "soft404_probes"):
        return paged([], 0, limit, offset)
    rows, total = fetch_counted(conn, _PROBES_SQL, _COUNT_SQL,
                                {"limit": limit, "offset": offset}, offset)
    items: list[Soft404ProbeItem] = [
        {"directory": directory, "url": url, "checked_at": checked_at, "status": status,
         "final_url": final_url, "title": title, "soft_404": status == 200,
         "pages_matched": matched, "error": error}
        for directory, url, checked_at, status, final_url, title, error, matched in rows]
    return paged(items, total, limit, offset)
