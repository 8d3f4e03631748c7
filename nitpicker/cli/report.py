"""``nitpicker report FILE --format xlsx|csv|html [-o PATH]``: the audit report as a local file.

The Issues sheet (issue 26) and the nine sheets of SPEC §8.2 (:mod:`nitpicker.query.report_rows`)
written by the reporter of the format (:mod:`nitpicker.report`, the bundled ones in
``reports/``). The archive is opened read-only; an archive a crawl is still writing is refused. The output path is never
overwritten, and a report that fails half-way is removed.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.lock import ArchiveLock
from nitpicker.cli import interrupted
from nitpicker.cli.choice import choose_many, is_terminal
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail
from nitpicker.cli.url_file import missing_warning, read_url_file
from nitpicker.query import open_archive
from nitpicker.query.report_rows import SHEET_NAMES, list_pages, select_sheets
from nitpicker.report import (
    ReportError,
    ReportSource,
    check_output,
    load_reporter,
    open_spreadsheet,
    write_report,
)
from nitpicker.report.collector import collecting_less
from nitpicker.report.host import stopping_on_sigterm

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress, TaskID

    from nitpicker.query.report_rows import Sheet
    from nitpicker.report import Reporter, SpreadsheetReporter

__all__ = ["ReportFlags", "ReportPlan", "app", "plan_report", "report", "write_planned"]

app = typer.Typer()


@dataclass(frozen=True)
class ReportFlags:
    """Where the report goes and which sheets: shared by ``report`` and ``pipeline``
    (:mod:`~nitpicker.cli.flags`)."""

    format_: Annotated[str | None, typer.Option(
        "--format", "-f", help="Report format: xlsx (one workbook, the default), csv (a folder"
        " of one file per sheet) or html (an executive summary, the issues, charts and the"
        " tables' first rows; longer tables as CSV files beside it).",
        show_default=False)] = None
    sheet_url: Annotated[str | None, typer.Option(
        "--sheet", "-S", help="Write the report into this Google Sheets spreadsheet instead"
        " (one new tab per sheet).", show_default=False)] = None
    credentials: Annotated[Path, typer.Option(
        "--credentials", "-C", help="For --sheet: a service-account JSON key, or an OAuth client"
        " file (Desktop app; the first run asks consent in the browser, the token is cached in"
        " token.json beside it).")] = Path("credentials.json")
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Where to write the report; never overwritten. Default: beside"
        " the archive (site.xlsx, site.html, site-csv/).", show_default=False)] = None
    sheet: Annotated[list[str] | None, typer.Option(
        "--only", help=f"Only this sheet (repeatable): {', '.join(SHEET_NAMES)}.",
        show_default=False)] = None
    limit: Annotated[int | None, typer.Option(
        "--limit", "-l", min=1, help="At most this many rows a sheet.", show_default=False)
    ] = None
    dedupe_resources: Annotated[bool, typer.Option(
        "--dedupe-resources", help="Resources: one row per URL pattern (URLs differing only in"
        " query values), with Count and Query Pattern columns.")] = False

    @property
    def given(self) -> bool:
        """A report was asked for (``pipeline`` writes one only then)."""
        return self.format_ is not None or self.sheet_url is not None or self.output is not None


class _WaitLine:
    """Shows a Sheets back-off (``Waiting 4s (429)``) on the progress line, once there is one."""

    def __init__(self) -> None:
        self.progress: tuple[Progress, TaskID] | None = None

    def __call__(self, wait: float, code: int) -> None:
        if self.progress is not None:
            self.progress[0].update(self.progress[1], description=f"Waiting {wait:.0f}s ({code})")


@dataclass
class ReportPlan:
    """A report checked before its archive is read: the sheets, and either a local file's
    reporter and path or a spreadsheet's reporter."""

    sheets: list[Sheet]
    limit: int | None = None
    reporter: Reporter | None = None
    path: Path | None = None
    spreadsheet: SpreadsheetReporter | None = None
    waits: _WaitLine = field(default_factory=_WaitLine)
    urls: list[str] | None = None
    """``--urls``: the report of these URLs' rows only (``None``: every row)."""
    urls_file: Path | None = None

    @property
    def destination(self) -> str:
        return self.spreadsheet.url if self.spreadsheet is not None else str(self.path)


@app.command()
@with_bundles
def report(
    file: Annotated[Path, typer.Argument(help="The .nitpicker archive to report on.",
                                         show_default=False)],
    flags: ReportFlags,
    all_sheets: Annotated[bool, typer.Option(
        "--all", help="Every sheet, without asking (the default when not on a terminal; on a"
        " terminal, without --all or --only, you choose).")] = False,
    urls: Annotated[Path | None, typer.Option(
        "--urls", help="Report only on the URLs listed in this file (one a line; blank lines"
        " and # comments ignored); listed URLs the archive lacks are named in a warning.",
        show_default=False)] = None,
    silent: Annotated[bool, typer.Option("--silent", help="No progress line.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Write the report of an archive: Issues (the audit, first), Page List, Links, Resources,
    Images, Violations, Discrepancies, Summary and the two relational tables.

    Example: nitpicker report site.nitpicker --format html -o report.html
    """
    listed = None
    if urls is not None:
        try:
            listed = read_url_file(urls)
        except ValueError as exc:
            fail(str(exc))
    plan = plan_report(flags, file, all_sheets=all_sheets)
    plan.urls, plan.urls_file = listed, urls
    write_planned(plan, file, silent=silent, verbose=verbose)


def plan_report(flags: ReportFlags, archive: Path, *, all_sheets: bool = False,
                ask: bool = True) -> ReportPlan:
    """The report the flags ask for, checked without reading the archive (``archive`` names the
    default output path). Bad input is one ``Error:`` line and exit 1 (raised). Whether the
    output path is free is :func:`check_output`'s question, asked again when writing. Without
    ``--all`` (``all_sheets``, ``report``'s own: ``pipeline`` never asks) or ``--only``, the
    sheets are asked for on a terminal when ``ask``."""
    sheets = _choose(flags.sheet, all_sheets, flags.dedupe_resources, ask=ask)
    if flags.sheet_url is not None:
        if flags.format_ is not None or flags.output is not None:
            fail("--sheet writes to Google Sheets: leave out --format and --output")
        return _plan_sheets(flags.sheet_url, flags.credentials, sheets, flags.limit)
    reporter = load_reporter(flags.format_ or "xlsx")
    path = flags.output if flags.output is not None else reporter.default_path(archive)
    return ReportPlan(sheets, flags.limit, reporter=reporter, path=path)


def _choose(names: list[str] | None, all_: bool, dedupe_resources: bool, *,
            ask: bool) -> list[Sheet]:
    """The sheets (SPEC §2.3): ``--all``; else ``--only``; else asked on a terminal; else all."""
    if all_ and names:
        fail("--all and --only contradict each other: give one of them")
    if ask and not all_ and not names and is_terminal():
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


def _plan_sheets(url: str, credentials: Path, sheets: list[Sheet],
                 limit: int | None) -> ReportPlan:
    """``--sheet URL``: the report as new tabs of a Google spreadsheet, by the reporter the
    ``nitpicker.report`` group names ``sheets`` (:func:`~nitpicker.report.open_spreadsheet`)."""
    waits = _WaitLine()
    try:
        spreadsheet = open_spreadsheet(url, credentials, waits)
    except ImportError as exc:
        fail(f"--sheet needs gspread and google-auth-oauthlib: pip install nitpicker ({exc})")
    return ReportPlan(sheets, limit, spreadsheet=spreadsheet, waits=waits)


def write_planned(plan: ReportPlan, file: Path, *, silent: bool, verbose: bool,
                  announce: bool = True) -> None:
    """Write the planned report of the archive ``file``, with its progress line unless
    ``silent``; ends with ``Report written: <where>`` when ``announce``. A failure is one
    ``Error:`` line and exit 1 (raised), nothing half-written left. SIGTERM stops it as
    Ctrl-C does (:func:`stopping_on_sigterm`): the partial report removed, exit 130."""
    conn = _open(file)
    try:
        source = ReportSource(conn, plan.sheets, limit=plan.limit)
        if plan.urls is not None:
            _list(plan, source)
        with collecting_less(), stopping_on_sigterm():
            _write_source(plan, source, silent=silent, verbose=verbose)
    finally:
        conn.close()
    if announce:
        typer.echo(f"Report written: {plan.destination}", err=True)


def _list(plan: ReportPlan, source: ReportSource) -> None:
    """``--urls``: the sheets of the listed pages' rows; a warning naming the URLs the archive
    lacks, an error when it has none of them."""
    assert plan.urls is not None and plan.urls_file is not None  # --urls given
    missing = list_pages(source.conn, plan.urls)
    listed = len(dict.fromkeys(plan.urls))  # each URL once
    if len(missing) == listed:
        fail(f"None of the {listed} URLs of {plan.urls_file} is in the archive (the first:"
             f" {missing[0]}): check the file, and the archive it goes with")
    if missing:
        typer.echo(missing_warning(plan.urls_file, listed, missing), err=True)
    source.sheets = [sheet.listed() for sheet in source.sheets]
    source.listed = True


def _write_source(plan: ReportPlan, source: ReportSource, *, silent: bool, verbose: bool
                  ) -> None:
    if plan.spreadsheet is not None:
        _to_sheets(plan, source, silent)
        return
    assert plan.reporter is not None and plan.path is not None  # a local file's plan
    try:
        _write(plan.reporter, source, plan.path, silent)
    except OSError as exc:
        fail(f"Cannot write the report to {plan.path}: {exc.strerror or exc}",
             verbose_detail=traceback.format_exc() if verbose else None)


def _open(file: Path) -> sqlite3.Connection:
    holder = ArchiveLock(file).live_holder_info()
    if holder is not None:
        fail(f"Archive is being written by {holder.describe()}: {file}; wait for it to finish")
    return open_archive(file)


def _to_sheets(plan: ReportPlan, source: ReportSource, silent: bool) -> None:
    reporter = plan.spreadsheet
    assert reporter is not None  # a spreadsheet's plan
    try:
        reporter.check(source)  # before the progress line: a refusal is one line
        if silent:
            reporter.write(source)
        else:
            plan.waits.progress = _progress(0)
            _run_with_progress(source, plan.waits.progress, lambda: reporter.write(source))
    except KeyboardInterrupt:
        if not reporter.sent_rows and not reporter.tabs_added:
            raise  # nothing was written
        interrupted(f"Interrupted: {reporter.sent_rows} rows were sent; the spreadsheet's new"
                    " tabs are incomplete: remove them before reporting into it again")
    except ReportError as exc:
        sent = f" ({reporter.sent_rows} rows sent before it stopped)" if reporter.sent_rows \
            else ""
        fail(f"{exc}{sent}")


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
    check_output(path, writer)  # before the progress line: one line, nothing else
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
