"""``nitpicker query``: answer a question about an archive as JSON.

Every sub-command calls one function of :mod:`nitpicker.query`; this module only maps flags to
arguments, checks them, and prints the result. The archive is opened read-only and never
changed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer

from nitpicker.cli import app
from nitpicker.cli.output import fail
from nitpicker.query import (
    INTEGER_RANGES,
    LINK_TYPES,
    MISMATCH_TYPES,
    ArchiveOpenError,
    check_headers,
    check_integer,
    find_duplicates,
    find_mismatches,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_resource_referrers,
    get_summary,
    get_violations,
    list_crawl_runs,
    list_images,
    list_links,
    list_pages,
    list_resources,
    open_archive,
)
from nitpicker.query.trap_events import list_trap_events

__all__ = ["SUBCOMMANDS", "query"]

_PAGING = ("limit", "offset")


class SubCommand(NamedTuple):
    call: Callable[..., Any]
    """The library function: ``call(conn, **options)``."""
    options: tuple[str, ...]
    """The options it takes (parameter names)."""
    required: tuple[str, ...] = ()
    missing: str = ""
    """What ``None`` from ``call`` means (an error naming ``--url``)."""


SUBCOMMANDS: dict[str, SubCommand] = {
    "summary": SubCommand(get_summary, ()),
    "pages": SubCommand(list_pages, (
        "status", "status_min", "status_max", "is_external", "missing_title",
        "missing_description", "noindex", "url_pattern", "directory", "sort_by", "sort_order",
        *_PAGING)),
    "page-detail": SubCommand(get_page_detail, ("url",), ("url",), "Page not found"),
    "html": SubCommand(get_page_html, ("url", "max_length"), ("url",), "HTML snapshot not found"),
    "links": SubCommand(list_links, ("type", *_PAGING), ("type",)),
    "resources": SubCommand(list_resources, ("content_type", "is_external", *_PAGING)),
    "images": SubCommand(list_images, (
        "missing_alt", "missing_dimensions", "oversized_threshold", "url_pattern", *_PAGING)),
    "violations": SubCommand(get_violations, ("validator", "severity", "rule", *_PAGING)),
    "duplicates": SubCommand(find_duplicates, ("field", *_PAGING)),
    "mismatches": SubCommand(find_mismatches, ("type", *_PAGING), ("type",)),
    "headers": SubCommand(check_headers, ("missing_only", *_PAGING)),
    "resource-referrers": SubCommand(get_resource_referrers, ("url", *_PAGING), ("url",),
                                     "Resource not found"),
    "duplicate-clusters": SubCommand(get_duplicate_clusters, ("min_count", "sample", *_PAGING)),
    "runs": SubCommand(list_crawl_runs, _PAGING),
    "trap-events": SubCommand(list_trap_events, _PAGING),
}
"""Sub-command → library call, in the order ``--help`` lists them."""

_CHOICES = {("links", "type"): LINK_TYPES, ("mismatches", "type"): MISMATCH_TYPES}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check(name: str | None, options: dict[str, Any]) -> SubCommand:
    """The sub-command, once its name and flags are known to make sense together."""
    valid = f"Valid sub-commands: {', '.join(SUBCOMMANDS)}"
    if name is None:
        fail(f"No sub-command specified. {valid}")
    if name not in SUBCOMMANDS:
        fail(f"Unknown sub-command: {name}. {valid}")
    sub = SUBCOMMANDS[name]
    for option, value in options.items():
        if value is not None and value is not False and option not in sub.options:
            fail(f"{_flag(option)} does not apply to the {name} sub-command")
    for option in sub.required:
        if options[option] is None:
            choices = _CHOICES.get((name, option))
            allowed = f". Must be one of: {', '.join(choices)}" if choices else ""
            fail(f"{_flag(option)} is required for the {name} sub-command{allowed}")
    for option in INTEGER_RANGES.keys() & options.keys():
        try:
            check_integer(option, options[option], label=_flag(option))
        except ValueError as exc:
            fail(str(exc))
    return sub


def _run(conn: sqlite3.Connection, sub: SubCommand, options: dict[str, Any]) -> Any:
    arguments = {k: v for k, v in options.items() if k in sub.options and v is not None}
    try:
        result = sub.call(conn, **arguments)
    except ValueError as exc:
        fail(str(exc))
    if result is None and sub.missing:
        fail(f"{sub.missing}: {options['url']}")
    return result


def query(
    file: Annotated[Path | None, typer.Argument(help="The .nitpicker archive.", show_default=False)] = None,
    subcommand: Annotated[str | None, typer.Argument(metavar="SUB-COMMAND", help=f"One of: {', '.join(SUBCOMMANDS)}.", show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-l", help="Most results to return (default 100; duplicates 50).", show_default=False)] = None,
    offset: Annotated[int | None, typer.Option("--offset", "-o", help="Results to skip (default 0).", show_default=False)] = None,
    url: Annotated[str | None, typer.Option("--url", help="The page or resource URL (page-detail, html, resource-referrers).")] = None,
    status: Annotated[int | None, typer.Option("--status", help="pages: this HTTP status only.")] = None,
    status_min: Annotated[int | None, typer.Option("--status-min", help="pages: status at least this.")] = None,
    status_max: Annotated[int | None, typer.Option("--status-max", help="pages: status at most this.")] = None,
    is_external: Annotated[bool | None, typer.Option("--is-external/--is-internal", help="pages, resources: only external / only internal.", show_default=False)] = None,
    missing_title: Annotated[bool, typer.Option("--missing-title", help="pages: no title.")] = False,
    missing_description: Annotated[bool, typer.Option("--missing-description", help="pages: no meta description.")] = False,
    noindex: Annotated[bool, typer.Option("--noindex", help="pages: robots noindex.")] = False,
    url_pattern: Annotated[str | None, typer.Option("--url-pattern", help="pages: URL, images: src, SQL LIKE pattern (% wildcard).")] = None,
    directory: Annotated[str | None, typer.Option("--directory", help="pages: under this path (/blog/) or URL prefix.")] = None,
    sort_by: Annotated[str | None, typer.Option("--sort-by", help="pages: url, status or title (default url).")] = None,
    sort_order: Annotated[str | None, typer.Option("--sort-order", help="pages: asc or desc (default asc).")] = None,
    type_: Annotated[str | None, typer.Option("--type", help="links: broken, external, orphaned; mismatches: canonical, og:title, og:description.")] = None,
    content_type: Annotated[str | None, typer.Option("--content-type", help="resources: content-type prefix (text/css).")] = None,
    missing_alt: Annotated[bool, typer.Option("--missing-alt", help="images: alt absent or empty.")] = False,
    missing_dimensions: Annotated[bool, typer.Option("--missing-dimensions", help="images: width or height absent or 0.")] = False,
    oversized_threshold: Annotated[int | None, typer.Option("--oversized-threshold", help="images: natural width or height above N px.")] = None,
    validator: Annotated[str | None, typer.Option("--validator", help="violations: this validator only.")] = None,
    severity: Annotated[str | None, typer.Option("--severity", help="violations: this severity only.")] = None,
    rule: Annotated[str | None, typer.Option("--rule", help="violations: this rule only.")] = None,
    field: Annotated[str | None, typer.Option("--field", help="duplicates: title or description (default title).")] = None,
    missing_only: Annotated[bool, typer.Option("--missing-only", help="headers: pages missing a security header only.")] = False,
    max_length: Annotated[int | None, typer.Option("--max-length", help="html: most characters (default 100000).")] = None,
    min_count: Annotated[int | None, typer.Option("--min-count", help="duplicate-clusters: smallest cluster (default 10).")] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="duplicate-clusters: sample URLs per cluster (default 5).")] = None,
    pretty: Annotated[bool, typer.Option("--pretty", help="Indent the JSON.")] = False,
) -> None:
    """Answer a question about an archive, as JSON on stdout. The archive is never modified.

    Sub-commands: summary, pages, page-detail, html, links, resources, images, violations,
    duplicates, mismatches, headers, resource-referrers, duplicate-clusters, runs.

    Example: nitpicker query site.nitpicker links --type broken --limit 20 --pretty
    """
    # every flag but --pretty, by parameter name (locals() holds exactly the parameters here)
    options = {k: v for k, v in locals().items() if k not in ("file", "subcommand", "pretty")}
    options["type"] = options.pop("type_")
    if file is None:
        fail("No .nitpicker file specified. Usage: nitpicker query FILE SUB-COMMAND [OPTIONS]")
    sub = _check(subcommand, options)
    try:
        conn = open_archive(file)
    except ArchiveOpenError as exc:
        fail(str(exc))
    try:
        result = _run(conn, sub, options)
    except sqlite3.DatabaseError as exc:
        fail(f"{file}: corrupt archive ({exc})")
    finally:
        conn.close()
    typer.echo(json.dumps(result, ensure_ascii=False, indent=2 if pretty else None))


app.command(name="query")(query)
