"""``nitpicker report FILE --format xlsx|csv|html [-o PATH]``: the audit report as a local file.

The nine sheets of SPEC §8.2 (:mod:`nitpicker.query.report`) written by the reporter of the
format (:mod:`nitpicker.report`, the bundled ones in ``reports/``). The archive is opened
read-only; an archive a crawl is still writing is refused. The output path is never
overwritten, and a report that fails half-way is removed.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.lock import ArchiveLock
from nitpicker.cli.choice import choose_many, is_terminal
from nitpicker.cli.output import fail
from nitpicker.query import ArchiveOpenError, open_archive
from nitpicker.query.report import SHEET_NAMES, select_sheets
from nitpicker.report import (
    ReportError,
    ReportSource,
    check_output,
    load_reporter,
    write_report,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress, TaskID

    from nitpicker.query.report import Sheet
    from nitpicker.report import Reporter

__all__ = ["app", "report"]

app = typer.Typer()


@app.command()
def report(
    file: Annotated[Path, typer.Argument(help="The .nitpicker archive to report on.",
                                         show_default=False)],
    format_: Annotated[str | None, typer.Option(
        "--format", "-f", help="Report format: xlsx (one workbook, the default), csv (a folder"
        " of one file per sheet) or html (one self-contained file with charts).",
        show_default=False)] = None,
    sheet_url: Annotated[str | None, typer.Option(
        "--sheet", "-S", help="Write the report into this Google Sheets spreadsheet instead"
        " (one new tab per sheet).", show_default=False)] = None,
    credentials: Annotated[Path, typer.Option(
        "--credentials", "-C", help="For --sheet: a service-account JSON key, or an OAuth client"
        " file (Desktop app; the first run asks consent in the browser, the token is cached in"
        " token.json beside it).")] = Path("credentials.json"),
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Where to write the report; never overwritten. Default: beside"
        " the archive (site.xlsx, site.html, site-csv/).", show_default=False)] = None,
    sheet: Annotated[list[str] | None, typer.Option(
        "--only", help=f"Only this sheet (repeatable): {', '.join(SHEET_NAMES)}.",
        show_default=False)] = None,
    all_: Annotated[bool, typer.Option(
        "--all", help="Every sheet, without asking (the default when not on a terminal; on a"
        " terminal, without --all or --only, you choose).")] = False,
    limit: Annotated[int | None, typer.Option(
        "--limit", "-l", min=1, help="At most this many rows a sheet.", show_default=False)
    ] = None,
    dedupe_resources: Annotated[bool, typer.Option(
        "--dedupe-resources", help="Resources: one row per URL pattern (URLs differing only in"
        " query values), with Count and Query Pattern columns.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress line.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Write the report of an archive: Page List, Links, Resources, Images, Violations,
    Discrepancies, Summary and the two relational tables.

    Example: nitpicker report site.nitpicker --format html -o report.html
    """
    if sheet_url is not None:
        if format_ is not None or output is not None:
            fail("--sheet writes to Google Sheets: leave out --format and --output")
        sheets = _choose(sheet, all_, dedupe_resources)
        _to_sheets(file, sheet_url, credentials, sheets, limit, silent)
        return
    format_ = format_ or "xlsx"
    try:
        reporter = load_reporter(format_)
    except ReportError as exc:
        fail(str(exc))
    sheets = _choose(sheet, all_, dedupe_resources)
    conn = _open(file)
    path = output if output is not None else reporter.default_path(file)
    try:
        source = ReportSource(conn, sheets, limit=limit)
        _write(reporter, source, path, silent)
    except ReportError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"Cannot write the report to {path}: {exc.strerror or exc}",
             verbose_detail=traceback.format_exc() if verbose else None)
    finally:
        conn.close()
    typer.echo(f"Report written: {path}", err=True)


def _choose(names: list[str] | None, all_: bool, dedupe_resources: bool) -> list[Sheet]:
    """The sheets (SPEC §2.3): ``--all``; else ``--only``; else asked on a terminal; else all."""
    if all_ and names:
        fail("--all and --only contradict each other: give one of them")
    if not all_ and not names and is_terminal():
        try:
            names = choose_many("What do you report?", SHEET_NAMES,
                                "Sheets (e.g. 1 3, or names apart by commas; Enter for all)")
        except typer.Abort:  # Ctrl-C or end of input at the question
            typer.echo("", err=True)
            raise typer.Exit(0) from None
    try:
        return select_sheets(names, dedupe_resources=dedupe_resources)
    except ValueError as exc:
        fail(str(exc))


def _open(file: Path) -> sqlite3.Connection:
    holder = ArchiveLock(file).live_holder()
    if holder is not None:
        fail(f"Archive is being written by a running crawl (PID {holder}): {file}; "
             "wait for it to finish")
    try:
        return open_archive(file)
    except ArchiveOpenError as exc:
        fail(str(exc))


def _to_sheets(file: Path, url: str, credentials: Path, sheets: list[Sheet],
               limit: int | None, silent: bool) -> None:
    """``--sheet URL``: the report as new tabs of a Google spreadsheet."""
    try:
        from nitpicker_reports.google_sheets import (
            SheetsError,
            SheetsReporter,
            client_from_credentials,
            in_flight_setting,
        )
    except ImportError as exc:
        fail(f"--sheet needs gspread and google-auth-oauthlib: pip install nitpicker ({exc})")
    try:
        in_flight = in_flight_setting()
    except SheetsError as exc:
        fail(str(exc))
    conn = _open(file)
    progress = None if silent else _progress(0)

    def waiting(wait: float, code: int) -> None:
        if progress is not None:
            progress[0].update(progress[1], description=f"Waiting {wait:.0f}s ({code})")

    reporter = None
    try:
        reporter = SheetsReporter(client_from_credentials(credentials, waiting), url, in_flight)
        source = ReportSource(conn, sheets, limit=limit)
        reporter.check(source)  # before the progress line: a refusal is one line
        if progress is None:
            reporter.write(source)
        else:
            sheets_reporter = reporter
            _run_with_progress(source, progress, lambda: sheets_reporter.write(source))
    except SheetsError as exc:
        sent = f" ({reporter.sent_rows} rows sent before it stopped)" if reporter and \
            reporter.sent_rows else ""
        fail(f"{exc}{sent}")
    finally:
        conn.close()
    typer.echo(f"Report written: {url}", err=True)


def _run_with_progress(source: ReportSource, progress: tuple[Progress, TaskID],
                       work: Callable[[], None]) -> None:
    bar, task = progress
    bar.update(task, total=source.total_rows())
    started = time.monotonic()

    def advance(rows: int) -> None:
        elapsed = time.monotonic() - started
        done = bar.tasks[0].completed + rows
        bar.update(task, advance=rows, rate=done / elapsed if elapsed else 0.0,
                   description="Report")

    source.on_rows = advance
    with bar:
        work()


def _write(writer: Reporter, source: ReportSource, path: Path, silent: bool) -> None:
    check_output(path)  # before the progress line: one line, nothing else
    if silent:
        write_report(writer, source, path)
        return
    _run_with_progress(source, _progress(0), lambda: write_report(writer, source, path))


def _progress(total: int) -> tuple[Progress, TaskID]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("rows · {task.fields[rate]:.0f} rows/s · left"), TimeRemainingColumn(),
        TimeElapsedColumn(), console=Console(stderr=True), transient=False,
    )
    return progress, progress.add_task("Report", total=total, rate=0.0)
