"""The CI gate of ``--fail-on``, as ``crawl``, ``pipeline``, ``check`` and ``diff`` run it.

The gate names and how they count are :mod:`nitpicker.ci.gates` (absolute gates such as
``broken-links``, ``5xx``, ``issues:high`` or ``check:ID`` over one archive's findings;
``new-*`` gates over a comparison with a baseline archive; ``NAME>N`` thresholds). The
accepted findings are :mod:`nitpicker.ci.suppressions`. ``crawl --fail-on …`` and
``pipeline`` call :func:`run_gate` once the archive is closed; ``check`` once the checks ran;
``diff`` counts the comparison's items as its report reads them (:class:`GateCount`), then
calls :func:`gate_findings` for the absolute gates::

    gates = parse_fail_on("broken-links,new-violations:error")   # ValueError: bad name
    code = run_gate(Path("last.nitpicker"), Path("today.nitpicker"), gates)  # 0 or GATE_EXIT

:func:`run_gate` reads only what its gates name, prints one ``Gate tripped: …`` line per
tripped gate to stderr (and what the suppressions accepted) and returns :data:`GATE_EXIT`
when any tripped. It raises :class:`~nitpicker.query.ArchiveOpenError` /
:class:`~nitpicker.query.DiffInputError` for archives that cannot be read or compared, and
:class:`UncheckedArchiveError` for one the site checks never ran on (the caller prints the
one line).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from nitpicker.ci.gates import GATE_EXIT, Gate, GateCount, parse_fail_on
from nitpicker.ci.source import UncheckedArchiveError, unchecked
from nitpicker.cli.diff_format import format_item
from nitpicker.query.connection import open_archive
from nitpicker.query.diff import compare_archives
from nitpicker.query.findings import findings_checked, iter_findings

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable

    from nitpicker.ci.suppressions import Suppressions
    from nitpicker.query.diff import UrlMap

__all__ = ["GATE_EXIT", "Gate", "GateCount", "UncheckedArchiveError", "check_gateable",
           "combined_exit", "gate_findings", "parse_fail_on", "print_gate", "run_gate"]


def check_gateable(archive: str | os.PathLike[str]) -> None:
    """:class:`UncheckedArchiveError` unless the archive has findings to gate on (checked
    before a command writes anything)."""
    conn = open_archive(Path(archive))
    try:
        if not findings_checked(conn):
            raise unchecked(archive)
    finally:
        conn.close()


def gate_findings(archive: str | os.PathLike[str], count: GateCount) -> None:
    """Feed the archive's findings to the absolute gates of ``count`` (none: nothing read)."""
    if not count.absolute:
        return
    conn = open_archive(Path(archive))
    try:
        if not findings_checked(conn):
            raise unchecked(archive)
        for finding in iter_findings(conn):
            count.see_finding(finding)
    finally:
        conn.close()


def print_gate(count: GateCount, *, err: IO[str] | None = None, silent: bool = False) -> int:
    """Print the tripped gates (and, unless ``silent``, what the suppressions accepted; an
    expired one always): :data:`GATE_EXIT` when one tripped, else 0."""
    out = err or sys.stderr
    for line in count.note_lines():
        if not silent or line.startswith("Expired: "):
            print(line, file=out)
    lines = count.tripped_lines()
    for line in lines:
        print(line, file=out)
    return GATE_EXIT if lines else 0


def run_gate(old: str | os.PathLike[str] | None, new: str | os.PathLike[str],
             gates: Iterable[Gate], *, url_map: UrlMap | None = None,
             suppressions: Suppressions | None = None, err: IO[str] | None = None,
             silent: bool = False) -> int:
    """The gates on ``new``: its findings for the absolute ones, its comparison with the
    baseline ``old`` (needed only by ``new-*`` gates) for the others. Prints what tripped (to
    ``err``, default stderr) and returns :data:`GATE_EXIT` or 0."""
    count = GateCount(list(gates), suppressions)
    if count.categories:
        if old is None:
            raise ValueError("the new-* gates need a baseline archive")
        with compare_archives(old, new, url_map=url_map) as diff:
            for category in count.categories:
                for item in diff.items(category):
                    count.see_item(category, item, format_item)
    gate_findings(new, count)
    return print_gate(count, err=err, silent=silent)


def combined_exit(run_code: int, gate_code: int) -> int:
    """The exit code of a command that ran (``run_code``) and then gated: a failure of its
    own (1) wins, then a tripped gate (:data:`GATE_EXIT`), then ``run_code`` (2: only
    out-of-scope URLs failed)."""
    if run_code == 1:
        return run_code
    return gate_code or run_code
