"""Links: broken links, links to external URLs, and orphaned pages.

Every link query starts from the target pages (found through an index) and reaches the anchors
through ``anchors(href_id, page_id)``; none of them reads the anchors table. A link whose target
redirects is judged by where the redirect ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import (
    INTERNAL_HTML,
    Paged,
    check_choice,
    check_paging,
    fetch_all,
    fetch_counted,
    has_column,
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
    in_sitemap: bool
    """Listed in a sitemap: how the crawl found the page, when no link leads to it."""
    in_inventory: bool
    """Listed in the crawl's ``--inventory`` file (URLs known from elsewhere)."""


_TARGET_COLUMNS = """t.id, t.url, f.url, coalesce(f.status, t.status),
    CASE WHEN f.id IS NULL THEN t.status_text ELSE f.status_text END, t.is_external,
    (SELECT count(*) FROM anchors a WHERE a.href_id = t.id)"""
"""A link target, where it ends, its final status, and how many links name it."""

_BROKEN_TARGETS_SQL = f"""WITH broken(id) AS MATERIALIZED (
        SELECT id FROM pages WHERE status >= 400
        UNION ALL SELECT id FROM pages WHERE status = -1
    ), targets(id) AS MATERIALIZED (
        SELECT id FROM broken
        UNION ALL SELECT r.id FROM broken b JOIN pages r ON r.redirect_dest_id = b.id
    )
    SELECT {_TARGET_COLUMNS} FROM targets x JOIN pages t ON t.id = x.id
    LEFT JOIN pages f ON f.id = t.redirect_dest_id ORDER BY t.url"""
"""Pages a link to which is broken: status >= 400 or a fetch error, or a redirect ending at one."""

_EXTERNAL_TARGETS_SQL = f"""SELECT {_TARGET_COLUMNS} FROM pages t
    LEFT JOIN pages f ON f.id = t.redirect_dest_id WHERE t.is_external = 1 ORDER BY t.url"""

_LINKS_TO_SQL = """SELECT s.url, a.text FROM anchors a JOIN pages s ON s.id = a.page_id
    WHERE a.href_id = ? ORDER BY a.page_id, a.id LIMIT ? OFFSET ?"""
"""The links naming one target, by linking page in crawl order, then document order."""

_ORPHAN_WHERE = f"""{INTERNAL_HTML}
    AND NOT EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = p.id AND a.page_id != p.id)
    AND NOT EXISTS (SELECT 1 FROM pages r JOIN anchors a ON a.href_id = r.id
                    WHERE r.redirect_dest_id = p.id AND a.page_id != p.id)"""
"""Internal HTML pages no other page links to, neither directly nor through a redirect."""

_ORPHANS_SQL = f"""SELECT p.url, p.title, p.status, {{origins}}, count(*) OVER () FROM pages p
    WHERE {_ORPHAN_WHERE} ORDER BY p.url LIMIT :limit OFFSET :offset"""
"""``{origins}``: the two origin columns; ``0`` for one an older archive does not have."""

_ORIGIN_COLUMNS = ("in_sitemap", "in_inventory")
"""Where an orphan's URL came from: migrations ``0005_in_sitemap`` and ``0012_page_origin``."""


def _links_to_targets(conn: sqlite3.Connection, targets_sql: str, limit: int, offset: int
                      ) -> Paged[LinkItem]:
    """Page through the links naming each target, targets in URL order.

    The targets and their link counts come first (one probe of ``anchors(href_id, page_id)``
    each); then only the targets the requested window falls on are read, each with its own
    ``LIMIT``/``OFFSET`` — no sort of every matching link.
    """
    targets = fetch_all(conn, targets_sql)
    total = sum(int(t[-1]) for t in targets)
    items: list[LinkItem] = []
    start = 0  # index, among all links, of the first link of the current target
    for target_id, url, final_url, status, status_text, external, count in targets:
        skip = max(offset - start, 0)
        start += count
        if skip >= count:
            continue
        if len(items) >= limit:
            break
        for source, text in fetch_all(conn, _LINKS_TO_SQL, (target_id, limit - len(items), skip)):
            items.append({"source_url": source, "dest_url": url, "final_url": final_url,
                          "status": status, "status_text": status_text,
                          "is_external": bool(external), "text": text})
    return paged(items, total, limit, offset)


def list_broken_links(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                      ) -> Paged[LinkItem]:
    """Links whose target answered >= 400 or could not be fetched (status -1), directly or at
    the end of its redirects. By target URL, then by linking page in crawl order.

    A URL never fetched (status ``None``: ``--no-fetch-external``, skipped) is not broken.
    """
    check_paging(limit, offset)
    return _links_to_targets(conn, _BROKEN_TARGETS_SQL, limit, offset)


def list_external_links(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                        ) -> Paged[LinkItem]:
    """Links to out-of-scope URLs, by target URL, then by linking page in crawl order."""
    check_paging(limit, offset)
    return _links_to_targets(conn, _EXTERNAL_TARGETS_SQL, limit, offset)


def list_orphaned_pages(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                        ) -> Paged[OrphanItem]:
    """Internal HTML pages that no other page links to (a link to a URL that redirects to the
    page counts; a page's link to itself does not). Crawl roots nobody links to are orphans
    too. Ordered by URL. Each says whether a sitemap or the crawl's ``--inventory`` listed
    it: the pages that exist but that only those lead to."""
    check_paging(limit, offset)
    origins = ", ".join(f"p.{c}" if has_column(conn, "pages", c) else "0"
                        for c in _ORIGIN_COLUMNS)
    sql = _ORPHANS_SQL.format(origins=origins)
    rows, total = fetch_counted(
        conn, sql, f"SELECT count(*) FROM pages p WHERE {_ORPHAN_WHERE}",
        {"limit": limit, "offset": offset}, offset)
    items: list[OrphanItem] = [
        {"url": u, "title": t, "status": s, "in_sitemap": bool(sitemap),
         "in_inventory": bool(inventory)}
        for u, t, s, sitemap, inventory in rows
    ]
    return paged(items, total, limit, offset)


def list_links(conn: sqlite3.Connection, type: str, *, limit: int = 100, offset: int = 0
               ) -> Paged[LinkItem] | Paged[OrphanItem]:
    """``broken``, ``external`` or ``orphaned`` (see the three functions above)."""
    check_choice("link type", type, LINK_TYPES)
    if type == "broken":
        return list_broken_links(conn, limit=limit, offset=offset)
    if type == "external":
        return list_external_links(conn, limit=limit, offset=offset)
    return list_orphaned_pages(conn, limit=limit, offset=offset)
