"""Images: missing alt text, missing dimensions, oversized natural sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_integer,
    check_paging,
    fetch_all,
    fetch_one,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["MISSING_ALT_SQL", "MISSING_DIMENSIONS_SQL", "ImageItem", "list_images"]

MISSING_ALT_SQL = "(i.alt IS NULL OR i.alt = '')"
"""No ``alt`` attribute, or an empty one. (Kept verbatim: a partial index matches it.)"""

MISSING_DIMENSIONS_SQL = "(i.width IS NULL OR i.width = 0 OR i.height IS NULL OR i.height = 0)"
"""No width or no height (attribute absent, or 0)."""


class ImageItem(TypedDict):
    page_url: str
    src: str
    alt: str | None
    """``None`` when the ``alt`` attribute is absent."""
    width: float | None
    height: float | None
    natural_width: int | None
    """``None`` when the image was read from markup only (no browser)."""
    natural_height: int | None
    is_lazy: bool
    viewport_width: int | None


def _image_filters(missing_alt: bool, missing_dimensions: bool, oversized_threshold: int | None,
                   url_pattern: str | None) -> tuple[str, list[Any]]:
    where: list[str] = ["1"]
    params: list[Any] = []
    if missing_alt:
        where.append(MISSING_ALT_SQL)
    if missing_dimensions:
        where.append(MISSING_DIMENSIONS_SQL)
    if oversized_threshold is not None:
        where.append("(i.natural_width > ? OR i.natural_height > ?)")
        params += [oversized_threshold, oversized_threshold]
    if url_pattern:
        where.append("i.src LIKE ?")
        params.append(url_pattern)
    return " AND ".join(where), params


def list_images(
    conn: sqlite3.Connection,
    *,
    missing_alt: bool = False,
    missing_dimensions: bool = False,
    oversized_threshold: int | None = None,
    url_pattern: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ImageItem]:
    """Images ordered by page URL, then document order; filters combine with AND.

    ``missing_alt``: alt absent or empty. ``missing_dimensions``: width or height absent or 0.
    ``oversized_threshold``: natural width or height above N px (natural sizes are known only
    for pages rendered in a browser). ``url_pattern``: SQL ``LIKE`` on ``src``.
    """
    check_paging(limit, offset)
    check_integer("oversized_threshold", oversized_threshold)
    condition, params = _image_filters(missing_alt, missing_dimensions, oversized_threshold,
                                       url_pattern)
    rows = fetch_all(
        conn,
        "SELECT p.url, i.src, i.alt, i.width, i.height, i.natural_width, i.natural_height,"
        " i.is_lazy, i.viewport_width FROM images i JOIN pages p ON p.id = i.page_id"
        f" WHERE {condition} ORDER BY p.url, i.id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM images i WHERE {condition}", params)
    items: list[ImageItem] = [
        {"page_url": page_url, "src": src, "alt": alt, "width": width, "height": height,
         "natural_width": natural_width, "natural_height": natural_height,
         "is_lazy": bool(lazy), "viewport_width": viewport_width}
        for page_url, src, alt, width, height, natural_width, natural_height, lazy,
        viewport_width in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)
