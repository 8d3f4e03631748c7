"""The content tools: a search of the stored HTML snapshots, the technologies the pages use,
the clusters of pages with the same or nearly the same main content, the soft-404 probes.

Registered on :data:`nitpicker.mcp.server.server` on import, after the audit tools (imported
first, so the tools list in one order), each a thin function over one query function.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from nitpicker.mcp import audit_tools as _audit_tools  # noqa: F401  (registered first: the order)
from nitpicker.mcp.server import ArchiveId, Limit, Offset, registry, tool
from nitpicker.query import SQLITE_INTEGER_MAX, Paged
from nitpicker.query import content_clusters as q_content
from nitpicker.query.content_clusters import ContentCluster, ContentClusterPage
from nitpicker.query.grep import GrepResult, grep_snapshots
from nitpicker.query.probes import Soft404ProbeItem
from nitpicker.query.probes import list_probes as list_probes_of
from nitpicker.query.technologies import (
    TechnologiesOverview,
    TechnologyPage,
    list_technology_pages,
)
from nitpicker.query.technologies import get_technologies as get_technologies_of

__all__: list[str] = []


@tool
def search_html(
    archive_id: ArchiveId,
    pattern: Annotated[str, Field(min_length=1, max_length=1000,
                                  description="The text to find, or a regular expression "
                                              "written /like this/ (Python syntax).")],
    ignore_case: Annotated[bool, Field(description="Upper and lower case alike.")] = False,
    scope: Annotated[Literal["html", "text"], Field(
        description="html: the stored markup; text: the text a reader sees (no tags, "
                    "comments, scripts or styles; entities decoded; spaces collapsed).")]
    = "html",
    url_pattern: Annotated[str | None, Field(description="Only pages whose URL matches this "
                                                         "SQL LIKE pattern (% any text).")]
    = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> GrepResult:
    """Search the saved HTML snapshots of the in-scope pages (as rendered, when the crawl
    rendered them): find a tracking code, a phrase, a deprecated tag or attribute.

    Items in crawl order, then position: url, line and column in the snapshot (1-based),
    match (the matched text), snippet (the match with its context on its line). total counts
    every match; pages_searched and pages_matched count snapshots. Every snapshot is read (a
    large archive takes a while): narrow it with url_pattern. Error for an empty pattern, a
    bad regular expression or one that matches the empty string.
    """
    with registry.use(archive_id) as conn:
        return grep_snapshots(conn, pattern, ignore_case=ignore_case, scope=scope,
                              url_pattern=url_pattern, limit=limit, offset=offset)


@tool
def get_technologies(
    archive_id: ArchiveId,
    category: Annotated[str | None, Field(max_length=200, description="Only this category of "
                                          "the data set: CMS, Analytics, JavaScript libraries, "
                                          "Web servers, CDN, … (any case).")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> TechnologiesOverview:
    """The technologies the site's pages use (CMS, frameworks, analytics, CDNs, servers), as
    detected by `nitpicker technologies FILE` from the stored headers, cookies, HTML, scripts
    and resources against the Wappalyzer fingerprints.

    Items {name, categories, website, pages, versions}, most pages first; run (the detection:
    data_set, ended_at, pages) is null when the archive was never detected, and items then
    empty. get_technology_pages lists one technology's pages.
    """
    with registry.use(archive_id) as conn:
        return get_technologies_of(conn, category=category, limit=limit, offset=offset)


@tool
def get_technology_pages(
    archive_id: ArchiveId,
    name: Annotated[str, Field(min_length=1, max_length=200,
                               description="The technology: WordPress, jQuery (any case).")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[TechnologyPage]:
    """The pages one technology was found on, by URL: items {url, version, confidence,
    evidence} (what matched first: meta generator, script src, header server, implied by
    WordPress). Empty for a technology no page uses, or an archive never detected.
    """
    with registry.use(archive_id) as conn:
        return list_technology_pages(conn, name, limit=limit, offset=offset)


@tool
def get_content_clusters(
    archive_id: ArchiveId,
    kind: Annotated[Literal["exact", "near"] | None, Field(
        description="exact: the same main content; near: nearly the same; both if omitted.")]
    = None,
    min_count: Annotated[int, Field(ge=2, le=SQLITE_INTEGER_MAX,
                                    description="Smallest cluster to list.")] = 2,
    sample: Annotated[int, Field(ge=0, le=100, description="Page URLs listed per cluster.")]
    = 5,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ContentCluster]:
    """Clusters of pages whose main content (without header, navigation and footer) is the
    same (exact, by a hash of its words) or nearly the same (near: MinHash similarity at or
    above the crawl's threshold, 0.9 by default): duplicate or thin pages. Largest first.

    Items: kind, id (the cluster's first page's id; with kind, it names the cluster for
    list_content_cluster_pages), count, min_similarity, first_page, sample_pages.
    """
    with registry.use(archive_id) as conn:
        return q_content.get_content_clusters(conn, kind=kind, min_count=min_count,
                                              sample=sample, limit=limit, offset=offset)


@tool
def list_content_cluster_pages(
    archive_id: ArchiveId,
    kind: Annotated[Literal["exact", "near"], Field(description="The cluster's kind.")],
    cluster: Annotated[int, Field(ge=1, le=SQLITE_INTEGER_MAX,
                                  description="The cluster's id (get_content_clusters).")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ContentClusterPage]:
    """The pages of one content cluster, most alike first: url, title, similarity (estimated,
    to the cluster's first page). Empty for no such cluster."""
    with registry.use(archive_id) as conn:
        return q_content.list_content_cluster_pages(conn, kind, cluster, limit=limit,
                                                    offset=offset)


@tool
def list_probes(archive_id: ArchiveId, limit: Limit = 100, offset: Offset = 0
                ) -> Paged[Soft404ProbeItem]:
    """The soft-404 probes, by directory: for each directory of pages (50 at most), one
    random URL that cannot exist, fetched once, and what the site answered. soft_404 is true
    when it answered 200 (the site hides its missing URLs); pages_matched counts the pages
    reported as soft 404s against it. Never pages of the site. Items: directory, url,
    checked_at, status, final_url, title, soft_404, pages_matched, error."""
    with registry.use(archive_id) as conn:
        return list_probes_of(conn, limit=limit, offset=offset)
