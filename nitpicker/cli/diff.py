"""``nitpicker diff OLD NEW``: what changed between two crawls, and a CI gate on it.

Every category is one function of :mod:`nitpicker.query.diff`, read once, row by row: the text
report keeps only the first ``--limit`` items of each, the JSON and HTML reports write every
item as it is read. ``--fail-on`` names categories that must be empty (:mod:`nitpicker.cli.gate`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from nitpicker.ci.export import EXPORT_FORMATS
from nitpicker.cli.diff_format import findings_note, format_item, no_common_note
from nitpicker.cli.diff_html import write_html
from nitpicker.cli.export_output import check_output, export_findings, load_suppressions
from nitpicker.cli.gate import (
    GATE_EXIT,
    GateCount,
    check_gateable,
    gate_findings,
    parse_fail_on,
    print_gate,
)
from nitpicker.cli.output import fail, replaced_text_file
from nitpicker.query.diff import (
    CATEGORIES,
    UrlMap,
    compare_archives,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from nitpicker.query.diff import ArchiveDiff

__all__ = ["DIFF_SCHEMA_VERSION", "GATE_EXIT", "app", "diff"]

app = typer.Typer()

DIFF_SCHEMA_VERSION = 1
"""``schema`` of the JSON report: raised when a field changes meaning or goes away (new
categories and fields may be added without raising it)."""

FORMATS = ("text", "json", "html", *EXPORT_FORMATS)


class _Tally:
    """Counts and the first items of each category, from one pass over its rows."""

    def __init__(self, keep: int, gates: GateCount | None = None) -> None:
        self.keep = keep
        self.gates = gates or GateCount([])
        self.counts: dict[str, int] = {}
        self.first: dict[str, list[dict[str, Any]]] = {}

    def read(self, diff: ArchiveDiff, name: str) -> Iterator[dict[str, Any]]:
        count = 0
        first: list[dict[str, Any]] = []
        for item in diff.items(name):
            count += 1
            if len(first) < self.keep:
                first.append(item)
            self.gates.see_item(name, item, format_item)
            yield item
        self.counts[name] = count
        self.first[name] = first


def write_json(diff: ArchiveDiff, out: IO[str], tally: _Tally) -> None:
    """Every item of every category, written as it is read (stable schema: docs/guide/diff.md)."""
    url_map = ({"old_prefix": diff.url_map.old_prefix, "new_prefix": diff.url_map.new_prefix}
               if diff.url_map else None)
    head = {"schema": DIFF_SCHEMA_VERSION, "old": diff.old, "new": diff.new,
            "url_map": url_map, "common_pages": diff.common_pages,
            "compared_plugins": diff.compared_plugins}
    out.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "categories": {')
    for index, category in enumerate(CATEGORIES):
        out.write(("" if index == 0 else ", ") + json.dumps(category.name) + ': {"items": [')
        for number, item in enumerate(tally.read(diff, category.name)):
            out.write(("" if number == 0 else ", ") + json.dumps(item, ensure_ascii=False))
        out.write(f'], "count": {tally.counts[category.name]}}}')
    out.write("}}\n")


def write_text(diff: ArchiveDiff, out: IO[str], tally: _Tally, limit: int) -> None:
    """Counts, then the first ``limit`` items of each category that has any."""
    for category in CATEGORIES:
        for _ in tally.read(diff, category.name):
            pass
    counts = tally.counts
    out.write(f"OLD {diff.old['path']}  ({diff.old['base_url']}, {diff.old['created_at']})\n")
    out.write(f"NEW {diff.new['path']}  ({diff.new['base_url']}, {diff.new['created_at']})\n")
    if diff.url_map:
        out.write(f"map {diff.url_map.old_prefix} = {diff.url_map.new_prefix}\n")
    note = no_common_note(diff)
    if note:
        out.write(f"{note}\n")
    out.write(f"pages: {diff.common_pages} in both, {counts['pages_added']} added, "
              f"{counts['pages_removed']} removed\n")
    out.write(f"{findings_note(diff)}\n\n")
    width = max(len(category.name) for category in CATEGORIES)
    for category in CATEGORIES:
        out.write(f"{category.name:<{width}}  {counts[category.name]:>6}  "
                  f"{category.description}\n")
    for category in CATEGORIES:
        count = counts[category.name]
        if not count:
            continue
        shown = tally.first[category.name][:limit]
        out.write(f"\n{category.name} ({count})\n")
        for item in shown:
            out.write(f"  {format_item(category.name, item)}\n")
        if count > len(shown):
            out.write(f"  … and {count - len(shown)} more\n")


@contextlib.contextmanager
def _output(path: Path | None) -> Iterator[IO[str]]:
    """stdout, or a file replaced only once the report is complete (a failed run leaves the
    file as it was)."""
    if path is None:
        yield sys.stdout
        return
    with replaced_text_file(path) as handle:
        yield handle


@app.command()
def diff(
    old: Annotated[Path, typer.Argument(metavar="OLD", help="The earlier archive (.nitpicker).",
                                        show_default=False)],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The later archive (.nitpicker).",
                                        show_default=False)],
    format_: Annotated[str, typer.Option("--format", "-f", help="text (a summary), json "
                                         "(every item), html (every item, one "
                                         "self-contained page with charts), or NEW's findings "
                                         "marked new or unchanged: sarif, junit, markdown, "
                                         "github (as nitpicker export).")] = "text",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to "
                                                "this file (default: stdout).",
                                                show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-l", help="Items shown per category in the "
                                       "text report (json and html have every item).")] = 10,
    url_map: Annotated[str | None, typer.Option("--map", help="OLD_PREFIX=NEW_PREFIX: compare "
                                                "OLD URLs with this prefix as NEW spells them.",
                                                show_default=False)] = None,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="Exit 3 when one of these "
                                                "gates (comma-separated) trips: new-broken-"
                                                "links, new-4xx, new-5xx, removed-pages, "
                                                "new-violations:SEVERITY, or on NEW's findings "
                                                "broken-links, 4xx, 5xx, issues:PRIORITY, "
                                                "violations:SEVERITY, check:ID; NAME>N trips "
                                                "over N.", show_default=False)] = None,
    suppressions: Annotated[Path | None, typer.Option("--suppressions", help="The accepted "
                                                      "findings the gates do not count "
                                                      "(default: .nitpicker-baseline.json when "
                                                      "there is one).",
                                                      show_default=False)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Compare two archives of a site: pages added and removed, changed titles, statuses and
    metadata, links added, removed, broken and fixed, resources now failing, images that
    lost their alt text, new trap-cap firings, analyzer findings new, fixed and persisting,
    and changed plugin values.

    Both archives are opened read-only. Exit 3 when a --fail-on gate trips, 1 on bad input.

    Example: nitpicker diff last-week.nitpicker today.nitpicker --fail-on
    new-broken-links,new-violations:error
    """
    try:
        if format_ not in FORMATS:
            raise ValueError(f"Invalid --format: {format_!r}. Must be one of: {', '.join(FORMATS)}")
        if limit < 0:
            raise ValueError(f"--limit must not be negative, got {limit}")
        gates = parse_fail_on(fail_on)
        mapping = UrlMap.parse(url_map) if url_map is not None else None
        check_output(output, [old, new], "an archive compared")
        comparison = compare_archives(old, new, url_map=mapping)
    except ValueError as exc:
        fail(str(exc), verbose_detail=traceback.format_exc() if verbose else None)
    check = GateCount(gates, load_suppressions(suppressions) if (
        gates or format_ in EXPORT_FORMATS) else None)
    with comparison:
        if check.absolute:
            check_gateable(new)  # a UserError: the group's one line
        note = no_common_note(comparison)
        if note and (format_ != "text" or output is not None):
            print(f"Note: {note}", file=sys.stderr)
        if format_ in EXPORT_FORMATS:
            export_findings(format_, new, output, suppressions=check.suppressions, old=old,
                            url_map=mapping, verbose=verbose)
            for category in check.categories:
                for item in comparison.items(category):
                    check.see_item(category, item, format_item)
        else:
            _write_report(comparison, format_, output, _Tally(
                limit if format_ == "text" else 0, check), limit, gated=bool(gates),
                verbose=verbose)
    gate_findings(new, check)
    code = print_gate(check)
    if code:
        raise typer.Exit(code)


def _write_report(comparison: ArchiveDiff, format_: str, output: Path | None, tally: _Tally,
                  limit: int, *, gated: bool, verbose: bool) -> None:
    """The text, JSON or HTML report, to stdout or ``output``."""
    try:
        with _output(output) as out:
            if format_ == "json":
                write_json(comparison, out, tally)
            elif format_ == "html":
                write_html(comparison, out, tally.read)
            else:
                write_text(comparison, out, tally, limit)
    except BrokenPipeError:  # stdout closed early (| head): the rest is not wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(GATE_EXIT if gated else 0) from None
    except OSError as exc:
        fail(f"Cannot write {output}: {exc.strerror}",
             verbose_detail=traceback.format_exc() if verbose else None)
