"""Violations found by the analyze plugins (axe, markuplint, textlint, lighthouse, …).

No analyzer writes them yet. Until one has, an archive has no ``violations`` table and the
answer is empty; the table is never created here (readers never change the schema).
The expected table: ``violations(page_id → pages.id, validator, severity, rule, message,
code)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_paging, fetch_all, fetch_one, paged

if TYPE_CHECKING:
    import sqlite3

__all__ = ["ViolationItem", "get_violations", "has_violations_table"]


class ViolationItem(TypedDict):
    url: str
    validator: str
    severity: str
    rule: str
    message: str
    code: str | None


def has_violations_table(conn: sqlite3.Connection) -> bool:
    """Whether an analyzer has created the ``violations`` table in this archive."""
    row = fetch_one(conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                    ("violations",))
    return row is not None


def get_violations(
    conn: sqlite3.Connection,
    *,
    validator: str | None = None,
    severity: str | None = None,
    rule: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ViolationItem]:
    """Violations ordered by page URL; ``validator``, ``severity``, ``rule`` match exactly."""
    check_paging(limit, offset)
    if not has_violations_table(conn):
        return paged([], 0, limit, offset)
    where: list[str] = ["1"]
    params: list[Any] = []
    for column, value in (("validator", validator), ("severity", severity), ("rule", rule)):
        if value is not None:
            where.append(f"v.{column} = ?")  # column names from the tuple above, never input
            params.append(value)
    condition = " AND ".join(where)
    rows = fetch_all(
        conn,
        "SELECT p.url, v.validator, v.severity, v.rule, v.message, v.code FROM violations v"
        f" JOIN pages p ON p.id = v.page_id WHERE {condition} ORDER BY p.url, v.rowid"
        " LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM violations v WHERE {condition}", params)
    items: list[ViolationItem] = [
        {"url": url, "validator": validator_, "severity": severity_, "rule": rule_,
         "message": message, "code": code}
        for url, validator_, severity_, rule_, message, code in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)

