"""A score per category of the audit (issue 26): how much of the site each category's issues
leave untouched, 0 to 100.

A category starts at 100. Each of its issues takes off its priority's weight
(:data:`WEIGHTS`: ``critical`` 100, ``high`` 50, ``medium`` 25, ``low`` 10, ``info`` 0)
times the share of the site's pages it touches (its URLs over the in-scope HTML pages, at
most 1); the score is what is left, rounded, never below 0. So a critical issue on every page
makes 0, a high one on half the pages takes 25 off, and an info one nothing. The categories
are the site checks' (:data:`~nitpicker.query.checks.CATEGORIES`, each scored even without an
issue: 100) and those of the analyzers whose rules found something.

An archive the checks never ran on has no scores (``[]``): nothing was judged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query.checks import CATEGORIES, PRIORITIES
from nitpicker.query.issues import IssueItem, issues_overview
from nitpicker.query.summary import summary

if TYPE_CHECKING:
    import sqlite3

__all__ = ["WEIGHTS", "CategoryScore", "category_scores", "score_of", "scores_of"]

WEIGHTS: Final = {"critical": 100.0, "high": 50.0, "medium": 25.0, "low": 10.0, "info": 0.0}
"""The points an issue of each priority takes off when it touches every page."""

_ALL: Final = 1_000_000


class CategoryScore(TypedDict):
    category: str
    score: int
    """0 (a critical issue on every page) to 100 (no issue that counts)."""
    issues: int
    """Issues of the category with findings (of any priority)."""
    worst: str | None
    """The most urgent priority among them (``None``: no issue)."""


def score_of(items: list[IssueItem], pages: int) -> int:
    """The score left by ``items`` (one category's issues) on a site of ``pages`` pages."""
    lost = sum(WEIGHTS[item["priority"]] * min(1.0, item["urls"] / max(1, pages))
               for item in items)
    return max(0, round(100 - lost))


def category_scores(conn: sqlite3.Connection) -> list[CategoryScore]:
    """Each category's score, the site checks' categories first (in their order), then the
    analyzers' by name; ``[]`` when the checks never ran on the archive."""
    overview = issues_overview(conn, limit=_ALL)
    if overview["checked_at"] is None and not overview["items"]:
        return []
    return scores_of(overview["items"], summary(conn).internal_pages)


def scores_of(items: list[IssueItem], pages: int) -> list[CategoryScore]:
    """:func:`category_scores` of the issues ``items`` (every one of the archive's) on a site
    of ``pages`` in-scope HTML pages."""
    by_category: dict[str, list[IssueItem]] = {category: [] for category in CATEGORIES}
    for item in items:
        if item["urls"]:
            by_category.setdefault(item["category"], []).append(item)
    order = [*CATEGORIES, *sorted(set(by_category) - set(CATEGORIES))]
    scores: list[CategoryScore] = []
    for category in order:
        found = by_category[category]
        worst = min((PRIORITIES.index(item["priority"]) for item in found), default=None)
        scores.append({"category": category, "score": score_of(found, pages),
                       "issues": len(found),
                       "worst": PRIORITIES[worst] if worst is not None else None})
    return scores
