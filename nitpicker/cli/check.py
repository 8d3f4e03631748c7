"""``nitpicker check FILE``: run the built-in site checks over an archive and store what they
find (the same checks every crawl runs when it ends).

The checks are :mod:`nitpicker.query.checks`; running and storing them is
:mod:`nitpicker.archive.check_store` (the archive lock held, one transaction: the archive's
check findings are replaced whole, or left as they were).
"""

from __future__ import annotations

import os
import sqlite3
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.check_store import CheckStore
from nitpicker.ci.source import UncheckedArchiveError
from nitpicker.cli.export_output import load_suppressions
from nitpicker.cli.gate import GateCount, gate_findings, parse_fail_on, print_gate
from nitpicker.cli.output import fail
from nitpicker.policy.near_duplicate import NEAR_DUPLICATE_THRESHOLD, check_threshold
from nitpicker.query.connection import ArchiveOpenError

if TYPE_CHECKING:
    from nitpicker.archive.check_store import CheckRunSummary
    from nitpicker.ci.suppressions import Suppressions
    from nitpicker.cli.gate import Gate

__all__ = ["app", "check"]

app = typer.Typer()

_PRIORITY_STYLES = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan",
                    "info": "dim"}



@app.command()
def check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    verbose: Annotated[bool, typer.Option("--verbose", help="Show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress display or summary.")] = False,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="Once the checks ran, exit 3 when one of these gates (comma-separated) trips: broken-links, 4xx, 5xx, issues:PRIORITY, violations:SEVERITY, check:ID; NAME>N trips over N.", show_default=False)] = None,
    suppressions: Annotated[Path | None, typer.Option("--suppressions", help="The accepted findings the gates do not count (default: .nitpicker-baseline.json when there is one).", show_default=False)] = None,
    near_duplicate_threshold: Annotated[float | None, typer.Option("--near-duplicate-threshold", help="content/near-duplicate: the estimated similarity (above 0, at most 1) from which two pages' main contents are near duplicates (default: NITPICKER_NEAR_DUPLICATE_THRESHOLD from the environment, else 0.9).", show_default=False)] = None,
) -> None:
    """Run the built-in site checks over an archive and store their findings in it.

    Every crawl runs them when it ends; run them again on an archive of an older version, or
    after a new nitpicker brings new checks. The findings replace the archive's previous
    ones. Read them with: nitpicker query FILE issues. With --fail-on, exit 3 when a gate
    trips (a CI job's gate on an archive it did not crawl).

    Example: nitpicker check site.nitpicker --fail-on broken-links,issues:critical
    """
    gate = _gate(fail_on, suppressions)
    threshold = _threshold(near_duplicate_threshold)
    try:
        store = CheckStore.open(file)
    except sqlite3.DatabaseError as exc:  # a read-only file, a full disk
        fail(f"{file}: cannot write the findings ({exc})")
    from nitpicker.cli import sigterm_stops_like_ctrl_c

    sigterm_stops_like_ctrl_c()
    try:
        summary = _run(store, silent=silent, threshold=threshold)
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
    if gate is not None:
        count = GateCount(*gate)
        try:
            gate_findings(file, count)
        except (ArchiveOpenError, UncheckedArchiveError) as exc:
            fail(str(exc))
        raise typer.Exit(print_gate(count, silent=silent))


def _gate(fail_on: str | None, suppressions: Path | None
          ) -> tuple[list[Gate], Suppressions | None] | None:
    """The gates of ``--fail-on`` and the accepted findings, checked before the checks run."""
    if fail_on is None:
        if suppressions is not None:
            fail("--suppressions needs --fail-on: the gates the accepted findings are kept "
                 "out of")
        return None
    try:
        gates = parse_fail_on(fail_on)
    except ValueError as exc:
        fail(str(exc))
    needing = [gate.name for gate in gates if gate.needs_baseline]
    if needing:
        fail(f"--fail-on {needing[0]} compares two archives: nitpicker diff OLD FILE "
             f"--fail-on {needing[0]}")
    return gates, load_suppressions(suppressions)


def _threshold(option: float | None) -> float:
    """The near-duplicate threshold: the option's, else the environment's setting's."""
    name, value = "--near-duplicate-threshold", option
    if option is None:
        name = "NITPICKER_NEAR_DUPLICATE_THRESHOLD"
        raw = os.environ.get(name)
        if raw is None:
            return NEAR_DUPLICATE_THRESHOLD
        try:
            value = float(raw)
        except ValueError:
            fail(f"{name} must be a number, got {raw!r}")
    try:
        return check_threshold(value, name)
    except ValueError as exc:
        fail(str(exc))


def _run(store: CheckStore, *, silent: bool, threshold: float) -> CheckRunSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from nitpicker.query.checks import CHECKS

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if silent or not console.is_terminal:
        return store.run(near_duplicate_threshold=threshold)
    with Progress(TextColumn("checks"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[current]} · {task.fields[found]} findings"),
                  console=console, transient=True) as progress:
        task = progress.add_task("checks", total=len(CHECKS), current="", found=0)
        found = 0

        def advance(done: object, count: int) -> None:
            nonlocal found
            found += count
            progress.update(task, advance=1, current=getattr(done, "id", ""), found=found)

        return store.run(on_check=advance, near_duplicate_threshold=threshold)


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
