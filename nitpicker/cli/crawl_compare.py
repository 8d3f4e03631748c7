"""The comparisons ``nitpicker crawl`` makes: the original's ``--diff A B`` (two URL lists),
and ``--fail-on …`` (the CI gate of :mod:`nitpicker.cli.gate`, with ``--baseline OLD`` for
the ``new-*`` gates, run on the archive once the crawl has ended; ``pipeline`` runs it once
the analysis has)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from nitpicker.archive.lock import ArchiveLock
from nitpicker.ci.suppressions import SuppressionsError, find_suppressions
from nitpicker.cli.gate import (
    UncheckedArchiveError,
    combined_exit,
    parse_fail_on,
    run_gate,
)
from nitpicker.cli.output import fail, replaced_text_file
from nitpicker.query import ArchiveOpenError, DiffInputError, open_archive
from nitpicker.query.url_list import html_page_urls

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.ci.suppressions import Suppressions
    from nitpicker.cli.gate import Gate

__all__ = ["URL_LIST_NAMES", "CrawlGate", "baseline_gates", "check_baseline",
           "gate_after_crawl", "url_lists", "write_url_lists"]

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


class CrawlGate:
    """The gate a crawl or a pipeline runs once it has ended: its gates, the baseline the
    ``new-*`` ones need, and the accepted findings."""

    def __init__(self, gates: list[Gate], baseline: Path | None,
                 suppressions: Suppressions | None) -> None:
        self.gates = gates
        self.baseline = baseline
        self.suppressions = suppressions

    def __bool__(self) -> bool:
        return bool(self.gates)


def baseline_gates(baseline: Path | None, fail_on: str | None,
                   suppressions: Path | None = None) -> CrawlGate:
    """The gate of ``--fail-on …`` (``--baseline OLD`` for the ``new-*`` gates,
    ``--suppressions FILE`` or ``.nitpicker-baseline.json``); none without ``--fail-on``.
    ``ValueError`` for a bad gate, a ``new-*`` gate without ``--baseline``, ``--baseline``
    without ``--fail-on`` or a bad suppressions file; :class:`ArchiveOpenError` for a baseline
    that is not an archive this version reads, :class:`DiffInputError` for one a crawl holds."""
    if fail_on is None:
        if baseline is not None:
            raise ValueError("--baseline needs --fail-on: the categories that fail the crawl "
                             "(for the whole comparison, run nitpicker diff)")
        if suppressions is not None:
            raise ValueError("--suppressions needs --fail-on: the gates the accepted findings "
                             "are kept out of")
        return CrawlGate([], None, None)
    gates = parse_fail_on(fail_on)
    needing = [gate.name for gate in gates if gate.needs_baseline]
    if needing and baseline is None:
        raise ValueError(f"--fail-on {needing[0]} needs --baseline OLD: the archive to compare "
                         "this crawl with")
    if baseline is not None:
        open_archive(baseline).close()
        holder = ArchiveLock(baseline).live_holder_info()
        if holder is not None:
            raise DiffInputError(f"{baseline} is being written by {holder.describe()}")
    try:
        accepted = find_suppressions(suppressions)
    except SuppressionsError as exc:
        raise ValueError(str(exc)) from exc
    return CrawlGate(gates, baseline, accepted)


def check_baseline(baseline: Path, archive: Path) -> None:
    """``ValueError`` when the baseline is the archive the crawl writes."""
    if baseline.resolve() == archive.resolve():
        raise ValueError(f"--baseline is the archive this crawl writes: {baseline}")


def gate_after_crawl(gate: CrawlGate, archive: Path, run_code: int, *, silent: bool) -> int:
    """The gate on the ended crawl, and the command's exit code
    (:func:`~nitpicker.cli.gate.combined_exit`). A gate that cannot be run (the baseline
    changed meanwhile, the checks never ran) is one ``Error:`` line and exit 1."""
    if not gate:
        return run_code
    try:
        code = run_gate(gate.baseline, archive, gate.gates, suppressions=gate.suppressions,
                        silent=silent)
    except (ArchiveOpenError, DiffInputError) as exc:
        what = "compare with --baseline" if gate.baseline is not None else "gate"
        print(f"Error: cannot {what}: {exc}", file=sys.stderr)
        return 1
    except UncheckedArchiveError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    if not code and not silent:
        names = ", ".join(g.name for g in gate.gates)
        where = f"Baseline {gate.baseline}: n" if gate.baseline is not None else "N"
        print(f"{where}o gate tripped ({names})", file=sys.stderr)
    return combined_exit(run_code, code)

