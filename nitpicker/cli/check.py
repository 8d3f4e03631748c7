"""``nitpicker check FILE``: run the built-in site checks over an archive and store what they
find (the same checks every crawl runs when it ends).

The checks are :mod:`nitpicker.query.checks`; running and storing them is
:mod:`nitpicker.archive.check_store` (the archive lock held, one transaction: the archive's
check findings are replaced whole, or left as they were).
"""

from __future__ import annotations

import signal
import sqlite3
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.check_store import CheckStore
from nitpicker.cli.output import fail

if TYPE_CHECKING:
    from nitpicker.archive.check_store import CheckRunSummary

__all__ = ["app", "check"]

app = typer.Typer()

_PRIORITY_STYLES = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan",
                    "info": "dim"}


def _stop_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM stops like Ctrl-C: the transaction is rolled back, nothing is written."""
    raise KeyboardInterrupt


@app.command()
def check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    verbose: Annotated[bool, typer.Option("--verbose", help="Show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress display or summary.")] = False,
) -> None:
    """Run the built-in site checks over an archive and store their findings in it.

    Every crawl runs them when it ends; run them again on an archive of an older version, or
    after a new nitpicker brings new checks. The findings replace the archive's previous
    ones. Read them with: nitpicker query FILE issues.

    Example: nitpicker check site.nitpicker
    """
    try:
        store = CheckStore.open(file)
    except sqlite3.DatabaseError as exc:  # a read-only file, a full disk
        fail(f"{file}: cannot write the findings ({exc})")
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        summary = _run(store, silent=silent)
    except KeyboardInterrupt:
        store.close()
        from nitpicker.cli import interrupted

        interrupted("Interrupted: the archive's findings are left as they were")
    except sqlite3.DatabaseError as exc:  # a corrupt file, a full disk: the archive's fault
        store.close()
        fail(f"{file}: {exc}", verbose_detail=traceback.format_exc() if verbose else None)
    store.close()
    if not silent:
        _print_summary(file, summary)


def _run(store: CheckStore, *, silent: bool) -> CheckRunSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from nitpicker.query.checks import CHECKS

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if silent or not console.is_terminal:
        return store.run()
    with Progress(TextColumn("checks"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[current]} · {task.fields[found]} findings"),
                  console=console, transient=True) as progress:
        task = progress.add_task("checks", total=len(CHECKS), current="", found=0)
        found = 0

        def advance(done: object, count: int) -> None:
            nonlocal found
            found += count
            progress.update(task, advance=1, current=getattr(done, "id", ""), found=found)

        return store.run(on_check=advance)


def _print_summary(file: Path, summary: CheckRunSummary) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    parts = [f"[{_PRIORITY_STYLES[name]}]{summary.by_priority[name]} {name}[/]"
             for name in _PRIORITY_STYLES if summary.by_priority[name]]
    console.print(f"{summary.checks} checks: {summary.findings} findings"
                  + (f" ({', '.join(parts)})" if parts else "")
                  + f" in {summary.elapsed:.2f} s.")
    console.print(f"The issues: nitpicker query {escape(str(file))} issues --pretty")
