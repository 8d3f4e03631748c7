"""What the CLI prints: one-line errors and the crawl summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer

from nitpicker.query import ArchiveOpenError, latest_run, list_outages, open_archive, summary

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.cli.runner import CrawlResult
    from nitpicker.query import Outage, Paged

__all__ = ["fail", "print_summary"]


def fail(message: str, *, verbose_detail: str | None = None, code: int = 1) -> NoReturn:
    """Print ``Error: <message>`` (and the traceback with ``--verbose``) and exit."""
    if verbose_detail:
        print(verbose_detail, file=sys.stderr)
    print(f"Error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def print_summary(path: Path, result: CrawlResult) -> None:
    """The closing summary: the archive, what it holds, and how the run ended.

    Every value from the user or the site (the path, an error's text) is escaped: a ``[`` in it
    is printed, never read as rich markup.
    """
    from rich.console import Console  # here: a query, which only fails or prints JSON, skips it
    from rich.markup import escape

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        conn = open_archive(path)
    except ArchiveOpenError as exc:
        console.print(f"[red]Archive not readable:[/red] {escape(str(exc))}")
        return
    try:
        facts = summary(conn)
        run = latest_run(conn)
        outages = list_outages(conn, run_id=run["id"]) if run else None
    finally:
        conn.close()
    counters = result.counters
    rate = counters.done / result.elapsed if result.elapsed else 0.0
    status = run["status"] if run else "unknown"
    console.print(f"[bold]Archive:[/bold] {escape(str(path))}")
    console.print(
        f"  {facts.internal_pages} pages in scope · {facts.external_urls} external URLs · "
        f"{facts.redirects} redirects · {facts.skipped} skipped"
    )
    console.print(
        f"  {facts.fetch_errors} fetch errors · {facts.status_4xx} 4xx · {facts.status_5xx} 5xx"
    )
    code = f", {run['error_code']}" if run and run["error_code"] else ""
    reason = escape(f"{result.stop_reason or 'unknown'}{code}")
    line = (f"  run {escape(str(status))} ({reason}): {counters.done} URLs in "
            f"{result.elapsed:.1f} s, {rate:.1f} URLs/s")
    if run and run["status"] == "failed":
        failure = escape(f"{run['error_code']}): {run['error_detail']}")
        console.print(f"[red]Crawl failed ({failure}[/red] — "
                      f"stopped early after {counters.done} URLs; every page recorded so far "
                      "is in the archive.")
    if facts.pending:
        line += (f"; {facts.pending} left — continue with: "
                 f"nitpicker crawl --resume {escape(str(path))}")
    console.print(line)
    if outages and outages["total"]:
        console.print(escape(_outages_line(outages, path)))
    errors = counters.internal_errors + counters.external_errors
    if errors:
        parts = []
        if counters.internal_errors:
            parts.append(f"{counters.internal_errors} internal")
        if counters.external_errors:
            parts.append(f"{counters.external_errors} external")
        console.print(f"Crawl completed with {errors} error(s) ({', '.join(parts)}).")


def _outages_line(outages: Paged[Outage], path: Path) -> str:
    """The run's network outages in one line: how long the crawl paused, what became of the
    URLs that failed during them."""
    items = outages["items"]
    total = outages["total"]
    paused = sum(outage["seconds"] or 0.0 for outage in items)
    again = sum(outage["requeued"] for outage in items if outage["outcome"] == "resumed")
    left = sum(outage["requeued"] for outage in items if outage["outcome"] != "resumed")
    noun = "network outage" if total == 1 else "network outages"
    fate = f"{again} URL(s) fetched again" + (f", {left} left for --resume" if left else "")
    return f"  {total} {noun}: paused {paused:.1f} s, {fate} (nitpicker query {path} outages)"
