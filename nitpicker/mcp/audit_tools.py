"""The audit tools: the issues (the site checks' and analyzers' findings as an audit), what
the crawl and the analyzers found on the site (console messages,
JSON-LD, violations, plugin values, duplicates, mismatches, security headers, trap clusters),
the crawl's own record (runs, trap-cap firings, network outages), and two archives compared. Registered on
:data:`nitpicker.mcp.server.server` the way :mod:`nitpicker.mcp.tools` registers its own, on
import; importing this module imports that one first, so the tools list in one order."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nitpicker import query as q
from nitpicker.mcp import tools as _tools  # noqa: F401  (registered first: the listing order)
from nitpicker.mcp.server import (
    ArchiveId,
    ConsoleLevel,
    DuplicateField,
    Limit,
    MismatchType,
    Offset,
    Priority,
    registry,
    tool,
)
from nitpicker.query import (
    SQLITE_INTEGER_MAX,
    ConsoleMessage,
    CrawlRun,
    DiffSummary,
    DuplicateCluster,
    DuplicateEntry,
    HeaderCheck,
    IssueFinding,
    IssuesOverview,
    JsonLdPage,
    MismatchEntry,
    Outage,
    Paged,
    PageValues,
    UrlMap,
    ViolationItem,
    trap_events,
)
from nitpicker.query.trap_events import TrapEvent

__all__: list[str] = []


# -- the audit ----------------------------------------------------------------------------------


@tool
def get_issues(
    archive_id: ArchiveId,
    priority: Annotated[Priority | None, Field(description="Only this priority or more urgent "
                                                           "(high: critical and high).")] = None,
    category: Annotated[str | None, Field(description="Only this category: links, indexing, "
                                                      "content, accessibility, performance, "
                                                      "security, crawl, or an analyzer's "
                                                      "(html, text).")] = None,
    include_passed: Annotated[bool, Field(description="List the site checks that found "
                                                      "nothing too (urls 0), last.")] = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> IssuesOverview:
    """Start here to audit a site: what is wrong, how bad, how many URLs, and what to do.

    Every issue of the archive, most urgent first (priority critical, high, medium, low,
    info; then the most URLs): the built-in site checks (id family/name, e.g.
    links/broken-internal, canonical/not-http, titles/duplicate) and the analyzers' rules (id
    validator/rule, e.g. axe/image-alt). Items: id, source (check or the plugin), title,
    priority, category, urls, findings, explanation (why it matters), fix (how to fix it).
    checked_at is null when the site checks never ran on the archive (nitpicker check FILE).
    Then get_issue_urls with an issue's id lists where it is.
    """
    with registry.use(archive_id) as conn:
        return q.issues_overview(conn, priority=priority, category=category,
                                 include_passed=include_passed, limit=limit, offset=offset)


@tool
def get_issue_urls(
    archive_id: ArchiveId,
    issue_id: Annotated[str, Field(description="The issue's id from get_issues (e.g. "
                                               "links/broken-internal, axe/image-alt).")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[IssueFinding]:
    """The findings of one issue, by URL: where it is and what each finding says.

    Items: url, element (a CSS selector, a link's target or an image's src; null for the page
    itself), location (line:col in the snapshot, when known), snippet (the offending markup),
    message (the facts: a broken URL's status and how many links lead to it, a title's
    length, …), fingerprint (the same finding in another crawl has the same one). Error for an
    id that is no check and no rule of the archive.
    """
    with registry.use(archive_id) as conn:
        return q.issue_urls(conn, issue_id, limit=limit, offset=offset)


# -- quality checks -----------------------------------------------------------------------------


@tool
def list_console_messages(
    archive_id: ArchiveId,
    level: Annotated[ConsoleLevel | None, Field(description="Only this level: error, warning, "
                                                            "info, log or debug.")] = None,
    url: Annotated[str | None, Field(description="Only the messages of this page (tried as "
                                                 "given, then normalised), in the order it "
                                                 "showed them.")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ConsoleMessage]:
    """Console messages (console.log, warn, error, ...) and uncaught JavaScript exceptions of
    the pages rendered in the browser, each distinct message once with the pages that showed
    it: use for JavaScript errors and deprecation warnings across a site.

    Most severe first (error, warning, info, log, debug), then the most shared. Items: level,
    kind (console or exception), text, source_url, line, column (1-based; null when unknown),
    page_count, occurrences, pages (up to 100 URLs). Empty for a crawl made without the browser
    (--no-render). Error "Page not found." when url names no page of the archive.
    """
    with registry.use(archive_id) as conn:
        messages = q.list_console_messages(conn, level=level, url=url, limit=limit,
                                           offset=offset)
    if messages is None:
        raise ValueError("Page not found.")
    return messages


@tool
def list_json_ld(
    archive_id: ArchiveId,
    type: Annotated[str | None,  # (shadows the builtin: the argument's name in the spec)
                    Field(description="Only pages with a block of this @type (exact, as "
                                      "written: Product, BreadcrumbList).")] = None,
    invalid: Annotated[bool, Field(description="Only pages with a JSON-LD block that does not "
                                               "parse.")] = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[JsonLdPage]:
    """Structured data: the pages with <script type="application/ld+json"> blocks, by URL.

    Items: url, types (every @type of its blocks: top-level entities, top-level arrays and
    @graph members), invalid_blocks, blocks (position, types, is_valid, error: the parse error
    of a malformed block, with its line and column). Filters combine.
    """
    with registry.use(archive_id) as conn:
        return q.list_json_ld(conn, type=type, invalid=invalid, limit=limit, offset=offset)


@tool
def get_violations(
    archive_id: ArchiveId,
    validator: Annotated[str | None, Field(description="Only this validator (axe, markuplint, "
                                                       "textlint, lighthouse).")] = None,
    severity: Annotated[str | None, Field(description="Only this severity.")] = None,
    rule: Annotated[str | None, Field(description="Only this rule.")] = None,
    status: Annotated[str | None, Field(description="Only 'violation' (the engine says the "
                                                    "rule fails) or 'needs-review' (it could "
                                                    "not tell: a person must look).")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[ViolationItem]:
    """Violations found by the analyze plugins (accessibility, markup, text), by page URL.

    Items: url, validator, severity, rule, message, code, location (line:col in the page's
    snapshot, when known), status (violation or needs-review: axe's "incomplete", severity
    needs-review), impact, tags (axe's wcag2aa, best-practice …), help_url, element (the
    element, CSS) and summary (why it fails there: a contrast ratio and its colours). Filters
    match exactly. Empty until an analyzer has run on the archive (nitpicker analyze).
    """
    with registry.use(archive_id) as conn:
        return q.get_violations(conn, validator=validator, severity=severity, rule=rule,
                                status=status, limit=limit, offset=offset)


@tool
def get_page_values(
    archive_id: ArchiveId,
    plugin: Annotated[str, Field(description="The analyze plugin (search, main-contents, "
                                             "markuplint, lighthouse, …).")],
    url_pattern: Annotated[str | None, Field(description="Only page URLs matching this SQL "
                                                         "LIKE pattern (% any text).")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> PageValues:
    """One analyze plugin's values per page: its report table (word counts, keyword hits,
    Lighthouse scores, markuplint error counts …).

    Returns plugin, headers (key → column title) and items: url, values (key → value, note),
    by URL. Empty until the plugin has run on the archive (nitpicker analyze).
    """
    with registry.use(archive_id) as conn:
        return q.get_page_values(conn, plugin, url_pattern=url_pattern, limit=limit,
                                 offset=offset)


@tool
def find_duplicates(
    archive_id: ArchiveId,
    field: Annotated[DuplicateField, Field(description="title or description.")] = "title",
    limit: Limit = 50,
    offset: Offset = 0,
) -> Paged[DuplicateEntry]:
    """Titles or descriptions shared by several internal HTML pages (an SEO problem).

    Groups, most shared first: field, value, count, urls (up to 100 per group).
    """
    with registry.use(archive_id) as conn:
        return q.find_duplicates(conn, field, limit=limit, offset=offset)


@tool
def find_mismatches(
    archive_id: ArchiveId,
    type: Annotated[MismatchType,  # (shadows the builtin: the argument's name in the spec)
                    Field(description="canonical, og:title or og:description.")],
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[MismatchEntry]:
    """Internal HTML pages whose metadata disagrees with itself, by URL.

    type=canonical: the canonical URL names another page (actual: the page URL, expected: the
    canonical). type=og:title / og:description: both set and different (actual: the Open Graph
    value, expected: the title / description).
    """
    with registry.use(archive_id) as conn:
        return q.find_mismatches(conn, type, limit=limit, offset=offset)


@tool
def check_headers(
    archive_id: ArchiveId,
    missing_only: Annotated[bool, Field(description="Only pages missing at least one of the "
                                                    "four headers.")] = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[HeaderCheck]:
    """Security response headers of each internal HTML page, by URL.

    Items: url, has_csp (Content-Security-Policy), has_x_frame_options,
    has_x_content_type_options, has_hsts (Strict-Transport-Security); names compared
    case-insensitively. With missing_only, total counts the pages missing one.
    """
    with registry.use(archive_id) as conn:
        return q.check_headers(conn, missing_only=missing_only, limit=limit, offset=offset)


@tool
def get_duplicate_clusters(
    archive_id: ArchiveId,
    min_count: Annotated[int, Field(ge=1, le=SQLITE_INTEGER_MAX,
                                    description="Smallest cluster to list.")] = 10,
    sample: Annotated[int, Field(ge=0, le=100, description="Page URLs listed per cluster.")]
    = 5,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[DuplicateCluster]:
    """Clusters of internal pages sharing one metadata signature: likely crawler traps or
    duplicate content (calendar pages, endless filters, session URLs).

    A signature is the parent path, title, description, og:title and og:url. Clusters whose
    og:url names another page come first (og_url_mismatch), then the largest. Items:
    parent_path, signature, count, og_url_mismatch, sample_pages, meta_signature_fields.
    """
    with registry.use(archive_id) as conn:
        return q.get_duplicate_clusters(conn, min_count=min_count, sample=sample, limit=limit,
                                        offset=offset)


# -- the crawl itself ---------------------------------------------------------------------------


@tool
def list_crawl_runs(archive_id: ArchiveId, limit: Limit = 100, offset: Offset = 0
                    ) -> Paged[CrawlRun]:
    """The crawl runs recorded in the archive (the first crawl, then each resume or append),
    oldest first: kind, status (finished, stopped, failed, running), stop_reason, pages_done,
    errors, error_code and error_detail. Use to tell whether a crawl completed."""
    with registry.use(archive_id) as conn:
        return q.list_crawl_runs(conn, limit=limit, offset=offset)


@tool
def list_trap_events(archive_id: ArchiveId, limit: Limit = 100, offset: Offset = 0
                     ) -> Paged[TrapEvent]:
    """Each time the crawl's trap cap (--dedupe-cap) stopped following links of pages with one
    metadata signature, oldest first: signature, parent_path, count, first_url, last_url,
    created_at, run_id. Empty when the cap never fired or was off."""
    with registry.use(archive_id) as conn:
        return trap_events.list_trap_events(conn, limit=limit, offset=offset)


@tool
def list_outages(archive_id: ArchiveId, limit: Limit = 100, offset: Offset = 0
                 ) -> Paged[Outage]:
    """Each network outage the crawl paused for (every fetch failing at the connection, a
    probe failing too), oldest first: run_id, worker, started_at, ended_at, seconds, outcome
    (resumed, gave_up, stopped), probes, requeued (URLs fetched again, not recorded as
    failed), error (what started it), probe_url. Empty when the crawl met none."""
    with registry.use(archive_id) as conn:
        return q.list_outages(conn, limit=limit, offset=offset)


# -- two archives -------------------------------------------------------------------------------


@tool
def compare_archives(
    old_archive_id: Annotated[str, Field(description="The earlier crawl's archive ID (from "
                                                     "open_archive).")],
    new_archive_id: Annotated[str, Field(description="The later crawl's archive ID.")],
    limit: Annotated[int, Field(ge=0, le=1000, description="Items listed per category "
                                                           "(0-1000); counts are always "
                                                           "complete.")] = 20,
    url_map: Annotated[str | None, Field(description="OLD_PREFIX=NEW_PREFIX: compare OLD URLs "
                                                     "with this prefix as NEW spells them "
                                                     "(staging vs production, a domain "
                                                     "move).")] = None,
) -> DiffSummary:
    """What changed between two crawls of a site (OLD, then NEW): pages_added, pages_removed,
    page_changes (status, redirect_to, title, description, canonical, noindex, nofollow,
    alternate, content_type, depth, inbound_links of pages in both: url, old_url, field, old,
    new), new_4xx, new_5xx, links_added, links_removed, links_broken (broken in NEW, not in
    OLD), links_fixed, resources_failing, images_lost_alt, trap_caps_new, and the analyzer
    findings: violations_new, violations_fixed, violations_persisting (url, plugin, validator,
    severity, rule, message, code, location, fingerprint; matched by validator, rule, page
    URL and code snippet, so a finding whose line moved persists) and values_changed (url,
    plugin, key, change, old, new), for the plugins in compared_plugins (run on both). Each
    category has its count and its first `limit` items. common_pages is 0 when the archives
    share no URL (use url_map for a moved site). Both archives stay read-only."""
    mapping = UrlMap.parse(url_map, "url_map") if url_map is not None else None
    old_path, new_path = registry.path(old_archive_id), registry.path(new_archive_id)
    with q.compare_archives(old_path, new_path, url_map=mapping) as diff:
        summary = q.summarise_diff(diff, limit)
    summary["old"]["path"] = old_path.name  # the file, not where it lives
    summary["new"]["path"] = new_path.name
    return summary
