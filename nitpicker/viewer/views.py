"""The views: each reads its parameters, calls the query library and returns its data.

A view is ``(archive, params) -> (template, data)``; the app renders ``data`` with the
template, or returns it as JSON (``?format=json`` or ``Accept: application/json``): the same
data either way. No SQL here: every read is a :mod:`nitpicker.query` function.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.query import (
    DUPLICATE_FIELDS,
    LINK_TYPES,
    MISMATCH_TYPES,
    SORT_FIELDS,
    SORT_ORDERS,
    SQLITE_INTEGER_MAX,
    STATUS_RANGE,
    InboundLink,
    OutboundLink,
    Paged,
    check_headers,
    file_size_threshold,
    find_duplicates,
    find_mismatches,
    get_distributions,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_page_json_ld,
    get_resource_referrers,
    get_summary,
    get_violations,
    issue_urls,
    issues_overview,
    list_cluster_pages,
    list_console_messages,
    list_crawl_runs,
    list_images,
    list_links,
    list_page_images,
    list_page_resources,
    list_pages,
    list_resources,
    list_trap_events,
    page_issues,
    summary,
)
from nitpicker.query.analysis_scope import analysis_scopes
from nitpicker.query.charts import NEVER_FETCHED
from nitpicker.query.duplicates import list_duplicate_pages
from nitpicker.query.extracted import extract_names
from nitpicker.query.page_links import (
    has_page_snapshot,
    list_inbound_links,
    list_outbound_links,
)
from nitpicker.query.page_values import get_page_analysis
from nitpicker.query.technologies import list_page_technologies
from nitpicker.query.templates import list_template_findings, list_template_pages, list_templates
from nitpicker.query.violations import list_rule_pages, list_violation_rules
from nitpicker.viewer.charts import bar_chart, status_colour
from nitpicker.viewer.content_views import content_cluster_view, content_clusters_view
from nitpicker.viewer.params import BadRequest, NotFound, choice_param, int_param, text_param
from nitpicker.viewer.site_views import graph_view, technologies_view, tree_view

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.query.site_graph import SiteGraph

__all__ = ["PAGE_SIZE", "VIEWS", "OpenArchive", "View", "page_number", "snapshot_html", "window"]

PAGE_SIZE = 50
"""Rows on one page of a list view: no view loads more than this many rows of a list."""

DETAIL_SECTIONS = ("links_out", "links_in", "images", "resources", "violations", "console")
"""The lists of a page detail: each shows one page of rows (``PAGE_SIZE``), paged by its own
parameter (``?links_in=3``: the third page of the links in), the others staying where they are."""

CLUSTER_TITLES_KEPT = 4096
"""Cluster titles a viewer remembers per archive (signature → title): a cluster's pages are
then found through the title index instead of signing every internal page."""

SCOPES = ("all", "internal", "external")
_OFFSET_MAX = SQLITE_INTEGER_MAX // PAGE_SIZE


@dataclass
class OpenArchive:
    """An archive named on the command line, opened read-only; ``index`` is its place in the
    command line and in the viewer's URLs (``/a/<index>/``)."""

    index: int
    path: Path
    conn: sqlite3.Connection
    base_url: str
    cluster_titles: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """Signature → title of the clusters this viewer has seen (at most
    ``CLUSTER_TITLES_KEPT``, least recently used dropped): the archive is read-only, and a
    signature's title never changes (it is part of the signature)."""

    graphs: OrderedDict[tuple[str | None, str], SiteGraph] = field(default_factory=OrderedDict)
    """The link graphs drawn, by (origin, folder), least recently used first: computed once
    (``nitpicker.viewer.site_views.graph_view``)."""

    def remember_cluster(self, signature: str, title: str) -> None:
        titles = self.cluster_titles
        titles[signature] = title
        titles.move_to_end(signature)
        while len(titles) > CLUSTER_TITLES_KEPT:
            titles.popitem(last=False)


View = Callable[[OpenArchive, Mapping[str, str]], tuple[str, dict[str, Any]]]


def page_number(params: Mapping[str, str]) -> int:
    number = int_param(params, "page", 1, 1, _OFFSET_MAX)
    assert number is not None  # a default was given
    return number


def window(number: int) -> tuple[int, int]:
    """``(limit, offset)`` of list page ``number`` (1-based)."""
    return PAGE_SIZE, (number - 1) * PAGE_SIZE


ISSUES_SHOWN = 500
"""Issues listed on the landing page (the checks are 36; the rest are analyzers' rules)."""


def summary_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The issues overview (the audit: every issue most urgent first, with its URL count,
    explanation and fix), then the counts, the run history with outcomes and error codes, and
    charts: status codes, pages by depth, content types, findings by validator."""
    issues = issues_overview(archive.conn, limit=ISSUES_SHOWN)
    overview = get_summary(archive.conn)
    counts = dataclasses.asdict(summary(archive.conn))
    runs_page, runs_offset = _section_window(params, "runs")
    runs = list_crawl_runs(archive.conn, limit=PAGE_SIZE, offset=runs_offset)
    chart = bar_chart([
        (NEVER_FETCHED if row["status"] is None else str(row["status"]), row["count"],
         status_colour(row["status"]))
        for row in overview["status_distribution"]
    ])
    spread = get_distributions(archive.conn)
    charts = {name: dataclasses.asdict(bar_chart([(r["label"], r["count"], colour)
                                                  for r in rows]))
              for name, rows, colour in (("depth", spread["depth"], "#24323f"),
                                         ("content_type", spread["content_type"], "#5c6bc0"),
                                         ("validator", spread["validator"], "#8e24aa"))}
    sampled = [run for run in analysis_scopes(archive.conn) if run["scope"] is not None]
    return "summary.html", {"issues": issues, "summary": overview, "counts": counts, "runs": runs,
                            "sampled": sampled,
                            "status_chart": dataclasses.asdict(chart),
                            "distributions": spread, "charts": charts, "runs_page": runs_page}


def issue_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """One issue: its title, priority, explanation and fix, then its findings by URL, one page
    of rows (``?id=links/broken-internal&page=2``)."""
    issue_id = text_param(params, "id", max_length=500)
    if not issue_id:
        raise BadRequest("Missing id: name the issue with ?id= (links/broken-internal)")
    number = page_number(params)
    limit, offset = window(number)
    findings = issue_urls(archive.conn, issue_id, limit=limit, offset=offset)
    every = issues_overview(archive.conn, include_passed=True, limit=ISSUES_SHOWN)["items"]
    issue = next((item for item in every if item["id"] == issue_id), None)
    return "issue.html", {"issue": issue, "issue_id": issue_id, "findings": findings,
                          "page": number}


def pages_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The page list: status, scope and text (in the URL or title) filters, a sort, one page
    of rows."""
    status = int_param(params, "status", None, *STATUS_RANGE)
    scope = choice_param(params, "scope", SCOPES, "all")
    search = text_param(params, "q", max_length=500)
    sort = choice_param(params, "sort", SORT_FIELDS, "url")
    order = choice_param(params, "order", SORT_ORDERS, "asc")
    number = page_number(params)
    limit, offset = window(number)
    result = list_pages(
        archive.conn, status=status, is_external=None if scope == "all" else scope == "external",
        search=search or None, sort_by=sort, sort_order=order, limit=limit, offset=offset,
    )
    filters = {"status": "" if status is None else str(status), "scope": scope, "q": search,
               "sort": sort, "order": order}
    return "pages.html", {"pages": result, "filters": filters, "page": number,
                          "sort_fields": SORT_FIELDS, "scopes": SCOPES,
                          "extract_names": extract_names(archive.conn)}


def _required_url(params: Mapping[str, str]) -> str:
    url = text_param(params, "url")
    if not url:
        raise BadRequest("Missing url: name the page with ?url=")
    return url


def _section_window(params: Mapping[str, str], name: str) -> tuple[int, int]:
    """``(page number, offset)`` of the page detail's list ``name``."""
    number = int_param(params, name, 1, 1, _OFFSET_MAX)
    assert number is not None  # a default was given
    return number, (number - 1) * PAGE_SIZE


def page_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """Everything recorded about one page: its issues first, HTTP facts, headers, metadata,
    redirects, links out
    and in, images, resources, analysis values and violations, console messages, JSON-LD, and
    whether a snapshot exists. Each list is one page of rows, paged on its own."""
    url = _required_url(params)
    pages = {name: _section_window(params, name) for name in DETAIL_SECTIONS}
    first_links = pages["links_out"][0] == pages["links_in"][0] == 1
    detail = get_page_detail(archive.conn, url, link_limit=PAGE_SIZE if first_links else 0)
    if detail is None:
        raise NotFound(f"No page with URL {url!r} in this archive")
    conn, page_url = archive.conn, detail["url"]
    links_out: Paged[OutboundLink] | None
    links_in: Paged[InboundLink] | None
    if first_links:
        links_out = {"items": detail["outbound_links"], "total": detail["outbound_total"],
                     "offset": 0, "limit": PAGE_SIZE}
        links_in = {"items": detail["inbound_links"], "total": detail["inbound_total"],
                    "offset": 0, "limit": PAGE_SIZE}
    else:
        links_out = list_outbound_links(conn, page_url, limit=PAGE_SIZE,
                                        offset=pages["links_out"][1])
        links_in = list_inbound_links(conn, page_url, limit=PAGE_SIZE,
                                      offset=pages["links_in"][1])
    page = {key: value for key, value in detail.items()
            if key not in ("outbound_links", "inbound_links")}  # the lists come paged
    images = list_page_images(conn, page_url, limit=PAGE_SIZE, offset=pages["images"][1])
    resources = list_page_resources(conn, page_url, limit=PAGE_SIZE,
                                    offset=pages["resources"][1])
    console = list_console_messages(conn, url=page_url, limit=PAGE_SIZE,
                                    offset=pages["console"][1])
    violations = get_violations(conn, url=page_url, limit=PAGE_SIZE,
                                offset=pages["violations"][1])
    chain = [*detail["redirect_from"], page_url]
    if detail["redirect_to"]:
        chain.append(detail["redirect_to"])
    return "page.html", {"page": page, "issues": page_issues(conn, page_url) or [],
                         "links_out": links_out, "links_in": links_in,
                         "images": images, "resources": resources, "console": console,
                         "violations": violations, "analysis": get_page_analysis(conn, page_url),
                         "json_ld": get_page_json_ld(conn, page_url),
                         "technologies": list_page_technologies(conn, page_url) or [],
                         "has_snapshot": has_page_snapshot(conn, page_url),
                         "redirect_chain": chain,
                         "section_pages": {name: number for name, (number, _) in pages.items()}}


def snapshot_html(archive: OpenArchive, params: Mapping[str, str]) -> str:
    """The stored HTML of one page (served raw, under the snapshot's own sandboxing CSP)."""
    url = _required_url(params)
    snapshot = get_page_html(archive.conn, url, max_length=SQLITE_INTEGER_MAX)
    if snapshot is None:
        raise NotFound(f"No snapshot of {url!r} in this archive")
    return snapshot["html"]


def links_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """Broken links, links to external URLs, or orphaned pages; one page of rows."""
    kind = choice_param(params, "type", LINK_TYPES, "broken")
    number = page_number(params)
    limit, offset = window(number)
    result = list_links(archive.conn, kind, limit=limit, offset=offset)
    return "links.html", {"links": result, "type": kind, "types": LINK_TYPES, "page": number}


def clusters_view(archive: OpenArchive, params: Mapping[str, str]
                  ) -> tuple[str, dict[str, Any]]:
    """Duplicate-metadata clusters of at least ``min`` pages, og:url mismatches first."""
    min_count = int_param(params, "min", 10, 1, SQLITE_INTEGER_MAX)
    assert min_count is not None
    number = page_number(params)
    limit, offset = window(number)
    result = get_duplicate_clusters(archive.conn, min_count=min_count, sample=5, limit=limit,
                                    offset=offset)
    for cluster in result["items"]:
        archive.remember_cluster(cluster["signature"], cluster["meta_signature_fields"]["title"])
    return "clusters.html", {"clusters": result, "min": min_count, "page": number}


def _signature(params: Mapping[str, str]) -> str:
    signature = text_param(params, "signature", max_length=40)
    if len(signature) != 40 or any(c not in "0123456789abcdef" for c in signature):
        raise BadRequest(f"Invalid signature: {signature!r}. Must be 40 hex digits")
    return signature


def cluster_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """Every page of one cluster, by URL."""
    signature = _signature(params)
    number = page_number(params)
    limit, offset = window(number)
    title = archive.cluster_titles.get(signature)
    result = list_cluster_pages(archive.conn, signature, title=title, limit=limit, offset=offset)
    if result["total"] == 0:
        raise NotFound(f"No cluster with signature {signature} in this archive")
    if result["items"]:
        archive.remember_cluster(signature, result["items"][0]["title"])
    return "cluster.html", {"cluster": result, "signature": signature, "page": number}


def traps_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The trap cap's audit log: every firing, oldest first."""
    number = page_number(params)
    limit, offset = window(number)
    return "traps.html", {"events": list_trap_events(archive.conn, limit=limit, offset=offset),
                          "page": number}


def resources_view(archive: OpenArchive, params: Mapping[str, str]
                   ) -> tuple[str, dict[str, Any]]:
    """Sub-resources (content-type prefix and scope filters); ``?url=`` one resource's
    referring pages."""
    number = page_number(params)
    limit, offset = window(number)
    url = text_param(params, "url")
    if url:
        referrers = get_resource_referrers(archive.conn, url, limit=limit, offset=offset)
        if referrers is None:
            raise NotFound(f"No resource with URL {url!r} in this archive")
        return "referrers.html", {"referrers": referrers, "page": number}
    content_type = text_param(params, "type", max_length=200)
    scope = choice_param(params, "scope", SCOPES, "all")
    result = list_resources(archive.conn, content_type=content_type or None,
                            is_external=None if scope == "all" else scope == "external",
                            limit=limit, offset=offset)
    return "resources.html", {"resources": result, "page": number, "scopes": SCOPES,
                              "filters": {"type": content_type, "scope": scope}}


IMAGE_FILTERS = ("all", "missing-alt", "missing-dimensions", "oversized")


def images_view(archive: OpenArchive, params: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """Images: all, or those missing alt, missing dimensions, or larger than the crawl's file
    size threshold (offered only when the crawl set one)."""
    show = choice_param(params, "show", IMAGE_FILTERS, "all")
    number = page_number(params)
    limit, offset = window(number)
    threshold = file_size_threshold(archive.conn)
    if show == "oversized" and threshold is None:
        raise BadRequest("Invalid show: 'oversized'. This archive's crawl set no image file "
                         "size threshold (--image-file-size-threshold)")
    result = list_images(archive.conn, missing_alt=show == "missing-alt",
                         missing_dimensions=show == "missing-dimensions",
                         oversized=show == "oversized", limit=limit, offset=offset)
    shown = [f for f in IMAGE_FILTERS if f != "oversized" or threshold is not None]
    return "images.html", {"images": result, "show": show, "filters": shown,
                           "threshold": threshold, "page": number}


def violations_view(archive: OpenArchive, params: Mapping[str, str]
                    ) -> tuple[str, dict[str, Any]]:
    """Analyzer findings, drilled down: the rules violated (most findings first); a rule
    (``?validator=&rule=``): the pages with it; a rule on one page (``&url=``): the findings.
    A filter other than that (``?severity=``, ``?url=`` alone, ``?validator=`` alone) lists
    the findings it matches."""
    number = page_number(params)
    limit, offset = window(number)
    filters = {name: text_param(params, name, max_length=2000)
               for name in ("validator", "severity", "rule", "url")}
    context = {"filters": filters, "page": number}
    if not any(filters.values()):
        rules = list_violation_rules(archive.conn, limit=limit, offset=offset)
        return "violations.html", {**context, "level": "rules", "rules": rules}
    if filters["validator"] and filters["rule"] and not filters["url"] \
            and not filters["severity"]:
        rule_pages = list_rule_pages(archive.conn, filters["validator"], filters["rule"],
                                     limit=limit, offset=offset)
        return "violations.html", {**context, "level": "pages", "rule_pages": rule_pages}
    result = get_violations(archive.conn, limit=limit, offset=offset,
                            **{k: v or None for k, v in filters.items()})
    return "violations.html", {**context, "level": "findings", "violations": result}


def duplicates_view(archive: OpenArchive, params: Mapping[str, str]
                    ) -> tuple[str, dict[str, Any]]:
    """Titles or descriptions shared by several internal pages, most shared first (each with
    its first 20 pages); ``?value=``: every page with that one, a page at a time."""
    field = choice_param(params, "field", DUPLICATE_FIELDS, "title")
    number = page_number(params)
    limit, offset = window(number)
    if "value" in params:
        value = text_param(params, "value", max_length=10_000)
        pages = list_duplicate_pages(archive.conn, field, value, limit=limit, offset=offset)
        return "duplicates.html", {"field": field, "value": value, "pages": pages,
                                   "fields": DUPLICATE_FIELDS, "page": number}
    result = find_duplicates(archive.conn, field, limit=limit, offset=offset, max_urls=20)
    return "duplicates.html", {"duplicates": result, "field": field,
                               "fields": DUPLICATE_FIELDS, "page": number}


def mismatches_view(archive: OpenArchive, params: Mapping[str, str]
                    ) -> tuple[str, dict[str, Any]]:
    """Pages whose canonical, og:title or og:description disagrees with the page."""
    kind = choice_param(params, "type", MISMATCH_TYPES, MISMATCH_TYPES[0])
    number = page_number(params)
    limit, offset = window(number)
    result = find_mismatches(archive.conn, kind, limit=limit, offset=offset)
    return "mismatches.html", {"mismatches": result, "type": kind, "types": MISMATCH_TYPES,
                               "page": number}


def headers_view(archive: OpenArchive, params: Mapping[str, str]
                 ) -> tuple[str, dict[str, Any]]:
    """Which security headers each internal page was served with; ``?missing=1`` keeps the
    pages missing one or more."""
    missing = choice_param(params, "missing", ("0", "1"), "0") == "1"
    number = page_number(params)
    limit, offset = window(number)
    result = check_headers(archive.conn, missing_only=missing, limit=limit, offset=offset)
    return "headers.html", {"headers": result, "missing": missing, "page": number}


_TEMPLATE_MAX = 2**62


def templates_view(archive: OpenArchive, params: Mapping[str, str]
                   ) -> tuple[str, dict[str, Any]]:
    """The Templates view: the template clusters (pages grouped by their DOM skeleton), most
    pages first, with example pages and how many template-level findings each has; or
    (``?template=K``) that cluster's pages, paged, and the findings of its skeleton grouped by
    element (:func:`nitpicker.query.templates.list_template_findings`)."""
    number = page_number(params)
    limit, offset = window(number)
    template = int_param(params, "template", None, 1, _TEMPLATE_MAX)
    if template is None:
        clusters = list_templates(archive.conn, examples=3, limit=limit, offset=offset)
        findings: dict[int, int] = {}
        for item in list_template_findings(archive.conn, limit=1000)["items"]:
            findings[item["template"]] = findings.get(item["template"], 0) + 1
        return "templates.html", {"templates": clusters, "findings": findings,
                                  "cluster": None, "page": number}
    pages = list_template_pages(archive.conn, template, limit=limit, offset=offset)
    grouped = list_template_findings(archive.conn, template=template, everything=True,
                                     limit=1000)
    return "templates.html", {"cluster": template, "template_pages": pages,
                              "template_findings": grouped, "page": number}


VIEWS: dict[str, View] = {
    "": summary_view,
    "issue": issue_view,
    "pages": pages_view,
    "page": page_view,
    "links": links_view,
    "clusters": clusters_view,
    "cluster": cluster_view,
    "content-clusters": content_clusters_view,
    "content-cluster": content_cluster_view,
    "traps": traps_view,
    "resources": resources_view,
    "images": images_view,
    "violations": violations_view,
    "duplicates": duplicates_view,
    "mismatches": mismatches_view,
    "headers": headers_view,
    "templates": templates_view,
    "tree": tree_view,
    "graph": graph_view,
    "technologies": technologies_view,
}
"""Path (after ``/a/<index>/``) → view."""
