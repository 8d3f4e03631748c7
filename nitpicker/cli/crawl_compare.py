"""The comparisons ``nitpicker crawl`` makes: the original's ``--diff A B`` (two URL lists),
and ``--baseline OLD --fail-on …`` (the CI gate of :mod:`nitpicker.cli.gate`, run on the
archive once the crawl has ended)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from nitpicker.archive.lock import ArchiveLock
from nitpicker.cli.gate import GATE_EXIT, parse_fail_on, run_gate
from nitpicker.cli.output import fail, replaced_text_file
from nitpicker.query import ArchiveOpenError, DiffInputError, open_archive
from nitpicker.query.url_list import html_page_urls

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.cli.gate import Gate

__all__ = ["URL_LIST_NAMES", "baseline_gates", "check_baseline", "gate_after_crawl",
           "url_lists", "write_url_lists"]

URL_LIST_NAMES = ("a.txt", "b.txt")


def url_lists(paths: list[str]) -> NoReturn:
    """``--diff A B`` (SPEC §3.15.5): a.txt and b.txt, a pointer to ``nitpicker diff``, exit.
    (The flags it is not used with are refused by the modes table.)"""
    if len(paths) != 2:
        fail("--diff takes exactly two file paths to compare")
    first, second = Path(paths[0]), Path(paths[1])
    try:
        counts = write_url_lists(first, second, Path.cwd())
    except ArchiveOpenError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"Cannot write {exc.filename}: {exc.strerror}")
    print(f"Wrote a.txt ({counts[0]} URLs of {first}) and b.txt ({counts[1]} URLs of "
          f"{second}). For what changed between the two crawls (pages, links, metadata, "
          f"findings): nitpicker diff {first} {second}")
    raise typer.Exit(0)


def write_url_lists(first: Path, second: Path, directory: Path) -> list[int]:
    """``a.txt`` and ``b.txt`` in ``directory``: the HTML page URLs of each archive, one a
    line (the original's newline-joined list). Both archives are checked before either file
    is written; each file is replaced only once complete. The URL count of each."""
    conns = [open_archive(first)]
    try:
        conns.append(open_archive(second))
        counts = []
        for conn, name in zip(conns, URL_LIST_NAMES, strict=True):
            counts.append(_write_list(conn, directory / name))
        return counts
    finally:
        for conn in conns:
            conn.close()


def _write_list(conn: sqlite3.Connection, path: Path) -> int:
    count = 0
    with replaced_text_file(path) as handle:
        for url in html_page_urls(conn):
            handle.write(("\n" if count else "") + url)
            count += 1
    return count


def baseline_gates(baseline: Path | None, fail_on: str | None) -> list[Gate]:
    """The gates of ``--baseline OLD --fail-on …`` (none without them); ``ValueError`` for a
    bad gate or one option without the other, :class:`ArchiveOpenError` for a baseline that
    is not an archive this version reads, :class:`DiffInputError` for one a crawl holds."""
    if baseline is None and fail_on is None:
        return []
    if baseline is None:
        raise ValueError("--fail-on needs --baseline OLD: the archive to compare this crawl with")
    gates = parse_fail_on(fail_on)
    if not gates:
        raise ValueError("--baseline needs --fail-on: the categories that fail the crawl "
                         "(for the whole comparison, run nitpicker diff)")
    open_archive(baseline).close()
    holder = ArchiveLock(baseline).live_holder_info()
    if holder is not None:
        raise DiffInputError(f"{baseline} is being written by {holder.describe()}")
    return gates


def check_baseline(baseline: Path, archive: Path) -> None:
    """``ValueError`` when the baseline is the archive the crawl writes."""
    if baseline.resolve() == archive.resolve():
        raise ValueError(f"--baseline is the archive this crawl writes: {baseline}")


def gate_after_crawl(baseline: Path, archive: Path, gates: list[Gate], *,
                     silent: bool) -> int:
    """The gate on the ended crawl: :data:`GATE_EXIT` when one tripped, else 0. A comparison
    that cannot be made (the baseline changed meanwhile) is one line and exit 1."""
    try:
        code = run_gate(baseline, archive, gates)
    except (ArchiveOpenError, DiffInputError) as exc:
        print(f"Error: cannot compare with --baseline: {exc}", file=sys.stderr)
        return GATE_EXIT
    if not code and not silent:
        names = ", ".join(gate.name for gate in gates)
        print(f"Baseline {baseline}: no gate tripped ({names})", file=sys.stderr)
    return code
