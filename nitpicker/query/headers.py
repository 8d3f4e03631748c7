"""Security response headers of internal HTML pages."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from nitpicker.query._common import INTERNAL_HTML, Paged, check_paging, fetch_all, fetch_one, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SECURITY_HEADERS", "HeaderCheck", "check_headers"]

SECURITY_HEADERS = {
    "has_csp": "content-security-policy",
    "has_x_frame_options": "x-frame-options",
    "has_x_content_type_options": "x-content-type-options",
    "has_hsts": "strict-transport-security",
}
"""Result key → header name (compared case-insensitively)."""


class HeaderCheck(TypedDict):
    url: str
    has_csp: bool
    has_x_frame_options: bool
    has_x_content_type_options: bool
    has_hsts: bool


_FLAGS_SQL = ", ".join(
    f"EXISTS (SELECT 1 FROM response_headers h WHERE h.page_id = p.id"
    f" AND h.name = :{key} COLLATE NOCASE)"
    for key in SECURITY_HEADERS
)

_MISSING_SQL = (
    "(SELECT count(DISTINCT lower(h.name)) FROM response_headers h WHERE h.page_id = p.id"
    " AND h.name COLLATE NOCASE IN (" + ", ".join(f":{key}" for key in SECURITY_HEADERS) + "))"
    f" < {len(SECURITY_HEADERS)}"
)
"""The page misses at least one of the headers: one probe of ``response_headers(page_id, name)``
per header name."""


def check_headers(conn: sqlite3.Connection, *, missing_only: bool = False, limit: int = 100,
                  offset: int = 0) -> Paged[HeaderCheck]:
    """Which security headers each internal HTML page was served with, by URL.

    ``missing_only`` keeps the pages missing at least one of them; the filter is applied before
    paging, so ``total`` counts those pages and every page of results is full.
    """
    check_paging(limit, offset)
    where = f"{INTERNAL_HTML} AND {_MISSING_SQL}" if missing_only else INTERNAL_HTML
    params: dict[str, object] = {**SECURITY_HEADERS, "limit": limit, "offset": offset}
    rows = fetch_all(conn, f"SELECT p.url, {_FLAGS_SQL} FROM pages p WHERE {where}"
                           " ORDER BY p.url LIMIT :limit OFFSET :offset", params)
    total = fetch_one(conn, f"SELECT count(*) FROM pages p WHERE {where}", SECURITY_HEADERS)
    items: list[HeaderCheck] = [
        {"url": url, "has_csp": bool(csp), "has_x_frame_options": bool(xfo),
         "has_x_content_type_options": bool(xcto), "has_hsts": bool(hsts)}
        for url, csp, xfo, xcto, hsts in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)
