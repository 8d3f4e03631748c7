"""Links: broken links, links to external URLs, and orphaned pages.

Every link query starts from the target pages (a small set, found through an index) and reaches
the anchors through ``anchors(href_id, page_id)``; none of them reads the whole anchors table.
A link whose target redirects is judged by where the redirect ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from nitpicker.query._common import (
    INTERNAL_HTML,
    Paged,
    check_choice,
    check_paging,
    fetch_all,
    fetch_one,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "LINK_TYPES",
    "LinkItem",
    "OrphanItem",
    "list_broken_links",
    "list_external_links",
    "list_links",
    "list_orphaned_pages",
]

LINK_TYPES = ("broken", "external", "orphaned")


class LinkItem(TypedDict):
    source_url: str
    """The page the link is on."""
    dest_url: str
    """The URL the link names (normalised)."""
    final_url: str | None
    """Where ``dest_url`` redirects to, or ``None`` when it does not redirect."""
    status: int | None
    """Status of the final page (-1: fetch error; ``None``: never fetched)."""
    status_text: str | None
    """Reason phrase, or the fetch error (``Connection refused``…)."""
    is_external: bool
    """Whether ``dest_url`` is out of scope."""
    text: str


class OrphanItem(TypedDict):
    url: str
    title: str
    status: int | None


_LINK_COLUMNS = """s.url, t.url, f.url, coalesce(f.status, t.status),
    CASE WHEN f.id IS NULL THEN t.status_text ELSE f.status_text END, t.is_external, a.text"""

_BROKEN_TARGETS = """WITH broken(id) AS (
        SELECT id FROM pages WHERE status >= 400
        UNION ALL SELECT id FROM pages WHERE status = -1
    ), targets(id) AS (
        SELECT id FROM broken
        UNION ALL SELECT r.id FROM broken b JOIN pages r ON r.redirect_dest_id = b.id
    )"""
"""Pages whose link is broken: status >= 400 or a fetch error, or a redirect ending at one."""

_BROKEN_SQL = f"""{_BROKEN_TARGETS}
    SELECT {_LINK_COLUMNS} FROM targets x JOIN pages t ON t.id = x.id
    JOIN anchors a ON a.href_id = t.id JOIN pages s ON s.id = a.page_id
    LEFT JOIN pages f ON f.id = t.redirect_dest_id
    ORDER BY t.url, a.page_id, a.id LIMIT ? OFFSET ?"""

_BROKEN_COUNT_SQL = f"""{_BROKEN_TARGETS}
    SELECT count(*) FROM targets x JOIN anchors a ON a.href_id = x.id"""

_EXTERNAL_SQL = f"""SELECT {_LINK_COLUMNS} FROM pages t
    JOIN anchors a ON a.href_id = t.id JOIN pages s ON s.id = a.page_id
    LEFT JOIN pages f ON f.id = t.redirect_dest_id
    WHERE t.is_external = 1 ORDER BY t.url, a.page_id, a.id LIMIT ? OFFSET ?"""

_EXTERNAL_COUNT_SQL = """SELECT count(*) FROM pages t JOIN anchors a ON a.href_id = t.id
    WHERE t.is_external = 1"""

_ORPHAN_WHERE = f"""{INTERNAL_HTML}
    AND NOT EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = p.id AND a.page_id != p.id)
    AND NOT EXISTS (SELECT 1 FROM pages r JOIN anchors a ON a.href_id = r.id
                    WHERE r.redirect_dest_id = p.id AND a.page_id != p.id)"""
"""Internal HTML pages no other page links to, neither directly nor through a redirect."""


def _link_items(rows: list[tuple[Any, ...]]) -> list[LinkItem]:
    return [
        {"source_url": source, "dest_url": dest, "final_url": final, "status": status,
         "status_text": status_text, "is_external": bool(external), "text": text}
        for source, dest, final, status, status_text, external, text in rows
    ]


def _total(conn: sqlite3.Connection, sql: str) -> int:
    row = fetch_one(conn, sql)
    return int(row[0]) if row else 0


def list_broken_links(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                      ) -> Paged[LinkItem]:
    """Links whose target answered >= 400 or could not be fetched (status -1), directly or at
    the end of its redirects. Grouped by target URL, then by linking page in crawl order.

    A URL never fetched (status ``None``: ``--no-fetch-external``, skipped) is not broken.
    """
    check_paging(limit, offset)
    rows = fetch_all(conn, _BROKEN_SQL, (limit, offset))
    return paged(_link_items(rows), _total(conn, _BROKEN_COUNT_SQL), limit, offset)


def list_external_links(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                        ) -> Paged[LinkItem]:
    """Links to out-of-scope URLs, grouped by target URL, then by linking page."""
    check_paging(limit, offset)
    rows = fetch_all(conn, _EXTERNAL_SQL, (limit, offset))
    return paged(_link_items(rows), _total(conn, _EXTERNAL_COUNT_SQL), limit, offset)


def list_orphaned_pages(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                        ) -> Paged[OrphanItem]:
    """Internal HTML pages that no other page links to (a link to a URL that redirects to the
    page counts; a page's link to itself does not). Crawl roots nobody links to are orphans
    too. Ordered by URL."""
    check_paging(limit, offset)
    rows = fetch_all(conn, f"SELECT p.url, p.title, p.status FROM pages p WHERE {_ORPHAN_WHERE}"
                           " ORDER BY p.url LIMIT ? OFFSET ?", (limit, offset))
    total = _total(conn, f"SELECT count(*) FROM pages p WHERE {_ORPHAN_WHERE}")
    items: list[OrphanItem] = [{"url": u, "title": t, "status": s} for u, t, s in rows]
    return paged(items, total, limit, offset)


def list_links(conn: sqlite3.Connection, type: str, *, limit: int = 100, offset: int = 0  # noqa: A002
               ) -> Paged[LinkItem] | Paged[OrphanItem]:
    """``broken``, ``external`` or ``orphaned`` (see the three functions above)."""
    check_choice("link type", type, LINK_TYPES)
    if type == "broken":
        return list_broken_links(conn, limit=limit, offset=offset)
    if type == "external":
        return list_external_links(conn, limit=limit, offset=offset)
    return list_orphaned_pages(conn, limit=limit, offset=offset)
