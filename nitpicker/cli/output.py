"""What the CLI prints: one-line errors, the crawl summary, the notes of ``concat`` and
``split``; the archive path ``-o`` names; text files replaced whole."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from typing import IO, TYPE_CHECKING, NoReturn

import typer

from nitpicker.query import ArchiveOpenError, latest_run, list_outages, open_archive, summary

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from nitpicker.cli.runner import CrawlResult
    from nitpicker.query import Outage, Paged

__all__ = ["archive_output", "fail", "outside_note", "print_summary", "replaced_text_file"]


def fail(message: str, *, verbose_detail: str | None = None, code: int = 1) -> NoReturn:
    """Print ``Error: <message>`` (and the traceback with ``--verbose``) and exit."""
    if verbose_detail:
        print(verbose_detail, file=sys.stderr)
    print(f"Error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def _file_mode(path: Path) -> int:
    """The mode ``open(path, "w")`` leaves ``path`` with: an existing file's own, or 0o666
    less the umask."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0o022)  # reading the umask sets it: put it straight back
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def replaced_text_file(path: Path) -> Iterator[IO[str]]:
    """A text file written under a hidden temporary name beside ``path`` and moved over it
    once complete: whatever stops the writing leaves ``path`` as it was. The file gets the
    mode a plain ``open(path, "w")`` would (``tempfile`` makes its files 0600): a new one
    0o666 less the umask, a replaced one its own. A path that is there and is not a regular
    file (``/dev/null``, a named pipe, a terminal) is written in place: replacing it would put
    a plain file where the device or pipe was."""
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as stream:
            yield stream
        return
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (renamed or removed below)
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False)
    try:
        with handle:
            yield handle
            os.fchmod(handle.fileno(), _file_mode(path))
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        raise


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
    if run and run["auto_retried"]:
        console.print(f"  retry pass: {run['auto_retried']} URL(s) that failed for a passing "
                      f"reason fetched again, {run['auto_recovered'] or 0} recovered")
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


_SHOWN_OUTSIDE = 3
"""URLs a note names before "and N more"."""


def archive_output(output: Path) -> Path:
    """``-o`` with ``.nitpicker`` appended when it lacks it (as ``crawl`` and ``merge`` do);
    an existing directory is refused (the archive's own name is asked for)."""
    if output.is_dir():
        fail(f"-o {output} is a directory: give the new archive's file name "
             f"(-o {output / 'site.nitpicker'})")
    return output if output.suffix == ".nitpicker" else output.with_name(output.name + ".nitpicker")


def outside_note(urls: list[str], output: Path, root: str) -> str:
    """The ``Note:`` on URLs under the new roots that no archive fetched in full."""
    shown = ", ".join(urls[:_SHOWN_OUTSIDE])
    more = len(urls) - _SHOWN_OUTSIDE
    return (f"Note: {len(urls)} URL(s) under the roots were recorded external (metadata only): "
            f"{shown}" + (f" and {more} more" if more > 0 else "")
            + f"; fetch them in full with: nitpicker crawl --append {output} {root}")


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
