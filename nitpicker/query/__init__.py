"""The query library: every question asked of an archive, over a read-only connection.

This package is the only place with SQL for reading an archive. The CLI, the MCP server,
the viewer and the reports call these functions::

    conn = open_archive("site.nitpicker")
    get_summary(conn)["total_pages"]
    list_links(conn, "broken", limit=20)["items"]

Every function takes the ``sqlite3.Connection`` from :func:`open_archive` and returns plain
JSON-serialisable data (``TypedDict``s with snake_case keys). Lists are paged: ``limit``,
``offset`` in, ``{items, total, offset, limit}`` out, ``total`` counting every match. A bad
choice (sort field, link type, …) raises ``ValueError`` naming the allowed values, and so
does a number out of its range (``INTEGER_RANGES``: a negative limit, a status of 1000, any
integer SQLite cannot hold); a URL the archive does not have gives ``None``.
"""

from __future__ import annotations

from nitpicker.query._common import (
    INTEGER_RANGES,
    SQLITE_INTEGER_MAX,
    STATUS_RANGE,
    Paged,
    check_integer,
)
from nitpicker.query.charts import Distributions, LabelCount, get_distributions
from nitpicker.query.clusters import (
    ClusterPage,
    DuplicateCluster,
    MetaSignatureFields,
    get_duplicate_clusters,
    list_cluster_pages,
)
from nitpicker.query.connection import ArchiveOpenError, open_archive
from nitpicker.query.console import CONSOLE_LEVELS, ConsoleMessage, list_console_messages
from nitpicker.query.content_clusters import (
    ContentCluster,
    ContentClusterPage,
    get_content_clusters,
    list_content_cluster_pages,
)
from nitpicker.query.diff import (
    ArchiveDiff,
    DiffInputError,
    DiffSummary,
    UrlMap,
    compare_archives,
    summarise_diff,
)
from nitpicker.query.duplicates import (
    DUPLICATE_FIELDS,
    MISMATCH_TYPES,
    DuplicateEntry,
    MismatchEntry,
    find_duplicates,
    find_mismatches,
)
from nitpicker.query.grep import GREP_SCOPES, GrepMatch, GrepResult, grep_snapshots
from nitpicker.query.headers import HeaderCheck, check_headers
from nitpicker.query.images import ImageItem, file_size_threshold, list_images
from nitpicker.query.info import CrawlInfo, crawl_info
from nitpicker.query.inventory_runs import InventoryRun, list_inventory_runs
from nitpicker.query.issues import (
    IssueFinding,
    IssueItem,
    IssuesOverview,
    PageIssue,
    issue_urls,
    issues_overview,
    page_issues,
)
from nitpicker.query.json_ld import JsonLdBlockItem, JsonLdPage, get_page_json_ld, list_json_ld
from nitpicker.query.links import (
    LINK_TYPES,
    LinkItem,
    OrphanItem,
    list_broken_links,
    list_external_links,
    list_links,
    list_orphaned_pages,
)
from nitpicker.query.outages import OUTAGE_OUTCOMES, Outage, list_outages
from nitpicker.query.page_assets import (
    PageImage,
    PageResource,
    list_page_images,
    list_page_resources,
)
from nitpicker.query.page_values import (
    PageValueCell,
    PageValues,
    PluginPageValues,
    get_page_values,
)
from nitpicker.query.pages import (
    SORT_FIELDS,
    SORT_ORDERS,
    HeaderItem,
    InboundLink,
    OutboundLink,
    PageDetail,
    PageHtml,
    PageListItem,
    get_page_detail,
    get_page_html,
    list_pages,
)
from nitpicker.query.resources import (
    ResourceItem,
    ResourceReferrers,
    get_resource_referrers,
    list_resources,
)
from nitpicker.query.runs import CrawlRun, latest_run, list_crawl_runs
from nitpicker.query.summary import (
    ArchiveSummary,
    MetadataFulfillment,
    StatusCount,
    Summary,
    get_summary,
    summary,
)
from nitpicker.query.trap_events import TrapEvent, list_trap_events
from nitpicker.query.url_match import UrlMatch, UrlMatches, match_urls
from nitpicker.query.violations import ViolationItem, get_violations

__all__ = [
    "CONSOLE_LEVELS",
    "DUPLICATE_FIELDS",
    "GREP_SCOPES",
    "INTEGER_RANGES",
    "LINK_TYPES",
    "MISMATCH_TYPES",
    "OUTAGE_OUTCOMES",
    "SORT_FIELDS",
    "SORT_ORDERS",
    "SQLITE_INTEGER_MAX",
    "STATUS_RANGE",
    "ArchiveDiff",
    "ArchiveOpenError",
    "ArchiveSummary",
    "ClusterPage",
    "ConsoleMessage",
    "ContentCluster",
    "ContentClusterPage",
    "CrawlInfo",
    "CrawlRun",
    "DiffInputError",
    "DiffSummary",
    "Distributions",
    "DuplicateCluster",
    "DuplicateEntry",
    "GrepMatch",
    "GrepResult",
    "HeaderCheck",
    "HeaderItem",
    "ImageItem",
    "InboundLink",
    "InventoryRun",
    "IssueFinding",
    "IssueItem",
    "IssuesOverview",
    "JsonLdBlockItem",
    "JsonLdPage",
    "LabelCount",
    "LinkItem",
    "MetaSignatureFields",
    "MetadataFulfillment",
    "MismatchEntry",
    "OrphanItem",
    "Outage",
    "OutboundLink",
    "PageDetail",
    "PageHtml",
    "PageImage",
    "PageIssue",
    "PageListItem",
    "PageResource",
    "PageValueCell",
    "PageValues",
    "Paged",
    "PluginPageValues",
    "ResourceItem",
    "ResourceReferrers",
    "StatusCount",
    "Summary",
    "TrapEvent",
    "UrlMap",
    "UrlMatch",
    "UrlMatches",
    "ViolationItem",
    "check_headers",
    "check_integer",
    "compare_archives",
    "crawl_info",
    "file_size_threshold",
    "find_duplicates",
    "find_mismatches",
    "get_content_clusters",
    "get_distributions",
    "get_duplicate_clusters",
    "get_page_detail",
    "get_page_html",
    "get_page_json_ld",
    "get_page_values",
    "get_resource_referrers",
    "get_summary",
    "get_violations",
    "grep_snapshots",
    "issue_urls",
    "issues_overview",
    "latest_run",
    "list_broken_links",
    "list_cluster_pages",
    "list_console_messages",
    "list_content_cluster_pages",
    "list_crawl_runs",
    "list_external_links",
    "list_images",
    "list_inventory_runs",
    "list_json_ld",
    "list_links",
    "list_orphaned_pages",
    "list_outages",
    "list_page_images",
    "list_page_resources",
    "list_pages",
    "list_resources",
    "list_trap_events",
    "match_urls",
    "open_archive",
    "page_issues",
    "summarise_diff",
    "summary",
]
