"""Security response headers of internal HTML pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import (
    INTERNAL_HTML,
    Paged,
    check_paging,
    fetch_all,
    fetch_counted,
    fetch_one,
    paged,
)

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

_MISSING_SQL = "NOT (" + " AND ".join(
    f"EXISTS (SELECT 1 FROM response_headers h WHERE h.page_id = p.id"
    f" AND h.name = :{key} COLLATE NOCASE)"
    for key in SECURITY_HEADERS
) + ")"
"""The page misses at least one of the headers (one probe of ``response_headers(page_id, name)``
per header, up to the first missing one)."""

_ALL_PAGE_SQL = (f"SELECT p.url, {_FLAGS_SQL} FROM pages p WHERE {INTERNAL_HTML}"
                 " ORDER BY p.url LIMIT :limit OFFSET :offset")

_MISSING_PAGE_SQL = f"""WITH missing AS (
        SELECT p.id, p.url, count(*) OVER () AS total FROM pages p
        WHERE {INTERNAL_HTML} AND {_MISSING_SQL} ORDER BY p.url LIMIT :limit OFFSET :offset
    )
    SELECT p.url, {_FLAGS_SQL}, p.total FROM missing p ORDER BY p.url"""
"""One pass finds the pages missing a header and counts them; the four flags are then read for
the requested page of them only."""

_MISSING_COUNT_SQL = f"SELECT count(*) FROM pages p WHERE {INTERNAL_HTML} AND {_MISSING_SQL}"


def check_headers(conn: sqlite3.Connection, *, missing_only: bool = False, limit: int = 100,
                  offset: int = 0) -> Paged[HeaderCheck]:
    """Which security headers each internal HTML page was served with, by URL.

    ``missing_only`` keeps the pages missing at least one of them; the filter is applied before
    paging, so ``total`` counts those pages and every page of results is full.
    """
    check_paging(limit, offset)
    params: dict[str, object] = {**SECURITY_HEADERS, "limit": limit, "offset": offset}
    if missing_only:
        rows, total = fetch_counted(conn, _MISSING_PAGE_SQL, _MISSING_COUNT_SQL, params, offset)
    else:
        rows = fetch_all(conn, _ALL_PAGE_SQL, params)
        counted = fetch_one(conn, f"SELECT count(*) FROM pages p WHERE {INTERNAL_HTML}")
        total = counted[0] if counted else 0
    items: list[HeaderCheck] = [
        {"url": url, "has_csp": bool(csp), "has_x_frame_options": bool(xfo),
         "has_x_content_type_options": bool(xcto), "has_hsts": bool(hsts)}
        for url, csp, xfo, xcto, hsts in rows
    ]
    return paged(items, int(total), limit, offset)
