"""``nitpicker report FILE --format xlsx|csv|html [-o PATH]``: the audit report as a local file.

The nine sheets of SPEC §8.2 (:mod:`nitpicker.query.report`) written by the reporter of the
format (:mod:`nitpicker.report`, the bundled ones in ``reports/``). The archive is opened
read-only; an archive a crawl is still writing is refused. The output path is never
overwritten, and a report that fails half-way is removed.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.archive.lock import ArchiveLock
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
    from rich.progress import Progress, TaskID

    from nitpicker.report import Reporter

__all__ = ["app", "report"]

app = typer.Typer()


@app.command()
def report(
    file: Annotated[Path, typer.Argument(help="The .nitpicker archive to report on.",
                                         show_default=False)],
    format_: Annotated[str, typer.Option(
        "--format", "-f", help="Report format: xlsx (one workbook), csv (a folder of one file"
        " per sheet) or html (one self-contained file with charts).")] = "xlsx",
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Where to write the report; never overwritten. Default: beside"
        " the archive (site.xlsx, site.html, site-csv/).", show_default=False)] = None,
    sheet: Annotated[list[str] | None, typer.Option(
        "--only", help=f"Only this sheet (repeatable): {', '.join(SHEET_NAMES)}.",
        show_default=False)] = None,
    silent: Annotated[bool, typer.Option("--silent", help="No progress line.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Write the report of an archive: Page List, Links, Resources, Images, Violations,
    Discrepancies, Summary and the two relational tables.

    Example: nitpicker report site.nitpicker --format html -o report.html
    """
    try:
        reporter = load_reporter(format_)
        sheets = select_sheets(sheet)
    except (ReportError, ValueError) as exc:
        fail(str(exc))
    holder = ArchiveLock(file).live_holder()
    if holder is not None:
        fail(f"Archive is being written by a running crawl (PID {holder}): {file}; "
             "wait for it to finish")
    try:
        conn = open_archive(file)
    except ArchiveOpenError as exc:
        fail(str(exc))
    path = output if output is not None else reporter.default_path(file)
    try:
        source = ReportSource(conn, sheets)
        _write(reporter, source, path, silent)
    except ReportError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"Cannot write the report to {path}: {exc.strerror or exc}",
             verbose_detail=traceback.format_exc() if verbose else None)
    finally:
        conn.close()
    typer.echo(f"Report written: {path}", err=True)


def _write(writer: Reporter, source: ReportSource, path: Path, silent: bool) -> None:
    check_output(path)  # before the progress line: one line, nothing else
    if silent:
        write_report(writer, source, path)
        return
    progress, task = _progress(source.total_rows())
    started = time.monotonic()

    def advance(rows: int) -> None:
        elapsed = time.monotonic() - started
        done = progress.tasks[0].completed + rows
        progress.update(task, advance=rows, rate=done / elapsed if elapsed else 0.0)

    source.on_rows = advance
    with progress:
        write_report(writer, source, path)


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
        TextColumn("[bold]Report"), BarColumn(), MofNCompleteColumn(),
        TextColumn("rows · {task.fields[rate]:.0f} rows/s · left"), TimeRemainingColumn(),
        TimeElapsedColumn(), console=Console(stderr=True), transient=False,
    )
    return progress, progress.add_task("report", total=total, rate=0.0)
