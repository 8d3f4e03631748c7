"""One page's images and sub-resources (the page detail's lists)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, find_page_id, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["PageImage", "PageResource", "list_page_images", "list_page_resources"]


class PageImage(TypedDict):
    src: str
    alt: str | None
    """``None`` when the ``alt`` attribute is absent."""
    width: float | None
    height: float | None
    natural_width: int | None
    natural_height: int | None
    is_lazy: bool
    viewport_width: int | None
    """The device width the image was recorded at; ``None`` when read from markup only."""


class PageResource(TypedDict):
    url: str
    kind: str
    status: int | None
    content_type: str | None
    content_length: int | None
    is_external: bool


_IMAGES_SQL = """SELECT src, alt, width, height, natural_width, natural_height, is_lazy,
    viewport_width FROM images WHERE page_id = ? ORDER BY viewport_width, id LIMIT ? OFFSET ?"""

_RESOURCES_SQL = """SELECT r.url, r.kind, r.status, r.content_type, r.content_length,
    r.is_external FROM resource_referrers rr JOIN resources r ON r.id = rr.resource_id
    WHERE rr.page_id = ? ORDER BY r.url LIMIT ? OFFSET ?"""


def list_page_images(conn: sqlite3.Connection, url: str, *, limit: int = 100, offset: int = 0
                     ) -> Paged[PageImage] | None:
    """The images of the page at ``url`` by device width, then document order; ``None`` when
    the archive has no such URL."""
    check_paging(limit, offset)
    found = find_page_id(conn, url)
    if found is None:
        return None
    rows = fetch_all(conn, _IMAGES_SQL, (found[0], limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM images WHERE page_id = ?", (found[0],))
    items: list[PageImage] = [
        {"src": src, "alt": alt, "width": width, "height": height,
         "natural_width": natural_width, "natural_height": natural_height,
         "is_lazy": bool(lazy), "viewport_width": viewport_width}
        for src, alt, width, height, natural_width, natural_height, lazy, viewport_width in rows
    ]
    return paged(items, int(total[0]) if total else 0, limit, offset)


def list_page_resources(conn: sqlite3.Connection, url: str, *, limit: int = 100,
                        offset: int = 0) -> Paged[PageResource] | None:
    """The sub-resources the page at ``url`` used, by URL; ``None`` when the archive has no
    such URL."""
    check_paging(limit, offset)
    found = find_page_id(conn, url)
    if found is None:
        return None
    rows = fetch_all(conn, _RESOURCES_SQL, (found[0], limit, offset))
    total = fetch_one(conn, "SELECT count(*) FROM resource_referrers WHERE page_id = ?",
                      (found[0],))
    items: list[PageResource] = [
        {"url": r_url, "kind": kind, "status": status, "content_type": ctype,
         "content_length": length, "is_external": bool(external)}
        for r_url, kind, status, ctype, length, external in rows
    ]
    return paged(items, int(total[0]) if total else 0, limit, offset)
