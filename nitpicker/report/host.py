"""Reporter discovery, the source a reporter reads, and the all-or-nothing write."""

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
from typing import TYPE_CHECKING, Final, Protocol

from nitpicker.errors import UserError

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

    from nitpicker.query.report_rows import Chunk, Row, Sheet, SheetSpec

__all__ = ["REPORT_GROUP", "ReportError", "ReportSource", "Reporter", "available_formats",
           "check_output", "load_reporter", "stopping_on_sigterm", "write_report"]

logger = logging.getLogger(__name__)

REPORT_GROUP: Final = "nitpicker.report"


class ReportError(UserError):
    """A report cannot be written (unknown format, output path taken, …): one line for a user."""


class Reporter(Protocol):
    """What a reporter is: a default output name and a writer into a path that is free."""

    def default_path(self, archive: Path) -> Path:
        """Where the report of ``archive`` goes when no ``-o`` is given."""

    def write(self, source: ReportSource, path: Path) -> None:
        """Write the report to ``path`` (which does not exist yet)."""


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
    """The formats of every installed reporter, sorted."""
    return sorted(ep.name for ep in entry_points(group=REPORT_GROUP))


def load_reporter(fmt: str) -> Reporter:
    """The reporter registered for ``fmt``; an unknown format names the installed ones."""
    found = [ep for ep in entry_points(group=REPORT_GROUP) if ep.name == fmt]
    if not found:
        choices = ", ".join(available_formats()) or "none installed"
        raise ReportError(f"Unknown report format: {fmt!r} (choose from {choices})")
    factory = found[0].load()
    reporter: Reporter = factory()
    return reporter


def _partial_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial-{os.getpid()}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def check_output(path: Path) -> None:
    """Refuse an output path that exists (never overwritten) or whose directory does not."""
    if path.exists() or path.is_symlink():
        raise ReportError(f"Output path exists, not overwritten: {path}")
    if not path.parent.is_dir():
        raise ReportError(f"Output directory not found: {path.parent}")


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
    """Write the report into a hidden partial path beside ``path``, then move it into place.

    An existing ``path`` is never overwritten (``ReportError``). Whatever stops the write (an
    error, Ctrl-C, SIGTERM under :func:`stopping_on_sigterm`) removes the partial report:
    nothing half-written is left behind.
    """
    check_output(path)
    partial = _partial_path(path)
    _remove(partial)
    try:
        reporter.write(source, partial)
        if path.exists():
            raise ReportError(f"Output path appeared while writing, not overwritten: {path}")
        partial.rename(path)
    except BaseException:
        _remove(partial)
        raise
    logger.debug("report written to %s", path)
