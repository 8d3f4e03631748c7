"""Reporter discovery, the source a reporter reads, and the all-or-nothing write.

A reporter of files (``--format``) is found by its format's name; the one that writes into an
online spreadsheet (``--sheet URL``) by the name :data:`SHEETS`, in the same group.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, cast

from nitpicker.errors import UserError

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

    from nitpicker.query.report_rows import Chunk, Row, Sheet, SheetSpec

__all__ = ["REPORT_GROUP", "SHEETS", "FilesReporter", "ReportError", "ReportSource", "Reporter",
           "SpreadsheetReporter", "available_formats", "check_output", "files_path",
           "load_reporter", "open_spreadsheet", "stopping_on_sigterm", "write_report"]

logger = logging.getLogger(__name__)

REPORT_GROUP: Final = "nitpicker.report"

SHEETS: Final = "sheets"
"""The entry point of the reporter that writes into an online spreadsheet (``report --sheet URL``)
rather than a file: not a format. Its object opens one (:func:`open_spreadsheet`)."""


class ReportError(UserError):
    """A report cannot be written (unknown format, output path taken, …): one line for a user."""


class Reporter(Protocol):
    """What a reporter is: a default output name and a writer into a path that is free."""

    def default_path(self, archive: Path) -> Path:
        """Where the report of ``archive`` goes when no ``-o`` is given."""

    def write(self, source: ReportSource, path: Path) -> None:
        """Write the report to ``path`` (which does not exist yet)."""


class SpreadsheetReporter(Protocol):
    """What the ``sheets`` reporter is: it writes the sheets as new tabs of the spreadsheet at
    :attr:`url`, and says how far it got (a write stopped half-way leaves tabs behind)."""

    @property
    def url(self) -> str: ...

    @property
    def sent_rows(self) -> int:
        """Rows sent so far."""

    @property
    def tabs_added(self) -> int:
        """Tabs added so far."""

    def check(self, source: ReportSource) -> None:
        """Before anything is written: the spreadsheet is reachable and has none of the tabs
        (:class:`ReportError` otherwise)."""

    def write(self, source: ReportSource) -> None:
        """Write the sheets (:class:`ReportError` when the spreadsheet refuses them)."""


class FilesReporter(Reporter, Protocol):
    """A reporter that may write a folder of files beside its report (the HTML report's
    tables too long to show whole, as CSV files it links to)."""

    def files_path(self, path: Path) -> Path:
        """The folder beside the report at ``path`` that its files go in."""

    def write_beside(self, source: ReportSource, path: Path, files: Path, files_href: str
                     ) -> None:
        """Write the report to ``path`` and, when it needs any, its files into the folder
        ``files`` (created by the reporter; neither exists yet); the report links to them
        as ``files_href/<name>`` (the folder's name once in place)."""


def files_path(reporter: Reporter, path: Path) -> Path | None:
    """The folder of files the reporter may write beside the report at ``path`` (``None``:
    it writes none)."""
    beside = getattr(reporter, "files_path", None)
    return beside(path) if callable(beside) else None


@dataclass
class ReportSource:
    """The archive's sheets as a reporter reads them; ``on_rows`` hears of every chunk written.

    ``limit`` caps the rows of every sheet (``--limit``; ``None``: all of them). ``listed``:
    the report is of the listed pages only (``--urls``: the sheets are their
    :meth:`~nitpicker.query.report_rows.Sheet.listed` ones; a reporter's own figures, the HTML
    charts, follow it).
    """

    conn: sqlite3.Connection
    sheets: list[Sheet]
    on_rows: Callable[[int], None] = field(default=lambda _n: None)
    chunk_rows: int = 2500
    limit: int | None = None
    listed: bool = False

    def specs(self) -> list[SheetSpec]:
        return [sheet.spec(self.conn) for sheet in self.sheets]

    def chunks(self, sheet: Sheet) -> Iterator[Chunk]:
        """The sheet's rows, chunk by chunk (values and marks); each chunk is counted once it
        has been handed on."""
        left = self.limit
        for chunk in sheet.chunks(self.conn, self.chunk_rows):
            if left is not None:
                chunk = chunk.head(left)
                left -= len(chunk)
            if rows := len(chunk):
                yield chunk  # a writer may empty it once it has the rows (the Sheets one does)
                self.on_rows(rows)
            if left == 0:
                return

    def rows(self, sheet: Sheet) -> Iterator[list[Row]]:
        """The same rows as lists of cells (:class:`~nitpicker.query.report_rows.Cell`)."""
        for chunk in self.chunks(sheet):
            yield chunk.cells()

    def count(self, sheet: Sheet) -> int:
        """The rows :meth:`rows` gives for ``sheet``."""
        total = sheet.count(self.conn)
        return total if self.limit is None else min(total, self.limit)

    def total_rows(self) -> int:
        return sum(self.count(sheet) for sheet in self.sheets)


def available_formats() -> list[str]:
    """The formats of every installed reporter of files, sorted."""
    return sorted(ep.name for ep in entry_points(group=REPORT_GROUP) if ep.name != SHEETS)


def load_reporter(fmt: str) -> Reporter:
    """The reporter registered for ``fmt``; an unknown format names the installed ones."""
    found = [ep for ep in entry_points(group=REPORT_GROUP) if ep.name == fmt != SHEETS]
    if not found:
        choices = ", ".join(available_formats()) or "none installed"
        raise ReportError(f"Unknown report format: {fmt!r} (choose from {choices})")
    factory = found[0].load()
    reporter: Reporter = factory()
    return reporter


def open_spreadsheet(url: str, credentials: Path,
                     on_wait: Callable[[float, int], None]) -> SpreadsheetReporter:
    """The reporter of ``report --sheet URL``: the :data:`SHEETS` entry point's object called
    with the spreadsheet's URL, the credentials file and ``on_wait(seconds, status)`` (told of
    each back-off). :class:`ReportError` when none is installed or it refuses them (a bad URL,
    credentials); ``ImportError`` when its libraries are missing."""
    found = [ep for ep in entry_points(group=REPORT_GROUP) if ep.name == SHEETS]
    if not found:
        raise ReportError(f"--sheet: no spreadsheet reporter is installed (an entry point "
                          f"{SHEETS!r} in the group {REPORT_GROUP!r})")
    opener = found[0].load()
    reporter: SpreadsheetReporter = opener(url, credentials, on_wait)
    return reporter


def _partial_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial-{os.getpid()}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def check_output(path: Path, reporter: Reporter | None = None) -> None:
    """Refuse an output path that exists (never overwritten) or whose directory does not;
    with ``reporter``, the folder of files it may write beside it too."""
    if path.exists() or path.is_symlink():
        raise ReportError(f"Output path exists, not overwritten: {path}")
    if not path.parent.is_dir():
        raise ReportError(f"Output directory not found: {path.parent}")
    files = files_path(reporter, path) if reporter is not None else None
    if files is not None and (files.exists() or files.is_symlink()):
        raise ReportError(f"Output path exists, not overwritten: {files} (the folder of the"
                          f" report's tables beside {path.name})")


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def stopping_on_sigterm() -> Iterator[None]:
    """SIGTERM (a service manager, ``kill``, a CI runner's timeout) raises ``KeyboardInterrupt``
    while the block runs, as Ctrl-C does: what the write does on Ctrl-C (remove the partial
    report, its scratch files) it does on SIGTERM. The previous handler is back on exit. Only
    in the main thread (signals are delivered there); elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def write_report(reporter: Reporter, source: ReportSource, path: Path) -> None:
    """Write the report into a hidden partial path beside ``path``, then move it into place
    (and the folder of files a :class:`FilesReporter` wrote beside it, first).

    An existing ``path`` (or folder) is never overwritten (``ReportError``). Whatever stops
    the write (an error, Ctrl-C, SIGTERM under :func:`stopping_on_sigterm`) removes the partial
    report and its files: nothing half-written is left behind.
    """
    check_output(path, reporter)
    files = files_path(reporter, path)
    partial = _partial_path(path)
    partial_files = _partial_path(files) if files is not None else None
    for stale in (partial, partial_files):
        if stale is not None:
            _remove(stale)
    moved: Path | None = None
    try:
        if files is None or partial_files is None:
            reporter.write(source, partial)
        else:
            beside = cast("FilesReporter", reporter)  # it has files_path
            beside.write_beside(source, partial, partial_files, files.name)
        for taken in (path, files):
            if taken is not None and (taken.exists() or taken.is_symlink()):
                raise ReportError(f"Output path appeared while writing, not overwritten: {taken}")
        if files is not None and partial_files is not None and partial_files.exists():
            partial_files.rename(files)
            moved = files
        partial.rename(path)
    except BaseException:
        for left in (partial, partial_files, moved):
            if left is not None:
                _remove(left)
        raise
    logger.debug("report written to %s", path)
