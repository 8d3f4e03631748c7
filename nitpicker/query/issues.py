"""The audit: every issue the archive's findings show (what is wrong, how bad, how many URLs,
why it matters, how to fix it), the findings of one issue, and the issues of one page.

An **issue** is a check or an analyzer rule with its findings: a site check's id
(``links/broken-internal``, :mod:`nitpicker.query.checks`) or an analyzer's ``validator/rule``
(``axe/image-alt``). Both are read from the ``findings`` view (migration ``0020_findings``:
the checks' ``check_findings`` and the analyzers' ``violations`` as one model). A check's
title, explanation and fix come from the registry; an analyzer rule's title is its rule, its
explanation one of its messages. Issues are sorted by priority (``critical`` first), then by
how many URLs they touch, then by id.

An archive the site checks never ran on (written before ``0020_findings``, or a crawl that
failed) has no issues yet: ``checked_at`` is ``None`` and ``nitpicker check FILE`` runs them
(readers never change the schema).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_choice,
    check_paging,
    fetch_all,
    fetch_counted,
    fetch_one,
    find_page_id,
    has_column,
    has_tables,
    paged,
)
from nitpicker.query.checks import CATEGORIES, CHECKS, PRIORITIES, check_by_id
from nitpicker.query.fingerprint import fingerprint_hex

if TYPE_CHECKING:
    import sqlite3

__all__ = ["IssueFinding", "IssueItem", "IssuesOverview", "PageIssue", "has_findings",
           "issue_urls", "issues_overview", "page_issues"]


class IssueItem(TypedDict):
    id: str
    """The check's id (``links/broken-internal``) or the analyzer's ``validator/rule``."""
    source: str
    """``check`` (a built-in site check) or the analyzer plugin's name (``axe``)."""
    title: str
    priority: str
    """``critical``, ``high``, ``medium``, ``low`` or ``info`` (an analyzer rule: its most
    severe finding's)."""
    category: str
    urls: int
    """How many URLs have at least one finding of the issue."""
    findings: int
    explanation: str
    """Why it matters."""
    fix: str
    """How to fix it."""


class IssuesOverview(TypedDict):
    checked_at: str | None
    """When the site checks last ran on the archive (``None``: never; ``nitpicker check``)."""
    by_priority: dict[str, int]
    """How many issues (not findings) of each priority the filters leave, every priority."""
    items: list[IssueItem]
    total: int
    offset: int
    limit: int


class IssueFinding(TypedDict):
    url: str
    element: str | None
    """What on the page: a CSS selector (axe), a link's target, an image's ``src``."""
    location: str | None
    """``line:col`` in the snapshot (an analyzer that knows it)."""
    snippet: str | None
    """The offending markup (an analyzer's code)."""
    message: str
    fingerprint: str
    """16 hex digits: the same finding in another crawl has the same one
    (:mod:`nitpicker.query.fingerprint`)."""


class PageIssue(TypedDict):
    id: str
    title: str
    priority: str
    category: str
    element: str | None
    location: str | None
    snippet: str | None
    message: str


_PRIORITY_RANK: Final = "CASE priority " + " ".join(
    f"WHEN '{name}' THEN {rank}" for rank, name in enumerate(PRIORITIES)) + " END"
"""``critical`` 0 … ``info`` 4 (names from the constant, never input)."""

_CHECKED_AT_SQL: Final = "SELECT max(ended_at) FROM check_runs"

_OVERVIEW_SQL: Final = f"""SELECT rule, min(source), min({_PRIORITY_RANK}), min(category),
        count(DISTINCT url), count(*), min(message)
    FROM findings GROUP BY rule"""
"""One row per issue: its id, source, most severe priority, category, URLs, findings and
one message (an analyzer rule's explanation)."""

_ISSUE_FINDINGS_SQL: Final = """SELECT f.url, f.element, f.location, f.snippet, f.message,
        f.fingerprint, count(*) OVER () FROM findings f {join} WHERE f.rule = :rule
    ORDER BY {score} f.url, f.element, f.location, f.source_id LIMIT :limit OFFSET :offset"""
"""``{join}``, ``{score}``: the pages' link scores, most important first (migration
``0032_link_score``; an archive before it: by URL only). Constants, never input."""
_BY_SCORE: Final = {"join": "LEFT JOIN pages p ON p.id = f.page_id",
                    "score": "p.link_score IS NULL, p.link_score DESC,"}
_BY_URL: Final = {"join": "", "score": ""}
_ISSUE_COUNT_SQL: Final = "SELECT count(*) FROM findings WHERE rule = :rule"
_ISSUE_EXISTS_SQL: Final = "SELECT 1 FROM findings WHERE rule = :rule LIMIT 1"

_PAGE_FINDINGS_SQL: Final = f"""SELECT rule, {_PRIORITY_RANK}, category, element, location,
        snippet, message FROM findings WHERE page_id = ?
    ORDER BY {_PRIORITY_RANK}, rule, element, location, source_id"""


def has_findings(conn: sqlite3.Connection) -> bool:
    """Whether the archive has the findings model (migration ``0020_findings``)."""
    return has_tables(conn, "findings")


def _analyzer_texts(source: str, message: str) -> tuple[str, str]:
    """An analyzer rule's explanation (one of its messages) and fix."""
    explanation = (f"Found by the {source} analyzer (nitpicker analyze). One of its findings: "
                   f"{' '.join(message.split())}")
    fix = ("Read each finding's message, element and snippet (nitpicker query FILE issue --id "
           "ID), and the analyzer's documentation of the rule.")
    return explanation, fix


def _item(rule: str, source: str, rank: int, category: str, urls: int, findings: int,
          message: str) -> IssueItem:
    check = check_by_id(rule) if source == "check" else None
    if check is not None:
        title, explanation, fix = check.title, check.explanation, check.fix
    elif source == "check":  # a check this version no longer has: run nitpicker check again
        title, explanation, fix = rule, message, "Run nitpicker check FILE again."
    else:
        title = rule
        explanation, fix = _analyzer_texts(source, message)
    return {"id": rule, "source": source, "title": title, "priority": PRIORITIES[rank],
            "category": category, "urls": urls, "findings": findings,
            "explanation": explanation, "fix": fix}


def _passed(rule: str) -> IssueItem:
    check = check_by_id(rule)
    assert check is not None
    return {"id": check.id, "source": "check", "title": check.title,
            "priority": check.priority, "category": check.category, "urls": 0, "findings": 0,
            "explanation": check.explanation, "fix": check.fix}


def issues_overview(conn: sqlite3.Connection, *, priority: str | None = None,
                    category: str | None = None, include_passed: bool = False,
                    limit: int = 100, offset: int = 0) -> IssuesOverview:
    """Every issue of the archive, most urgent first (priority, then URLs, then id).

    ``priority``: that priority or more urgent (``high``: critical and high). ``category``:
    that category only (the checks' :data:`~nitpicker.query.checks.CATEGORIES`, or an
    analyzer's). ``include_passed``: the checks that found nothing too (``urls`` 0), after
    the issues.
    """
    check_paging(limit, offset)
    if priority is not None:
        check_choice("priority", priority, PRIORITIES)
    if not has_findings(conn):
        return {"checked_at": None, "by_priority": dict.fromkeys(PRIORITIES, 0), "items": [],
                "total": 0, "offset": offset, "limit": limit}
    row = fetch_one(conn, _CHECKED_AT_SQL)
    checked_at = row[0] if row else None
    items = [_item(*found) for found in fetch_all(conn, _OVERVIEW_SQL)]
    if category is not None and category not in CATEGORIES and category not in {
            item["category"] for item in items}:
        check_choice("category", category, sorted({*CATEGORIES, *(i["category"] for i in items)}))
    if include_passed and checked_at is not None:
        found = {item["id"] for item in items}
        items += [_passed(check.id) for check in CHECKS if check.id not in found]
    ceiling = PRIORITIES.index(priority) if priority is not None else len(PRIORITIES)
    items = [item for item in items
             if PRIORITIES.index(item["priority"]) <= ceiling
             and (category is None or item["category"] == category)]
    items.sort(key=lambda item: (item["urls"] == 0, PRIORITIES.index(item["priority"]),
                                 -item["urls"], item["id"]))
    by_priority = dict.fromkeys(PRIORITIES, 0)
    for item in items:
        if item["urls"]:
            by_priority[item["priority"]] += 1
    return {"checked_at": checked_at, "by_priority": by_priority,
            "items": items[offset:offset + limit], "total": len(items), "offset": offset,
            "limit": limit}


def _known(conn: sqlite3.Connection, issue_id: str) -> bool:
    return (check_by_id(issue_id) is not None
            or fetch_one(conn, _ISSUE_EXISTS_SQL, {"rule": issue_id}) is not None)


def issue_urls(conn: sqlite3.Connection, issue_id: str, *, limit: int = 100,
               offset: int = 0) -> Paged[IssueFinding]:
    """The findings of one issue, the most important pages first (by link score, then URL,
    element and location): where it is, and what each finding says. ``ValueError`` for an id that is no check and no rule of the archive's
    findings."""
    check_paging(limit, offset)
    if not has_findings(conn):
        if check_by_id(issue_id) is None:
            raise ValueError(_unknown(issue_id))
        return paged([], 0, limit, offset)
    if not _known(conn, issue_id):
        raise ValueError(_unknown(issue_id))
    order = _BY_SCORE if has_column(conn, "pages", "link_score") else _BY_URL
    rows, total = fetch_counted(conn, _ISSUE_FINDINGS_SQL.format(**order), _ISSUE_COUNT_SQL,
                                {"rule": issue_id, "limit": limit, "offset": offset}, offset)
    items: list[IssueFinding] = [
        {"url": url, "element": element, "location": location, "snippet": snippet,
         "message": message, "fingerprint": fingerprint_hex(fingerprint)}
        for url, element, location, snippet, message, fingerprint in rows]
    return paged(items, total, limit, offset)


def _unknown(issue_id: str) -> str:
    return (f"Unknown issue id: {issue_id!r}. An id is a check's (links/broken-internal) or an "
            "analyzer's validator/rule (axe/image-alt): the ids are in nitpicker query FILE issues")


def page_issues(conn: sqlite3.Connection, url: str) -> list[PageIssue] | None:
    """The findings on one page, most urgent first (``None``: no such page)."""
    found = find_page_id(conn, url)
    if found is None:
        return None
    if not has_findings(conn):
        return []
    issues: list[PageIssue] = []
    for rule, rank, category, element, location, snippet, message in fetch_all(
            conn, _PAGE_FINDINGS_SQL, (found[0],)):
        check = check_by_id(rule)
        issues.append({"id": rule, "title": check.title if check else rule,
                       "priority": PRIORITIES[rank], "category": category, "element": element,
                       "location": location, "snippet": snippet, "message": message})
    return issues
