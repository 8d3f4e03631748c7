"""``nitpicker query FILE SUB-COMMAND``: answer a question about an archive as JSON.

``query`` is a group: one command per sub-command, each with its own flags and ``--help``, each
calling one function of :mod:`nitpicker.query`. This module only maps flags to arguments,
checks integers against the library's ranges (``INTEGER_RANGES``, the table the MCP server
checks too) and prints the result. The archive is opened read-only and never changed.

:class:`QueryGroup` takes FILE and the sub-command in either order, with the flags anywhere
around them (``nitpicker query FILE links --type broken``, ``nitpicker query links FILE --type
broken``, ``nitpicker query --pretty FILE summary``), and names each mistake in one line: no
FILE, no or an unknown sub-command, a flag of another sub-command, a missing required flag
(:mod:`nitpicker.cli.query_group`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.cli.query_answer import (
    IsExternal,
    Limit,
    Offset,
    PageUrl,
    Pretty,
    answer,
    check_integers,
)
from nitpicker.cli.query_content import grep, technologies, technology_pages
from nitpicker.cli.query_content_clusters import (
    content_cluster_pages,
    content_clusters,
    probes,
)
from nitpicker.cli.query_group import QueryGroup
from nitpicker.cli.query_templates import template_findings, template_pages, templates
from nitpicker.query import (
    CONSOLE_LEVELS,
    DUPLICATE_FIELDS,
    LINK_TYPES,
    MISMATCH_TYPES,
    SORT_FIELDS,
    SORT_ORDERS,
    check_headers,
    find_duplicates,
    find_mismatches,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_page_values,
    get_resource_referrers,
    get_summary,
    get_violations,
    issue_urls,
    issues_overview,
    list_console_messages,
    list_crawl_runs,
    list_images,
    list_inventory_runs,
    list_json_ld,
    list_links,
    list_outages,
    list_pages,
    list_resources,
    list_trap_events,
    match_urls,
)
from nitpicker.query.checks import PRIORITIES
from nitpicker.url_file import read_url_lines

__all__ = ["QueryGroup", "app"]

app = typer.Typer(name="query", cls=QueryGroup)


@app.callback()
def query(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
) -> None:
    """Answer a question about an archive, as JSON on stdout. The archive is never modified.

    The flags of a sub-command: nitpicker query FILE SUB-COMMAND --help.

    Example: nitpicker query site.nitpicker links --type broken --limit 20 --pretty
    """
    ctx.obj = file


# -- the sub-commands, in the order --help lists them ----------------------------------------


@app.command()
def summary(ctx: typer.Context, pretty: Pretty = False) -> None:
    """What the archive holds: pages by status, metadata coverage.

    Example: nitpicker query site.nitpicker summary --pretty
    """
    answer(ctx, get_summary, pretty=pretty)


@app.command()
def issues(
    ctx: typer.Context,
    priority: Annotated[str | None, typer.Option("--priority", help=f"This priority or more urgent: {', '.join(PRIORITIES)}.", show_default=False)] = None,
    category: Annotated[str | None, typer.Option("--category", help="This category only (links, indexing, content, accessibility, performance, security, crawl, or an analyzer's).", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="The checks that found nothing too, last.")] = False,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The audit: every issue, most urgent first, with how many URLs, why it matters and the fix.

    Example: nitpicker query site.nitpicker issues --priority high --pretty
    """
    answer(ctx, issues_overview, pretty=pretty, priority=priority, category=category,
            include_passed=all_ or None, limit=limit, offset=offset)


@app.command()
def issue(
    ctx: typer.Context,
    id_: Annotated[str, typer.Option("--id", help="The issue's id (links/broken-internal, axe/image-alt).", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """One issue's findings, by URL: where it is and what each finding says.

    Example: nitpicker query site.nitpicker issue --id links/broken-internal --limit 20
    """
    answer(ctx, issue_urls, pretty=pretty, issue_id=id_, limit=limit, offset=offset)


@app.command()
def pages(
    ctx: typer.Context,
    status: Annotated[int | None, typer.Option("--status", help="This HTTP status only (-1: no HTTP answer).", show_default=False)] = None,
    status_min: Annotated[int | None, typer.Option("--status-min", help="Status at least this.", show_default=False)] = None,
    status_max: Annotated[int | None, typer.Option("--status-max", help="Status at most this.", show_default=False)] = None,
    is_external: IsExternal = None,
    missing_title: Annotated[bool, typer.Option("--missing-title", help="No title.")] = False,
    missing_description: Annotated[bool, typer.Option("--missing-description", help="No meta description.")] = False,
    noindex: Annotated[bool, typer.Option("--noindex", help="Robots noindex.")] = False,
    url_pattern: Annotated[str | None, typer.Option("--url-pattern", help="URL matching this SQL LIKE pattern (% any text, _ one character).", show_default=False)] = None,
    directory: Annotated[str | None, typer.Option("--directory", help="Under this path (/blog/) or URL prefix.", show_default=False)] = None,
    sort_by: Annotated[str | None, typer.Option("--sort-by", help=f"{', '.join(SORT_FIELDS)} (default url).", show_default=False)] = None,
    sort_order: Annotated[str | None, typer.Option("--sort-order", help=f"{', '.join(SORT_ORDERS)} (default asc).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The page list: every URL dealt with but redirect sources and known non-HTML.

    Example: nitpicker query site.nitpicker pages --status-min 400 --sort-by status
    """
    answer(ctx, list_pages, pretty=pretty, status=status, status_min=status_min,
            status_max=status_max, is_external=is_external, missing_title=missing_title,
            missing_description=missing_description, noindex=noindex, url_pattern=url_pattern,
            directory=directory, sort_by=sort_by, sort_order=sort_order, limit=limit,
            offset=offset)


@app.command()
def page_detail(ctx: typer.Context, url: PageUrl, pretty: Pretty = False) -> None:
    """Everything about one URL: status, headers, metadata, links out and in, redirects.

    Example: nitpicker query site.nitpicker page-detail --url https://example.com/about
    """
    answer(ctx, get_page_detail, pretty=pretty, missing="Page not found", url=url)


@app.command()
def html(
    ctx: typer.Context,
    url: PageUrl,
    max_length: Annotated[int | None, typer.Option("--max-length", help="Most characters (default 100000).", show_default=False)] = None,
    pretty: Pretty = False,
) -> None:
    """The HTML snapshot of an in-scope HTML page.

    Example: nitpicker query site.nitpicker html --url https://example.com/ --max-length 500
    """
    answer(ctx, get_page_html, pretty=pretty, missing="HTML snapshot not found", url=url,
            max_length=max_length)


app.command("grep")(grep)
app.command("technologies")(technologies)
app.command("technology-pages")(technology_pages)


@app.command()
def links(
    ctx: typer.Context,
    type_: Annotated[str, typer.Option("--type", help=f"{', '.join(LINK_TYPES)}.", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Broken links, external links, or orphaned pages (no page links to them).

    Example: nitpicker query site.nitpicker links --type broken --limit 20
    """
    answer(ctx, list_links, pretty=pretty, type=type_, limit=limit, offset=offset)


@app.command()
def resources(
    ctx: typer.Context,
    content_type: Annotated[str | None, typer.Option("--content-type", help="Content-type prefix (text/css, image/).", show_default=False)] = None,
    is_external: IsExternal = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Sub-resources: stylesheets, scripts, images, icons, media.

    Example: nitpicker query site.nitpicker resources --content-type text/css
    """
    answer(ctx, list_resources, pretty=pretty, content_type=content_type,
            is_external=is_external, limit=limit, offset=offset)


@app.command()
def images(
    ctx: typer.Context,
    missing_alt: Annotated[bool, typer.Option("--missing-alt", help="Alt absent or empty.")] = False,
    missing_dimensions: Annotated[bool, typer.Option("--missing-dimensions", help="Width or height absent or 0.")] = False,
    oversized_threshold: Annotated[int | None, typer.Option("--oversized-threshold", help="Natural width or height above N px.", show_default=False)] = None,
    oversized: Annotated[bool, typer.Option("--oversized", help="File larger than the crawl's --image-file-size-threshold.")] = False,
    url_pattern: Annotated[str | None, typer.Option("--url-pattern", help="Src matching this SQL LIKE pattern (% any text, _ one character).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Images by page, in document order; the filters combine.

    Example: nitpicker query site.nitpicker images --missing-alt
    """
    answer(ctx, list_images, pretty=pretty, missing_alt=missing_alt,
            missing_dimensions=missing_dimensions, oversized_threshold=oversized_threshold,
            oversized=oversized, url_pattern=url_pattern, limit=limit, offset=offset)


@app.command()
def violations(
    ctx: typer.Context,
    validator: Annotated[str | None, typer.Option("--validator", help="This validator only.", show_default=False)] = None,
    severity: Annotated[str | None, typer.Option("--severity", help="This severity only.", show_default=False)] = None,
    rule: Annotated[str | None, typer.Option("--rule", help="This rule only.", show_default=False)] = None,
    finding_status: Annotated[str | None, typer.Option("--status", help="violation (the engine says the rule fails) or needs-review (it could not tell) only.", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Analyzer findings (empty until an analyzer has written them).

    Example: nitpicker query site.nitpicker violations --validator axe --status violation
    """
    # not through _answer's options: its integer checks know another --status (pages')
    answer(ctx, functools.partial(get_violations, status=finding_status), pretty=pretty,
            validator=validator, severity=severity, rule=rule, limit=limit, offset=offset)


@app.command()
def page_values(
    ctx: typer.Context,
    plugin: Annotated[str, typer.Option("--plugin", help="The plugin (search, main-contents, markuplint, lighthouse, …).", show_default=False)],
    url_pattern: Annotated[str | None, typer.Option("--url-pattern", help="Page URL matching this SQL LIKE pattern (% any text, _ one character).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """A plugin's values per page (its report table), with its column titles.

    Example: nitpicker query site.nitpicker page-values --plugin main-contents --limit 10
    """
    answer(ctx, get_page_values, pretty=pretty, plugin=plugin, url_pattern=url_pattern,
            limit=limit, offset=offset)


@app.command()
def duplicates(
    ctx: typer.Context,
    field: Annotated[str | None, typer.Option("--field", help=f"{', '.join(DUPLICATE_FIELDS)} (default title).", show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-l", help="Most results to return (default 50).", show_default=False)] = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Titles or descriptions shared by several internal HTML pages, most shared first.

    Example: nitpicker query site.nitpicker duplicates --field description
    """
    answer(ctx, find_duplicates, pretty=pretty, field=field, limit=limit, offset=offset)


@app.command()
def mismatches(
    ctx: typer.Context,
    type_: Annotated[str, typer.Option("--type", help=f"{', '.join(MISMATCH_TYPES)}.", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Pages whose canonical URL names another page, or whose og:title / og:description differ.

    Example: nitpicker query site.nitpicker mismatches --type canonical
    """
    answer(ctx, find_mismatches, pretty=pretty, type=type_, limit=limit, offset=offset)


@app.command()
def headers(
    ctx: typer.Context,
    missing_only: Annotated[bool, typer.Option("--missing-only", help="Pages missing a security header only.")] = False,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Security headers (CSP, X-Frame-Options, X-Content-Type-Options, HSTS) of each page.

    Example: nitpicker query site.nitpicker headers --missing-only
    """
    answer(ctx, check_headers, pretty=pretty, missing_only=missing_only, limit=limit,
            offset=offset)


@app.command()
def resource_referrers(
    ctx: typer.Context,
    url: Annotated[str, typer.Option("--url", help="The resource URL.", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The pages that use one resource.

    Example: nitpicker query site.nitpicker resource-referrers --url https://example.com/style.css
    """
    answer(ctx, get_resource_referrers, pretty=pretty, missing="Resource not found", url=url,
            limit=limit, offset=offset)


@app.command()
def duplicate_clusters(
    ctx: typer.Context,
    min_count: Annotated[int | None, typer.Option("--min-count", help="Smallest cluster (default 10).", show_default=False)] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="Sample URLs per cluster (default 5).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Internal pages sharing one meta signature: the crawler-trap suspects.

    Example: nitpicker query site.nitpicker duplicate-clusters --min-count 3 --sample 2
    """
    answer(ctx, get_duplicate_clusters, pretty=pretty, min_count=min_count, sample=sample,
            limit=limit, offset=offset)


@app.command()
def runs(ctx: typer.Context, limit: Limit = None, offset: Offset = None,
         pretty: Pretty = False) -> None:
    """Every crawl, resume and append run, with how it ended.

    Example: nitpicker query site.nitpicker runs --pretty
    """
    answer(ctx, list_crawl_runs, pretty=pretty, limit=limit, offset=offset)


@app.command()
def trap_events(ctx: typer.Context, limit: Limit = None, offset: Offset = None,
                pretty: Pretty = False) -> None:
    """Every firing of the trap cap (--dedupe-cap).

    Example: nitpicker query site.nitpicker trap-events
    """
    answer(ctx, list_trap_events, pretty=pretty, limit=limit, offset=offset)


@app.command()
def outages(ctx: typer.Context, limit: Limit = None, offset: Offset = None,
            pretty: Pretty = False) -> None:
    """Every network outage the crawl paused for, and how it ended.

    Example: nitpicker query site.nitpicker outages --pretty
    """
    answer(ctx, list_outages, pretty=pretty, limit=limit, offset=offset)


@app.command()
def console(
    ctx: typer.Context,
    level: Annotated[str | None, typer.Option("--level", help=f"This level only: {', '.join(CONSOLE_LEVELS)}.", show_default=False)] = None,
    url: Annotated[str | None, typer.Option("--url", help="The messages of this page only, in the order it showed them (also tried normalised).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Console messages and uncaught exceptions of the rendered pages, each once with its pages.

    Example: nitpicker query site.nitpicker console --level warning
    """
    answer(ctx, list_console_messages, pretty=pretty, missing="Page not found", level=level,
            url=url, limit=limit, offset=offset)


@app.command()
def json_ld(
    ctx: typer.Context,
    type_: Annotated[str | None, typer.Option("--type", help="Pages with a block of this @type only (exact: Product).", show_default=False)] = None,
    invalid: Annotated[bool, typer.Option("--invalid", help="Pages with a block that is not valid JSON-LD only.")] = False,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Pages with JSON-LD blocks, their @types, and the blocks that do not parse.

    Example: nitpicker query site.nitpicker json-ld --type Product
    """
    answer(ctx, list_json_ld, pretty=pretty, type=type_, invalid=invalid, limit=limit,
            offset=offset)


@app.command("match-urls")
def match_urls_command(
    ctx: typer.Context,
    urls: Annotated[Path, typer.Option("--urls", help="A file of URLs, one a line (blank lines and # comments ignored).", show_default=False)],
    unmatched_only: Annotated[bool, typer.Option("--unmatched-only", help="Only the URLs the archive does not have.")] = False,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """For each URL of a file, whether the archive has it (as listed or normalised): its page
    id, status and where it redirects; the URLs it does not have, listed too.

    Example: nitpicker query site.nitpicker match-urls --urls cms-export.txt --unmatched-only
    """
    check_integers(limit=limit, offset=offset)  # before the file is read
    entries = [entry for _, entry in read_url_lines(urls, "--urls file")]
    answer(ctx, match_urls, pretty=pretty, urls=entries, unmatched_only=unmatched_only,
            limit=limit, offset=offset)


@app.command()
def inventory_runs(ctx: typer.Context, limit: Limit = None, offset: Offset = None,
                   pretty: Pretty = False) -> None:
    """Every --inventory file the crawl read: its label, path, sha256 and what it brought.

    Example: nitpicker query site.nitpicker inventory-runs --pretty
    """
    answer(ctx, list_inventory_runs, pretty=pretty, limit=limit, offset=offset)


app.command()(templates)
app.command()(template_pages)
app.command()(template_findings)
app.command()(content_clusters)
app.command()(content_cluster_pages)
app.command()(probes)
