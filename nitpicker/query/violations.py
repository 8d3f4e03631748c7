"""Violations found by the analyze plugins (axe, markuplint, textlint, lighthouse, …).

``nitpicker analyze`` writes them (migration ``0013_analysis``: ``violations(page_id →
pages.id, plugin, validator, severity, rule, code, message, url, location)``), the latest
analysis of each page by each plugin; migration ``0020_findings`` adds the ``element`` at fault
(axe's CSS selector), ``0021_violation_details`` what an engine says beside (``status``:
``violation`` or ``needs-review``, ``impact``, ``tags``, ``help_url``, ``summary``:
:data:`DETAIL_FIELDS`), ``NULL`` in an archive analysed before. An archive no analyzer has
opened has no such table:
the answer is then empty, and the table is never created here (readers never change the
schema).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_choice,
    check_paging,
    fetch_all,
    fetch_one,
    find_page_id,
    has_migration,
    has_tables,
    paged,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = [
    "DETAIL_FIELDS",
    "STATUSES",
    "RulePage",
    "ViolationItem",
    "ViolationRule",
    "get_violations",
    "list_rule_pages",
    "list_violation_rules",
]


class ViolationItem(TypedDict):
    url: str
    """The page's URL."""
    validator: str
    severity: str
    rule: str
    message: str
    code: str | None
    """The offending markup (axe), or empty."""
    location: str | None
    """``line:col`` in the page's snapshot, when the plugin knows it."""
    status: str
    """``violation`` (the engine says the rule fails) or ``needs-review`` (it could not tell:
    axe's ``incomplete``; its severity is ``needs-review`` too)."""
    impact: str | None
    """The engine's weight (axe: ``minor`` … ``critical``), for needs-review items too."""
    tags: list[str]
    """The rule's tags (axe: ``wcag2aa``, ``best-practice`` …)."""
    help_url: str | None
    element: str | None
    """The element at fault when the plugin names it (axe: a CSS selector, its target)."""
    summary: str | None
    """Why it fails there, in the engine's words (axe: the contrast ratio and colours)."""


# -- what an engine says beside the rule (migration 0021_violation_details) ------------------

STATUSES = ("violation", "needs-review")
"""A violation's ``status`` (the plugin API's ``VIOLATION`` and ``NEEDS_REVIEW``)."""

DETAIL_FIELDS = ("status", "impact", "tags", "help_url", "element", "summary")
"""The optional facts of a violation (the plugin API's ``Violation``), in column order."""

def has_details(conn: sqlite3.Connection) -> bool:
    """Whether the archive's ``violations`` have the engine's facts (an analysis since
    ``0021_violation_details``)."""
    return has_migration(conn, "0021_violation_details")


def _detail_columns(conn: sqlite3.Connection) -> str:
    """The facts as columns, constants in an archive analysed before they were kept."""
    if has_details(conn):
        return "v.status, v.impact, v.tags, v.help_url, v.element, v.summary"
    return "'violation', NULL, NULL, NULL, NULL, NULL"


def _item(row: Sequence[Any]) -> ViolationItem:
    (url, validator, severity, rule, message, code, location,
     status, impact, tags, help_url, element, summary) = row
    return {"url": url, "validator": validator, "severity": severity, "rule": rule,
            "message": message, "code": code, "location": location, "status": status,
            "impact": impact, "tags": json.loads(tags) if tags else [], "help_url": help_url,
            "element": element, "summary": summary}


def get_violations(
    conn: sqlite3.Connection,
    *,
    validator: str | None = None,
    severity: str | None = None,
    rule: str | None = None,
    url: str | None = None,
    status: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ViolationItem]:
    """Violations ordered by page URL; ``validator``, ``severity``, ``rule`` match exactly;
    ``url``: one page's (none when the archive has no such page); ``status``: ``violation``
    or ``needs-review`` only."""
    check_paging(limit, offset)
    if status is not None:
        check_choice("status", status, STATUSES)
    if not has_tables(conn, "violations"):
        return paged([], 0, limit, offset)
    where: list[str] = ["1"]
    params: list[Any] = []
    for column, value in (("validator", validator), ("severity", severity), ("rule", rule)):
        if value is not None:
            where.append(f"v.{column} = ?")  # column names from the tuple above, never input
            params.append(value)
    if status is not None:
        where.append("v.status = ?" if has_details(conn) else "'violation' = ?")
        params.append(status)
    if url is not None:
        found = find_page_id(conn, url)
        where.append("v.page_id = ?")
        params.append(found[0] if found else -1)
    condition = " AND ".join(where)
    rows = fetch_all(
        conn,
        "SELECT p.url, v.validator, v.severity, v.rule, v.message, v.code, v.location,"
        f" {_detail_columns(conn)} FROM violations v JOIN pages p ON p.id = v.page_id"
        f" WHERE {condition} ORDER BY p.url, v.rowid"
        " LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM violations v WHERE {condition}", params)
    items = [_item(row) for row in rows]
    return paged(items, total[0] if total else 0, limit, offset)


class ViolationRule(TypedDict):
    validator: str
    severity: str
    rule: str
    findings: int
    """Violations of the rule (at this severity) in the archive."""
    pages: int
    """Pages with at least one of them."""


_RULES_SQL = """SELECT validator, severity, rule, count(*), count(DISTINCT page_id),
    count(*) OVER () FROM violations GROUP BY validator, severity, rule
    ORDER BY count(*) DESC, validator, severity, rule LIMIT ? OFFSET ?"""

_RULES_COUNT_SQL = """SELECT count(*) FROM
    (SELECT 1 FROM violations GROUP BY validator, severity, rule)"""


def list_violation_rules(conn: sqlite3.Connection, *, limit: int = 100, offset: int = 0
                         ) -> Paged[ViolationRule]:
    """The rules violated in the archive (by validator and severity), most violations first,
    each with its number of findings and of pages."""
    check_paging(limit, offset)
    if not has_tables(conn, "violations"):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _RULES_SQL, (limit, offset))
    if rows:
        total = int(rows[0][-1])
    else:
        row = fetch_one(conn, _RULES_COUNT_SQL) if offset else None
        total = int(row[0]) if row else 0
    items: list[ViolationRule] = [
        {"validator": validator, "severity": severity, "rule": rule, "findings": findings,
         "pages": pages}
        for validator, severity, rule, findings, pages, _ in rows
    ]
    return paged(items, total, limit, offset)


class RulePage(TypedDict):
    url: str
    findings: int
    """Violations of the rule on this page."""


_RULE_PAGES_SQL = """SELECT p.url, r.n, count(*) OVER () FROM
    (SELECT page_id, count(*) AS n FROM violations WHERE validator = ? AND rule = ?
     GROUP BY page_id) r JOIN pages p ON p.id = r.page_id
    ORDER BY p.url LIMIT ? OFFSET ?"""

_RULE_PAGES_COUNT_SQL = """SELECT count(DISTINCT page_id) FROM violations
    WHERE validator = ? AND rule = ?"""


def list_rule_pages(conn: sqlite3.Connection, validator: str, rule: str, *, limit: int = 100,
                    offset: int = 0) -> Paged[RulePage]:
    """The pages where ``validator`` found ``rule`` violated, by URL, with how many times."""
    check_paging(limit, offset)
    if not has_tables(conn, "violations"):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _RULE_PAGES_SQL, (validator, rule, limit, offset))
    if rows:
        total = int(rows[0][-1])
    else:
        row = fetch_one(conn, _RULE_PAGES_COUNT_SQL, (validator, rule)) if offset else None
        total = int(row[0]) if row else 0
    items: list[RulePage] = [{"url": url, "findings": findings} for url, findings, _ in rows]
    return paged(items, total, limit, offset)
