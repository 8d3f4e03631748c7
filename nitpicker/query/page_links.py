"""One page's links out and links in, a page of rows at a time, and whether it has a snapshot.

:func:`~nitpicker.query.pages.get_page_detail` gives the first links of each list and their
totals; these give any page of them (``limit``, ``offset``), in the same orders: links out in
document order, links in by linking page (the links naming the page itself first, then those
naming a URL that redirects to it). A most-linked page has a link in from every page of the
site: paging keeps each answer one page of rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query._common import (
    Paged,
    check_paging,
    fetch_all,
    fetch_one,
    find_page_id,
    paged,
    url_candidates,
)
from nitpicker.query.pages import InboundLink, OutboundLink

if TYPE_CHECKING:
    import sqlite3

__all__ = ["has_page_snapshot", "list_inbound_links", "list_outbound_links"]

_OUTBOUND_SQL: Final = """SELECT t.url, a.text, a.hash, coalesce(f.status, t.status),
    t.is_external, f.url
    FROM anchors a JOIN pages t ON t.id = a.href_id LEFT JOIN pages f ON f.id = t.redirect_dest_id
    WHERE a.page_id = ? ORDER BY a.id LIMIT ? OFFSET ?"""

_OUTBOUND_COUNT_SQL: Final = "SELECT count(*) FROM anchors WHERE page_id = ?"

_INBOUND_DIRECT_SQL: Final = """SELECT s.url, a.text FROM anchors a JOIN pages s ON s.id = a.page_id
    WHERE a.href_id = ? ORDER BY a.page_id, a.id LIMIT ? OFFSET ?"""

_INBOUND_DIRECT_COUNT_SQL: Final = "SELECT count(*) FROM anchors WHERE href_id = ?"

_INBOUND_REDIRECTED_SQL: Final = """SELECT s.url, a.text, r.url FROM pages r
    JOIN anchors a ON a.href_id = r.id JOIN pages s ON s.id = a.page_id
    WHERE r.redirect_dest_id = ? ORDER BY r.url, a.page_id, a.id LIMIT ? OFFSET ?"""

_INBOUND_REDIRECTED_COUNT_SQL: Final = """SELECT count(*) FROM pages r
    JOIN anchors a ON a.href_id = r.id WHERE r.redirect_dest_id = ?"""

_HAS_SNAPSHOT_SQL: Final = ("SELECT 1 FROM pages p JOIN snapshots s ON s.page_id = p.id"
                            " WHERE p.url = ? LIMIT 1")


def _count(conn: sqlite3.Connection, sql: str, page_id: int) -> int:
    row = fetch_one(conn, sql, (page_id,))
    return int(row[0]) if row else 0


def list_outbound_links(conn: sqlite3.Connection, url: str, *, limit: int = 100,
                        offset: int = 0) -> Paged[OutboundLink] | None:
    """The links on the page at ``url``, in document order; ``None`` when the archive has no
    such URL."""
    check_paging(limit, offset)
    found = find_page_id(conn, url)
    if found is None:
        return None
    page_id = found[0]
    items: list[OutboundLink] = [
        {"url": target, "text": text, "hash": hash_, "status": status,
         "is_external": bool(external), "final_url": final_url}
        for target, text, hash_, status, external, final_url
        in fetch_all(conn, _OUTBOUND_SQL, (page_id, limit, offset))
    ]
    return paged(items, _count(conn, _OUTBOUND_COUNT_SQL, page_id), limit, offset)


def list_inbound_links(conn: sqlite3.Connection, url: str, *, limit: int = 100,
                       offset: int = 0) -> Paged[InboundLink] | None:
    """The links to the page at ``url`` (directly, or through a URL that redirects to it),
    by linking page; ``None`` when the archive has no such URL."""
    check_paging(limit, offset)
    found = find_page_id(conn, url)
    if found is None:
        return None
    page_id, page_url = found
    direct = _count(conn, _INBOUND_DIRECT_COUNT_SQL, page_id)
    items: list[InboundLink] = []
    if offset < direct:
        items = [{"url": source, "text": text, "through": page_url}
                 for source, text in fetch_all(conn, _INBOUND_DIRECT_SQL,
                                               (page_id, limit, offset))]
    redirected = _count(conn, _INBOUND_REDIRECTED_COUNT_SQL, page_id)
    if len(items) < limit and redirected:
        rest = limit - len(items)
        skip = max(0, offset - direct)
        items += [{"url": source, "text": text, "through": through}
                  for source, text, through in fetch_all(conn, _INBOUND_REDIRECTED_SQL,
                                                         (page_id, rest, skip))]
    return paged(items, direct + redirected, limit, offset)


def has_page_snapshot(conn: sqlite3.Connection, url: str) -> bool:
    """Whether the archive holds an HTML snapshot of ``url`` (nothing is read or decompressed:
    :func:`~nitpicker.query.pages.get_page_html` gives the snapshot)."""
    return any(fetch_one(conn, _HAS_SNAPSHOT_SQL, (candidate,)) is not None
               for candidate in url_candidates(url))
