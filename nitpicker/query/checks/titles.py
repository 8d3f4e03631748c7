"""Titles (``<title>``) of the internal pages that answered 2xx: missing, shared by several
pages, too long or too short for a search result.

The lengths are counted in characters (``TITLE_MIN``, ``TITLE_MAX``: Screaming Frog's
defaults, about what a desktop search result shows).
"""

from __future__ import annotations

from typing import Final

from nitpicker.query._common import INTERNAL_HTML_INDEXED
from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS", "TITLE_MAX", "TITLE_MIN", "metadata_checks"]

TITLE_MIN: Final = 30
TITLE_MAX: Final = 60


def metadata_checks(column: str, label: str, *, minimum: int, maximum: int,
                    missing: tuple[str, str, str, str], duplicate: tuple[str, str, str, str],
                    long: tuple[str, str, str, str], short: tuple[str, str, str, str],
                    family: str) -> tuple[Check, ...]:
    """The four checks of a page's ``title`` or ``description`` column: each text is (title,
    explanation, fix, priority). ``column`` is one of the two, never input."""
    assert column in ("title", "description"), column
    page = f"SELECT p.id AS page_id, p.url AS url, NULL AS element, {{message}} AS message" \
           f" FROM pages p WHERE {OK_PAGE} AND {{where}}"
    shared = (f"SELECT p.id AS page_id, p.url AS url, NULL AS element,"
              f" printf('The {label} is shared by %d pages: %s', d.n, p.{column}) AS message"
              f" FROM (SELECT p.{column} AS value, count(*) AS n FROM pages p"
              f" WHERE {INTERNAL_HTML_INDEXED} AND p.status BETWEEN 200 AND 299"
              f" AND p.{column} != '' GROUP BY p.{column} HAVING n > 1) d"
              f" JOIN pages p ON p.{column} = d.value WHERE {OK_PAGE}")
    length = (f"printf('The {label} is %d characters long (%s): %s', length(p.{column}),"
              " {bound}, p." + column + ")")
    Texts = tuple[str, str, str, str]
    specs: tuple[tuple[str, Texts, str, dict[str, object]], ...] = (
        ("missing", missing, page.format(message=f"'No {label}'", where=f"p.{column} = ''"), {}),
        ("duplicate", duplicate, shared, {}),
        ("too-long", long, page.format(
            message=length.format(bound="'more than ' || :maximum"),
            where=f"length(p.{column}) > :maximum"), {"maximum": maximum}),
        ("too-short", short, page.format(
            message=length.format(bound="'fewer than ' || :minimum"),
            where=f"p.{column} != '' AND length(p.{column}) < :minimum"), {"minimum": minimum}),
    )
    return tuple(
        Check(id=f"{family}/{name}", title=title, explanation=explanation, fix=fix,
              priority=priority, category="content", sql=sql, params=params)
        for name, (title, explanation, fix, priority), sql, params in specs)


CHECKS: Final = metadata_checks(
    "title", "title", minimum=TITLE_MIN, maximum=TITLE_MAX, family="titles",
    missing=(
        "Title missing",
        ("The page has no <title> (or an empty one). The title is the page's name in search "
         "results, browser tabs, bookmarks and shared links; without one, search engines make "
         "one up and visitors cannot tell the tab apart."),
        ("Give the page a <title> that says what it is, unique on the site, with its most "
         "important words first."), "high"),
    duplicate=(
        "Duplicate titles",
        ("Several pages have exactly the same title. Search results then show the same line "
         "for different pages, and search engines may treat the pages as duplicates of each "
         "other."),
        ("Give each page a title of its own (what distinguishes it: the product, the article, "
         "the page number). Pages that are real duplicates should name one of them as their "
         "canonical instead."), "medium"),
    long=(
        "Title too long",
        (f"The title has more than {TITLE_MAX} characters: search results cut it off, and the "
         "words past the cut are not seen."),
        ("Shorten the title; put what distinguishes the page first and the site's name, if "
         "at all, last."), "low"),
    short=(
        "Title too short",
        (f"The title has fewer than {TITLE_MIN} characters: it probably does not say enough "
         "about the page to stand out in search results."),
        "Say more in the title: what the page is about, for whom, the site's name.", "low"),
)
