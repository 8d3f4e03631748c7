"""Headings: internal pages (2xx) with no ``<h1>`` or with several.

Reads ``pages.h1_count`` (migration ``0020_findings``), counted by the crawl; pages crawled
before it have none (``NULL``) and are not judged.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS"]

_SQL: Final = (f"SELECT p.id AS page_id, p.url AS url, NULL AS element, {{message}} AS message"
               f" FROM pages p WHERE {OK_PAGE} AND {{where}}")

CHECKS: Final = (
    Check(
        id="headings/h1-missing",
        title="H1 missing",
        explanation=(
            "The page has no <h1>. The main heading tells visitors, screen readers (which "
            "jump to it) and search engines what the page is about."),
        fix="Mark the page's main heading up as <h1> (a logo or a menu is not one).",
        priority="medium", category="content",
        sql=_SQL.format(message="'No <h1>'", where="p.h1_count = 0"),
    ),
    Check(
        id="headings/h1-multiple",
        title="Several H1s",
        explanation=(
            "The page has more than one <h1>: its structure does not say which one is the "
            "page's subject, and screen-reader users lose the outline."),
        fix="Keep one <h1> for the page's subject and make the others <h2> or lower.",
        priority="low", category="content",
        sql=_SQL.format(message="printf('%d <h1> elements', p.h1_count)", where="p.h1_count > 1"),
    ),
)
