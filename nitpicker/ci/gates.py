"""The gates of ``--fail-on``: what must stay at or under a count for a CI job to pass.

Two kinds, comma-separated in one ``--fail-on``:

- **absolute** gates count an archive's findings (:mod:`nitpicker.query.findings`) and need
  nothing else: ``broken-links`` (the findings of ``links/broken-internal`` and
  ``links/broken-external``: one per broken URL a page links to), ``4xx``
  (``status/client-error``), ``5xx`` (``status/server-error``), ``issues`` or
  ``issues:PRIORITY`` (every finding of that priority or more urgent), ``violations`` or
  ``violations:SEVERITY`` (the analyzers' findings of that severity or worse), ``check:ID``
  (one check's or analyzer rule's findings);
- **comparison** gates (``new-broken-links``, ``new-4xx``, ``new-5xx``, ``removed-pages``,
  ``new-violations[:SEVERITY]``: :data:`~nitpicker.query.diff.GATES`) count the items of a
  comparison with an earlier archive, the baseline.

Each may end in ``>N``: the gate trips when its count is over ``N`` (``broken-links>10``);
without it, over 0. A finding accepted in the suppressions file
(:mod:`nitpicker.ci.suppressions`) is counted as suppressed, never by a gate, until its
suppression expires. :class:`GateCount` counts both kinds::

    gates = parse_fail_on("broken-links,issues:high>5,new-violations:error")
    count = GateCount(gates, suppressions)
    for finding in iter_findings(conn):
        count.see_finding(finding)
    count.tripped_lines()          # ["Gate tripped: broken-links: 3 (…)"]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Final

from nitpicker.query.checks import CHECKS, PRIORITIES, check_by_id
from nitpicker.query.diff import GATES, SEVERITY_RANKS, severity_rank

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from nitpicker.ci.suppressions import Suppression, Suppressions
    from nitpicker.query.findings import Finding

__all__ = ["ABSOLUTE_GATES", "GATE_EXIT", "SAMPLE", "Gate", "GateCount", "describe_finding",
           "parse_fail_on"]

GATE_EXIT: Final = 3
"""The exit code when a ``--fail-on`` gate trips (1 is bad input or a failed crawl, 2 a crawl
whose only failures were out of scope)."""

SAMPLE: Final = 3
"""Items named per tripped gate."""

ABSOLUTE_GATES: Final = {
    "broken-links": ("links/broken-internal", "links/broken-external"),
    "4xx": ("status/client-error",),
    "5xx": ("status/server-error",),
    "issues": (),
    "violations": (),
    "check": (),
}
"""The absolute gates, each with the site checks it counts (``issues``, ``violations`` and
``check`` choose by priority, severity or id)."""

_SPELLINGS: Final = ("broken-links", "4xx", "5xx", "issues:PRIORITY", "violations:SEVERITY",
                     "check:ID", *(f"{name}:SEVERITY" if name == "new-violations" else name
                                   for name in GATES))
_SEVERITY_GATES: Final = frozenset({"new-violations", "violations"})
_THRESHOLD: Final = re.compile(r"\d{1,9}")
_CHECK_FAMILIES: Final = frozenset(check.family for check in CHECKS)


@dataclass(frozen=True)
class Gate:
    """One ``--fail-on`` name: what it counts, and the count it may reach."""

    name: str
    """As typed (``issues:high>5``)."""
    base: str
    """``broken-links``, ``issues``, ``new-violations``…"""
    category: str | None = None
    """A comparison gate's category of :mod:`nitpicker.query.diff` (``None``: absolute)."""
    min_rank: int | None = None
    """``violations`` / ``new-violations``: the least severity counted."""
    max_priority: int | None = None
    """``issues``: the least urgent priority counted (an index of ``PRIORITIES``)."""
    rules: tuple[str, ...] = ()
    """The rules it counts (``broken-links``, ``4xx``, ``5xx``, ``check:ID``)."""
    threshold: int = 0
    """It trips when its count is over this."""

    @property
    def needs_baseline(self) -> bool:
        return self.category is not None

    def counts(self, item: dict[str, Any]) -> bool:
        """A comparison item counts (a new violation: of the gate's severity or worse)."""
        return self.min_rank is None or severity_rank(item.get("severity")) >= self.min_rank

    def matches(self, finding: Finding) -> bool:
        """An archive's finding counts."""
        if self.rules:
            return finding["rule"] in self.rules
        if self.base == "violations":
            return finding["source"] != "check" and (
                self.min_rank is None or severity_rank(finding["severity"]) >= self.min_rank)
        if self.base == "issues":
            return (self.max_priority is None
                    or PRIORITIES.index(finding["priority"]) <= self.max_priority)
        return False


def _invalid(text: str, why: str) -> ValueError:
    return ValueError(f"Invalid --fail-on: {text!r}. {why}")


def _threshold(text: str, name: str, limit: str) -> int:
    if not _THRESHOLD.fullmatch(limit.strip()):
        raise _invalid(text, f"After > comes the count the gate may reach, a whole number "
                             f"(broken-links>10), got {limit!r}")
    return int(limit)


def _gate(text: str) -> Gate:
    name, over, limit = text.partition(">")
    name = name.strip()
    threshold = _threshold(text, name, limit) if over else 0
    base, sep, arg = name.partition(":")
    if base not in GATES and base not in ABSOLUTE_GATES:
        raise _invalid(text, f"Must be one of: {', '.join(_SPELLINGS)} (each may end in >N: "
                             "trips when over N)")
    if sep and not arg:
        raise _invalid(text, f"Name what {base}: counts after the colon")
    if base in GATES:
        if sep and base not in _SEVERITY_GATES:
            raise _invalid(text, "Only new-violations takes a severity")
        return Gate(text, base, category=GATES[base],
                    min_rank=_severity(text, arg) if sep else None, threshold=threshold)
    if base == "check":
        if not sep:
            raise _invalid(text, "check needs a check's or an analyzer rule's id: "
                                 "check:links/broken-internal")
        return Gate(text, base, rules=(_rule(text, arg),), threshold=threshold)
    if base == "issues":
        return Gate(text, base, max_priority=_priority(text, arg) if sep else None,
                    threshold=threshold)
    if base == "violations":
        return Gate(text, base, min_rank=_severity(text, arg) if sep else None,
                    threshold=threshold)
    if sep:
        raise _invalid(text, "Only issues, violations, check and new-violations take a value "
                             "after a colon")
    return Gate(text, base, rules=ABSOLUTE_GATES[base], threshold=threshold)


def _severity(text: str, severity: str) -> int:
    rank = SEVERITY_RANKS.get(severity.lower())
    if rank is None:
        raise _invalid(text, f"The severity must be one of: {', '.join(SEVERITY_RANKS)}")
    return rank


def _priority(text: str, priority: str) -> int:
    if priority.lower() not in PRIORITIES:
        raise _invalid(text, f"The priority must be one of: {', '.join(PRIORITIES)}")
    return PRIORITIES.index(priority.lower())


def _rule(text: str, rule: str) -> str:
    """A site check's id, or an analyzer's ``validator/rule`` (not a check family's)."""
    if check_by_id(rule) is not None:
        return rule
    family, slash, name = rule.partition("/")
    if slash and name and family not in _CHECK_FAMILIES:
        return rule
    raise _invalid(text, "No such check. The checks: " + ", ".join(c.id for c in CHECKS)
                   + "; or an analyzer's validator/rule (axe/image-alt)")


def parse_fail_on(text: str | None) -> list[Gate]:
    """The gates of ``--fail-on`` (comma-separated, repeats dropped; ``None``, the option not
    given: none); ``ValueError`` naming a bad one, or a value that names none (``''``,
    ``','``: a gate that would silently check nothing)."""
    if text is None:
        return []
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError(f"Invalid --fail-on: {text!r}. Name at least one of: "
                         f"{', '.join(_SPELLINGS)}")
    return [_gate(name) for name in dict.fromkeys(names)]


def describe_finding(finding: Finding) -> str:
    """A finding in one line: its rule, URL and element."""
    where = f" {finding['element']}" if finding["element"] else ""
    return f"{finding['rule']} {finding['url']}{where}"


@dataclass
class _Found:
    count: int = 0
    first: list[str] = field(default_factory=list)


class GateCount:
    """The gates' counts and first items, from the findings of an archive and the items of
    a comparison as they are read; accepted findings counted apart."""

    def __init__(self, gates: Sequence[Gate], suppressions: Suppressions | None = None, *,
                 today: date | None = None) -> None:
        self.gates = list(gates)
        self.suppressions = suppressions
        self.today = today or date.today()
        self._found = {gate.name: _Found() for gate in self.gates}
        self._absolute = [gate for gate in self.gates if not gate.needs_baseline]
        self._by_category: dict[str, list[Gate]] = {}
        for gate in self.gates:
            if gate.category is not None:
                self._by_category.setdefault(gate.category, []).append(gate)
        self.suppressed: set[str] = set()
        """The fingerprints of counted findings a suppression accepted."""
        self.expired: dict[str, Suppression] = {}
        """The expired suppressions of findings the gates counted again."""

    @property
    def categories(self) -> list[str]:
        """The comparison categories the gates watch."""
        return list(self._by_category)

    @property
    def absolute(self) -> list[Gate]:
        return list(self._absolute)

    def _accepted(self, fingerprint: str | None) -> bool:
        if self.suppressions is None or not fingerprint:
            return False
        suppression = self.suppressions.get(fingerprint)
        if suppression is None:
            return False
        if suppression.expired(self.today):
            self.expired[fingerprint] = suppression
            return False
        self.suppressed.add(fingerprint)
        return True

    def _add(self, gate: Gate, line: str) -> None:
        found = self._found[gate.name]
        found.count += 1
        if len(found.first) < SAMPLE:
            found.first.append(line)

    def see_finding(self, finding: Finding) -> None:
        gates = [gate for gate in self._absolute if gate.matches(finding)]
        if gates and not self._accepted(finding["fingerprint"]):
            for gate in gates:
                self._add(gate, describe_finding(finding))

    def see_item(self, category: str, item: dict[str, Any],
                 describe: Callable[[str, dict[str, Any]], str]) -> None:
        gates = [gate for gate in self._by_category.get(category, ()) if gate.counts(item)]
        if gates and not self._accepted(item.get("fingerprint")):
            for gate in gates:
                self._add(gate, describe(category, item))

    def tripped_lines(self) -> list[str]:
        """One line per tripped gate: its name, its count and its first items."""
        lines = []
        for gate in self.gates:
            found = self._found[gate.name]
            if found.count <= gate.threshold:
                continue
            more = found.count - len(found.first)
            lines.append(f"Gate tripped: {gate.name}: {found.count} ({'; '.join(found.first)}"
                         f"{f'; … and {more} more' if more > 0 else ''})")
        return lines

    def note_lines(self) -> list[str]:
        """What the suppressions did: the findings they accepted, and the expired ones that
        gate again."""
        lines = []
        path = self.suppressions.path if self.suppressions is not None else None
        where = f" in {path}" if path else ""
        if self.suppressed:
            lines.append(f"Suppressed: {len(self.suppressed)} accepted finding"
                         f"{'' if len(self.suppressed) == 1 else 's'}{where} not counted by "
                         "the gates")
        if self.expired:
            first = next(iter(self.expired.values()))
            one = len(self.expired) == 1
            lines.append(f"Expired: {len(self.expired)} suppression{'' if one else 's'}{where} "
                         f"{'is' if one else 'are'} past {'its' if one else 'their'} date, so "
                         f"{'its finding gates' if one else 'their findings gate'} again "
                         f"(line {first.line}: {first.fingerprint}, expired {first.expires})")
        return lines
