"""Images: missing alt text, missing dimensions, oversized natural sizes, oversized files.

An image's file size (``images.file_size``, migration ``0009_image_size``) is the
``Content-Length`` of the response the browser loaded it with for the page; else the size its
URL was recorded with: as a resource a browser loaded (an image a page showed from the
browser's cache), or as a URL the crawl fetched (a link to it; with ``--no-render`` nothing
else loads images). An archive written before that migration has only the recorded sizes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_integer,
    check_paging,
    fetch_all,
    fetch_one,
    has_migration,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["FILE_SIZE_SQL", "MISSING_ALT_SQL", "MISSING_DIMENSIONS_SQL", "NO_THRESHOLD",
           "ImageItem",
           "file_size_threshold", "list_images"]

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
    file_size: int | None
    """Bytes of the image file; ``None`` when unknown (no browser loaded it and the crawl did
    not fetch it, no ``Content-Length``, a ``data:`` URL)."""


_RECORDED_SIZE_SQL = (
    "coalesce((SELECT r.content_length FROM resources r WHERE r.url = i.src"
    " AND r.status BETWEEN 200 AND 299),"
    " (SELECT l.content_length FROM pages l WHERE l.url = i.src AND l.status BETWEEN 200 AND 299))"
)
"""The size of image ``i``'s URL as the crawl recorded it: the resource a browser loaded (once
for a site's pages: the next ones show it from the browser's cache), else the crawl's fetch of
the URL (a link to it)."""
_FILE_SIZE_SQL = f"coalesce(i.file_size, {_RECORDED_SIZE_SQL})"
"""The file size of image ``i``: as the browser loaded it for this page, else as recorded."""
FILE_SIZE_SQL = _FILE_SIZE_SQL

_THRESHOLD_SQL = (
    "SELECT json_extract(config, '$.image_file_size_threshold') FROM info WHERE id = 1"
)

NO_THRESHOLD = (
    "oversized: this archive's crawl set no image file size threshold "
    "(crawl with --image-file-size-threshold BYTES)"
)


def file_size_threshold(conn: sqlite3.Connection) -> int | None:
    """The crawl's ``--image-file-size-threshold`` (bytes), ``None`` when it set none."""
    row = fetch_one(conn, _THRESHOLD_SQL)
    return int(row[0]) if row is not None and row[0] is not None else None


def _image_filters(missing_alt: bool, missing_dimensions: bool, oversized_threshold: int | None,
                   size_threshold: int | None, file_size: str,
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
    if size_threshold is not None:
        where.append(f"{file_size} > ?")
        params.append(size_threshold)
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
    oversized: bool = False,
    url_pattern: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ImageItem]:
    """Images ordered by page URL, then document order; filters combine with AND.

    ``missing_alt``: alt absent or empty. ``missing_dimensions``: width or height absent or 0.
    ``oversized_threshold``: natural width or height above N px (natural sizes are known only
    for pages rendered in a browser). ``oversized``: a file larger than the crawl's
    ``--image-file-size-threshold`` (``ValueError`` when the crawl set none); file sizes are
    known for images a browser loaded, or the crawl fetched as links. ``url_pattern``: SQL
    ``LIKE`` on ``src``.
    """
    check_paging(limit, offset)
    check_integer("oversized_threshold", oversized_threshold)
    size_threshold = None
    if oversized:
        size_threshold = file_size_threshold(conn)
        if size_threshold is None:
            raise ValueError(NO_THRESHOLD)
    file_size = _FILE_SIZE_SQL if has_migration(conn, "0009_image_size") else _RECORDED_SIZE_SQL
    condition, params = _image_filters(missing_alt, missing_dimensions, oversized_threshold,
                                       size_threshold, file_size, url_pattern)
    rows = fetch_all(
        conn,
        "SELECT p.url, i.src, i.alt, i.width, i.height, i.natural_width, i.natural_height,"
        f" i.is_lazy, i.viewport_width, {file_size} FROM images i"
        " JOIN pages p ON p.id = i.page_id"
        f" WHERE {condition} ORDER BY p.url, i.id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM images i WHERE {condition}", params)
    items: list[ImageItem] = [
        {"page_url": page_url, "src": src, "alt": alt, "width": width, "height": height,
         "natural_width": natural_width, "natural_height": natural_height,
         "is_lazy": bool(lazy), "viewport_width": viewport_width, "file_size": size}
        for page_url, src, alt, width, height, natural_width, natural_height, lazy,
        viewport_width, size in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)
