"""Sub-resources (stylesheets, scripts, images, …) and the pages that use them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, like_escape, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["ResourceItem", "ResourceReferrers", "get_resource_referrers", "list_resources"]


class ResourceItem(TypedDict):
    url: str
    kind: str
    """stylesheet, script, image, icon, media, preload or manifest."""
    status: int | None
    """``None`` until a browser has loaded the resource."""
    content_type: str | None
    content_length: int | None
    is_external: bool
    compress: str | None
    cdn: str | None


class ResourceReferrers(TypedDict):
    resource_url: str
    page_urls: list[str]
    total: int
    offset: int
    limit: int


def list_resources(
    conn: sqlite3.Connection,
    *,
    content_type: str | None = None,
    is_external: bool | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ResourceItem]:
    """Sub-resources ordered by URL; ``content_type`` is a prefix (``text/css``, ``image/``)."""
    check_paging(limit, offset)
    where: list[str] = ["1"]
    params: list[Any] = []
    if content_type:
        where.append("r.content_type LIKE ? ESCAPE '\\'")
        params.append(like_escape(content_type) + "%")
    if is_external is not None:
        where.append("r.is_external = ?")
        params.append(int(is_external))
    condition = " AND ".join(where)
    rows = fetch_all(
        conn,
        "SELECT r.url, r.kind, r.status, r.content_type, r.content_length, r.is_external,"
        f" nullif(r.compress, ''), nullif(r.cdn, '') FROM resources r WHERE {condition}"
        " ORDER BY r.url LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM resources r WHERE {condition}", params)
    items: list[ResourceItem] = [
        {"url": url, "kind": kind, "status": status, "content_type": ctype,
         "content_length": length, "is_external": bool(external), "compress": compress,
         "cdn": cdn}
        for url, kind, status, ctype, length, external, compress, cdn in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)


def get_resource_referrers(conn: sqlite3.Connection, url: str, *, limit: int = 100,
                           offset: int = 0) -> ResourceReferrers | None:
    """The pages that use the resource at exactly ``url``, by URL; ``None`` if it is unknown."""
    check_paging(limit, offset)
    found = fetch_one(conn, "SELECT id FROM resources WHERE url = ?", (url,))
    if found is None:
        return None
    params: list[Any] = [found[0]]
    rows = fetch_all(
        conn,
        "SELECT p.url FROM resource_referrers rr JOIN pages p ON p.id = rr.page_id"
        " WHERE rr.resource_id = ? ORDER BY p.url LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, "SELECT count(*) FROM resource_referrers WHERE resource_id = ?",
                      params)
    return {"resource_url": url, "page_urls": [r[0] for r in rows],
            "total": total[0] if total else 0, "offset": offset, "limit": limit}
