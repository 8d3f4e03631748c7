"""The tools: each a thin typed function over one :mod:`nitpicker.query` function (its
signature the input schema, its docstring the description, its return type the output schema).
Importing this module registers them on :data:`nitpicker.mcp.server.server`.

Here: the archives (open, close), the pages, the links, resources and images. The audit tools
(findings, the crawl's record, two archives compared) are in :mod:`nitpicker.mcp.audit_tools`.
"""

from __future__ import annotations

import sqlite3
from typing import (
    Annotated,
    cast,
)

import typing_extensions
from pydantic import Field

from nitpicker import query as q
from nitpicker.mcp.server import (
    ArchiveId,
    Limit,
    LinkType,
    Offset,
    PageUrl,
    SortField,
    SortOrder,
    Status,
    registry,
    tool,
)
from nitpicker.query import (
    SQLITE_INTEGER_MAX,
    ArchiveSummary,
    ImageItem,
    LinkItem,
    OrphanItem,
    Paged,
    PageDetail,
    PageListItem,
    ResourceItem,
    ResourceReferrers,
)

__all__ = ["OpenedArchive"]

# -- archives -----------------------------------------------------------------------------------


class OpenedArchive(typing_extensions.TypedDict):
    archive_id: str
    """The id to pass to every other tool."""
    base_url: str
    roots: list[str]
    total_pages: int


@tool
def open_archive(
    file_path: Annotated[str, Field(description="Path to a .nitpicker archive file "
                                                "(absolute, or relative to the server's "
                                                "working directory).")],
) -> OpenedArchive:
    """Open a nitpicker archive (.nitpicker file) for querying. Always call this first.

    Returns an archive_id to pass to every other tool, with the crawl's base URL, its start
    URLs (roots) and its page count. The archive is opened read-only and never modified.
    Opening the same file again returns another id sharing the same connection. At most 20
    archive files can be open at once: close_archive the ones you no longer need.
    """
    archive_id = registry.open(file_path)
    try:
        with registry.use(archive_id) as conn:
            summary = q.get_summary(conn)
    except sqlite3.DatabaseError:
        registry.close(archive_id)
        raise
    return {"archive_id": archive_id, "base_url": summary["base_url"],
            "roots": summary["roots"], "total_pages": summary["total_pages"]}


@tool
def close_archive(archive_id: ArchiveId) -> str:
    """Close an archive opened with open_archive and release its resources."""
    registry.close(archive_id)
    return "Archive closed successfully."


# -- pages --------------------------------------------------------------------------------------


@tool
def get_summary(archive_id: ArchiveId) -> ArchiveSummary:
    """Site-wide overview of a crawl: use this first to understand an archive.

    Returns the base URL and roots, page counts (total, internal, external), the HTTP status
    distribution (ascending, never-fetched null last) and metadata fulfilment: the share (0-1)
    of internal HTML pages with a title, description, keywords, og:title, og:description and
    og:image.
    """
    with registry.use(archive_id) as conn:
        return q.get_summary(conn)


@tool
def list_pages(
    archive_id: ArchiveId,
    status: Annotated[Status, Field(description="Exact HTTP status (-1: fetch error).")]
    = None,
    status_min: Annotated[Status, Field(description="Status at least this.")] = None,
    status_max: Annotated[Status, Field(description="Status at most this.")] = None,
    is_external: Annotated[bool | None, Field(description="true: external URLs only, false: "
                                                          "internal only; omit for both.")]
    = None,
    missing_title: Annotated[bool, Field(description="Only pages without a title.")] = False,
    missing_description: Annotated[bool, Field(description="Only pages without a meta "
                                                           "description.")] = False,
    noindex: Annotated[bool, Field(description="Only pages with robots noindex.")] = False,
    url_pattern: Annotated[str | None, Field(description="SQL LIKE pattern on the URL "
                                                         "(% any text, _ one character).")]
    = None,
    directory: Annotated[str | None, Field(description="Only pages under this path (/blog/) "
                                                       "or URL prefix.")] = None,
    sort_by: SortField = "url",
    sort_order: SortOrder = "asc",
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[PageListItem]:
    """List the crawled pages, filtered, sorted and paged.

    Every URL the crawl dealt with except redirect sources and known non-HTML files. Filters
    combine with AND. Use for questions like "all 404 pages" (status=404), "pages without a
    description", "noindex pages", "pages under /blog/". Each item: url, title, status,
    content_type, is_external, has_description, has_og_title, noindex, charset (the encoding
    the page declares); total counts every
    match.
    """
    with registry.use(archive_id) as conn:
        return q.list_pages(
            conn, status=status, status_min=status_min, status_max=status_max,
            is_external=is_external, missing_title=missing_title,
            missing_description=missing_description, noindex=noindex, url_pattern=url_pattern,
            directory=directory, sort_by=sort_by, sort_order=sort_order, limit=limit,
            offset=offset)


@tool
def get_page_detail(
    archive_id: ArchiveId,
    url: PageUrl,
    link_limit: Annotated[int, Field(ge=0, le=1000, description="Most outbound and most "
                                                                "inbound links to list.")]
    = 100,
) -> PageDetail:
    """Everything recorded about one URL: use when drilling down into a specific page.

    Status and status text, content type and length, every metadata field (title,
    description, keywords, lang, canonical, robots flags, Open Graph, Twitter card), response
    headers, outbound links (document order, with the status at the end of their redirects),
    inbound links (through: the URL the link names), redirect_from, redirect_to and
    redirect_kind (http, meta-refresh or script).
    outbound_total / inbound_total count all links when the lists are cut at link_limit.
    Error "Page not found." when the archive has no such URL.
    """
    with registry.use(archive_id) as conn:
        detail = q.get_page_detail(conn, url, link_limit=link_limit)
    if detail is None:
        raise ValueError("Page not found.")
    return detail


@tool
def get_page_html(
    archive_id: ArchiveId,
    url: PageUrl,
    max_length: Annotated[int, Field(ge=1, le=1_000_000, description="Most characters to "
                                                                     "return.")] = 100_000,
) -> str:
    """The saved HTML snapshot of a page, to inspect its actual markup and content.

    Only in-scope HTML pages have a snapshot. A longer snapshot is cut at max_length
    characters and starts with the line "[Truncated to N chars]". Error "HTML snapshot not
    found." when the archive has no such URL or no snapshot of it.
    """
    with registry.use(archive_id) as conn:
        snapshot = q.get_page_html(conn, url, max_length)
    if snapshot is None:
        raise ValueError("HTML snapshot not found.")
    if snapshot["truncated"]:
        return f"[Truncated to {max_length} chars]\n{snapshot['html']}"
    return snapshot["html"]


# -- links, resources, images -------------------------------------------------------------------


@tool
def list_links(
    archive_id: ArchiveId,
    type: Annotated[LinkType,  # (shadows the builtin: the argument's name in the spec)
                    Field(description="broken, external or orphaned.")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[LinkItem | OrphanItem]:
    """Analyse links: broken links, links to external sites, or orphaned pages.

    type=broken: links whose target answered HTTP 400 or more or could not be fetched (status
    -1), directly or at the end of its redirects. type=external: links to out-of-scope URLs.
    Both: items {source_url, dest_url, final_url (where dest_url redirects, or null), status,
    status_text, is_external, text}, grouped by target URL, then linking page.
    type=orphaned: internal HTML pages no other page links to (crawl roots included): items
    {url, title, status, in_sitemap, in_inventory} (the last two: listed in a sitemap, or in
    the crawl's --inventory file of URLs known from elsewhere).
    """
    with registry.use(archive_id) as conn:
        return cast("Paged[LinkItem | OrphanItem]",
                    q.list_links(conn, type, limit=limit, offset=offset))


@tool
def list_resources(
    archive_id: ArchiveId,
    content_type: Annotated[str | None, Field(description="Content-type prefix (text/css, "
                                                          "image/, application/javascript).")]
    = None,
    is_external: Annotated[bool | None, Field(description="true: external only, false: "
                                                          "internal only; omit for both.")]
    = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ResourceItem]:
    """List sub-resources (stylesheets, scripts, images, icons, media) by URL.

    Each item: url, kind, status, content_type, content_length, is_external, compress, cdn
    (status and content type are known once a browser loaded the resource). Use for tech
    stack and library checks, and get_resource_referrers for the pages that use one.
    """
    with registry.use(archive_id) as conn:
        return q.list_resources(conn, content_type=content_type, is_external=is_external,
                                limit=limit, offset=offset)


@tool
def get_resource_referrers(
    archive_id: ArchiveId,
    resource_url: Annotated[str, Field(description="The exact URL of the resource.")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> ResourceReferrers:
    """The pages that use one sub-resource (a stylesheet, script, image, ...), by URL.

    Returns resource_url, page_urls (this page of them) and total. Error "Resource not
    found." when the archive has no such resource.
    """
    with registry.use(archive_id) as conn:
        referrers = q.get_resource_referrers(conn, resource_url, limit=limit, offset=offset)
    if referrers is None:
        raise ValueError("Resource not found.")
    return referrers


@tool
def list_images(
    archive_id: ArchiveId,
    missing_alt: Annotated[bool, Field(description="Only images whose alt is absent or "
                                                   "empty.")] = False,
    missing_dimensions: Annotated[bool, Field(description="Only images whose width or height "
                                                          "is absent or 0.")] = False,
    oversized_threshold: Annotated[int | None, Field(ge=0, le=SQLITE_INTEGER_MAX,
                                                     description="Only images whose "
                                                     "natural width or height is above this "
                                                     "many pixels (known for pages rendered "
                                                     "in a browser).")] = None,
    oversized: Annotated[bool, Field(description="Only images whose file is larger than "
                                                 "the crawl's --image-file-size-threshold "
                                                 "(an error when the crawl set none).")] = False,
    url_pattern: Annotated[str | None, Field(description="SQL LIKE pattern on the image "
                                                         "src.")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ImageItem]:
    """List images with quality checks, for accessibility and performance audits.

    Filters combine with AND. Items by page URL, then document order: page_url, src, alt
    (null when the attribute is absent), width, height, natural_width, natural_height,
    is_lazy, viewport_width, file_size (bytes, null when unknown).
    """
    with registry.use(archive_id) as conn:
        return q.list_images(conn, missing_alt=missing_alt,
                             missing_dimensions=missing_dimensions,
                             oversized_threshold=oversized_threshold, oversized=oversized,
                             url_pattern=url_pattern, limit=limit, offset=offset)
