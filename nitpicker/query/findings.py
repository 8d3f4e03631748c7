"""Every finding of an archive, one at a time: what a CI gate counts and what an export
(SARIF, JUnit, Markdown, GitHub annotations) lists (:mod:`nitpicker.ci`).

The rows are the ``findings`` view's (migration ``0020_findings``: the site checks' findings
and the analyzers' violations as one model, :mod:`nitpicker.query.issues`), each with its
issue's title, an analyzer's own severity (``violations:error`` counts by it) and its
fingerprint in hex, read row by row in one of two orders::

    for finding in iter_findings(conn, order="priority"):   # critical first
        finding["rule"], finding["url"], finding["fingerprint"]

An archive the site checks never ran on has no findings to gate: :func:`findings_checked`
says so, and the callers ask for ``nitpicker check FILE``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import fetch_all, fetch_one
from nitpicker.query.checks import PRIORITIES, check_by_id
from nitpicker.query.fingerprint import check_locator, finding_fingerprint, fingerprint_hex, locator
from nitpicker.query.issues import has_findings

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["ORDERS", "Finding", "RuleInfo", "finding_rules", "findings_checked",
           "iter_findings", "recomputed_fingerprint"]


class Finding(TypedDict):
    source: str
    """``check`` (a built-in site check) or the analyzer plugin's name (``axe``)."""
    rule: str
    """The check's id (``links/broken-internal``) or the analyzer's ``validator/rule``."""
    title: str
    """The check's title; an analyzer rule's id."""
    priority: str
    """``critical``, ``high``, ``medium``, ``low`` or ``info``."""
    category: str
    severity: str | None
    """An analyzer's own severity (``error``, ``serious``…); ``None`` for a site check."""
    url: str
    element: str | None
    location: str | None
    """``line:col`` in the snapshot, when the analyzer knows it."""
    snippet: str | None
    message: str
    fingerprint: str
    """16 hex digits (``''``: a violation written before its fingerprint was, until
    ``nitpicker check``)."""


class RuleInfo(TypedDict):
    id: str
    source: str
    title: str
    priority: str
    """Its most severe finding's."""
    category: str
    explanation: str
    fix: str
    findings: int


ORDERS: Final = ("priority", "category")
"""``priority``: most urgent first, then rule, URL, element; ``category``: by category, then
rule, URL, element."""

_RANK: Final = "CASE f.priority " + " ".join(
    f"WHEN '{name}' THEN {rank}" for rank, name in enumerate(PRIORITIES)) + " END"
"""``critical`` 0 … ``info`` 4 (names from the constant, never input)."""

_SELECT: Final = """SELECT f.source, f.rule, f.priority, f.category, f.url, f.element,
        f.location, f.snippet, f.message, f.fingerprint,
        CASE WHEN f.source = 'check' THEN NULL
             ELSE (SELECT v.severity FROM violations v WHERE v.id = f.source_id) END
    FROM findings f"""

_ORDER_BY: Final = {
    "priority": f"ORDER BY {_RANK}, f.rule, f.url, f.element, f.location, f.source_id",
    "category": f"ORDER BY f.category, f.rule, {_RANK}, f.url, f.element, f.location, "
                "f.source_id",
}

_CHECK_RUNS_SQL: Final = "SELECT 1 FROM check_runs LIMIT 1"

_RULES_SQL: Final = f"""SELECT f.rule, min(f.source), min({_RANK}), min(f.category), count(*),
        min(f.message)
    FROM findings f GROUP BY f.rule ORDER BY min({_RANK}), f.rule"""


def findings_checked(conn: sqlite3.Connection) -> bool:
    """Whether the site checks ran on the archive (its findings are complete): the findings
    model is there and a check run finished."""
    return has_findings(conn) and fetch_one(conn, _CHECK_RUNS_SQL) is not None


def _title(rule: str, source: str) -> str:
    check = check_by_id(rule) if source == "check" else None
    return check.title if check is not None else rule


def iter_findings(conn: sqlite3.Connection, *, order: str = "priority") -> Iterator[Finding]:
    """Every finding of the archive in ``order`` (:data:`ORDERS`), read row by row (none when
    the archive has no findings model)."""
    if order not in ORDERS:
        raise ValueError(f"Invalid order: {order!r}. Must be one of: {', '.join(ORDERS)}")
    if not has_findings(conn):
        return
    titles: dict[tuple[str, str], str] = {}
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(f"{_SELECT} {_ORDER_BY[order]}")
    for (source, rule, priority, category, url, element, location, snippet, message,
         fingerprint, severity) in cursor:
        key = (rule, source)
        if key not in titles:
            titles[key] = _title(rule, source)
        yield {"source": source, "rule": rule, "title": titles[key], "priority": priority,
               "category": category, "severity": severity, "url": url, "element": element,
               "location": location, "snippet": snippet, "message": message or "",
               "fingerprint": fingerprint_hex(fingerprint)}


def finding_rules(conn: sqlite3.Connection) -> list[RuleInfo]:
    """Every rule with findings in the archive (most urgent first, then by id), with its
    title, explanation and fix (a site check's from the registry)."""
    if not has_findings(conn):
        return []
    rules: list[RuleInfo] = []
    for rule, source, rank, category, count, message in fetch_all(conn, _RULES_SQL):
        check = check_by_id(rule) if source == "check" else None
        if check is not None:
            explanation, fix = check.explanation, check.fix
        else:
            explanation = " ".join((message or rule).split())
            fix = ("Read each finding's message, element and snippet, and the analyzer's "
                   "documentation of the rule.")
        rules.append({"id": rule, "source": source, "title": _title(rule, source),
                      "priority": PRIORITIES[rank], "category": category,
                      "explanation": explanation, "fix": fix, "findings": count})
    return rules


def recomputed_fingerprint(finding: Finding,
                           url_of: Callable[[str], str] | None = None) -> str:
    """``finding``'s fingerprint computed afresh, its URL first passed through ``url_of``
    (an OLD archive's URL as a NEW one spells it: ``nitpicker diff --map``)."""
    url = url_of(finding["url"]) if url_of is not None else finding["url"]
    where = (check_locator(finding["element"]) if finding["source"] == "check"
             else locator(finding["element"], finding["snippet"], finding["message"]))
    return fingerprint_hex(finding_fingerprint(finding["rule"], url, where))
