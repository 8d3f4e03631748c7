"""The CI gate: ``--fail-on`` categories of a comparison that must stay empty.

One gate is a name of :data:`~nitpicker.query.diff.GATES` (``new-broken-links``, ``new-4xx``,
``new-5xx``, ``removed-pages``, ``new-violations``); ``new-violations:SEVERITY`` counts only
the new findings of that severity or worse (:data:`~nitpicker.query.diff.SEVERITY_RANKS`:
``critical`` > ``error`` = ``serious`` > ``warning`` = ``moderate`` > ``info`` = ``minor`` >
``needs-review``).

``nitpicker diff`` feeds the items it reads for its report to a :class:`GateCheck`;
``nitpicker crawl --baseline OLD --fail-on …`` and ``nitpicker pipeline`` call
:func:`run_gate` once the new archive is closed::

    gates = parse_fail_on("new-broken-links,new-violations:error")   # ValueError: bad name
    code = run_gate(Path("last.nitpicker"), Path("today.nitpicker"), gates)  # 0 or GATE_EXIT

:func:`run_gate` reads only the categories its gates name, prints one ``Gate tripped: …`` line
per tripped gate to stderr and returns :data:`GATE_EXIT` when any tripped. It raises
:class:`~nitpicker.query.ArchiveOpenError` / :class:`~nitpicker.query.DiffInputError` for
archives that cannot be compared (the caller prints the one line).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

from nitpicker.cli.diff_format import format_item
from nitpicker.query.diff import GATES, SEVERITY_RANKS, compare_archives, severity_rank

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Sequence

    from nitpicker.query.diff import UrlMap

__all__ = ["GATE_EXIT", "Gate", "GateCheck", "parse_fail_on", "run_gate"]

GATE_EXIT: Final = 1
"""The exit code when a ``--fail-on`` gate trips."""

SAMPLE: Final = 3
"""Items named per tripped gate."""

_SEVERITY_GATES: Final = frozenset({"new-violations"})


@dataclass(frozen=True)
class Gate:
    """One ``--fail-on`` name: the category it watches, and the least severity it counts."""

    name: str
    """As typed (``new-violations:error``)."""
    category: str
    min_rank: int | None = None

    def counts(self, item: dict[str, Any]) -> bool:
        return self.min_rank is None or severity_rank(item.get("severity")) >= self.min_rank


def _gate(text: str) -> Gate:
    base, sep, severity = text.partition(":")
    if base not in GATES:
        raise ValueError(f"Invalid --fail-on: {text!r}. Must be one of: {', '.join(GATES)} "
                         "(new-violations:SEVERITY for that severity or worse)")
    if not sep:
        return Gate(text, GATES[base])
    if base not in _SEVERITY_GATES:
        raise ValueError(f"Invalid --fail-on: {text!r}. Only new-violations takes a severity")
    rank = SEVERITY_RANKS.get(severity.lower())
    if rank is None:
        raise ValueError(f"Invalid --fail-on: {text!r}. The severity must be one of: "
                         f"{', '.join(SEVERITY_RANKS)}")
    return Gate(text, GATES[base], rank)


def parse_fail_on(text: str | None) -> list[Gate]:
    """The gates of ``--fail-on`` (comma-separated, repeats dropped); ``ValueError`` naming a
    bad one."""
    if not text:
        return []
    names = [name.strip() for name in text.split(",") if name.strip()]
    return [_gate(name) for name in dict.fromkeys(names)]


@dataclass
class _Tripped:
    count: int = 0
    first: list[dict[str, Any]] = field(default_factory=list)


class GateCheck:
    """The gates' counts and first items, from the items of a comparison as they are read."""

    def __init__(self, gates: Sequence[Gate]) -> None:
        self.gates = list(gates)
        self._found = {gate.name: _Tripped() for gate in self.gates}
        self._by_category: dict[str, list[Gate]] = {}
        for gate in self.gates:
            self._by_category.setdefault(gate.category, []).append(gate)

    @property
    def categories(self) -> list[str]:
        """The categories the gates watch."""
        return list(self._by_category)

    def see(self, category: str, item: dict[str, Any]) -> None:
        for gate in self._by_category.get(category, ()):
            if gate.counts(item):
                found = self._found[gate.name]
                found.count += 1
                if len(found.first) < SAMPLE:
                    found.first.append(item)

    def tripped(self, describe: Callable[[str, dict[str, Any]], str]) -> list[str]:
        """One line per tripped gate: its name, its count and its first items
        (``describe(category, item)``)."""
        lines = []
        for gate in self.gates:
            found = self._found[gate.name]
            if not found.count:
                continue
            shown = "; ".join(describe(gate.category, item) for item in found.first)
            more = found.count - len(found.first)
            lines.append(f"Gate tripped: {gate.name}: {found.count} ({shown}"
                         f"{f'; … and {more} more' if more > 0 else ''})")
        return lines


def run_gate(old: str | os.PathLike[str], new: str | os.PathLike[str], gates: Iterable[Gate],
             *, url_map: UrlMap | None = None, err: IO[str] | None = None) -> int:
    """Compare ``new`` with the baseline ``old`` on the gates' categories only; print what
    tripped (to ``err``, default stderr) and return :data:`GATE_EXIT` or 0."""
    check = GateCheck(list(gates))
    with compare_archives(old, new, url_map=url_map) as diff:
        for category in check.categories:
            for item in diff.items(category):
                check.see(category, item)
    lines = check.tripped(format_item)
    for line in lines:
        print(line, file=err or sys.stderr)
    return GATE_EXIT if lines else 0
