"""Redirects: loops, chains too long to follow, and chains of two hops or more that reach a
page.

The archive records where each redirect *ends* (``pages.redirect_dest_id``) and, since
migration ``0028_redirect_next``, its next hop (``pages.redirect_next``): the chains are walked
hop by hop in SQL, at most ``:max_hops`` hops. A chain the crawl gave up on is a fetch error
with its reason (:func:`nitpicker.spiders.redirects.ignored_as_error`): ``Redirect loop: …``
or ``Too many redirects: …``; a loop whose URLs were each met by a request of its own is a
circle of ``redirect_next``.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import Check

__all__ = ["CHECKS"]

MAX_HOPS: Final = 30
"""How far a chain is walked (Scrapy follows 10 hops in one request; a chain handed over from
request to request can be longer)."""

_GAVE_UP_SQL: Final = """SELECT p.id AS page_id, p.url AS url, NULL AS element,
        p.status_text AS message
    FROM pages p WHERE p.status = -1 AND p.status_text LIKE :reason"""


def _walk(starts: str) -> str:
    """The recursive walk of the chains from the redirect sources ``s`` that ``starts`` keeps:
    ``walk(start, at, hops, path, looped)``, ``at`` the URL reached after ``hops`` hops,
    ``path`` the URLs so far (``A → B → C``), ``looped`` when ``at`` was on it already."""
    return f"""WITH RECURSIVE walk(start, at, hops, path, looped) AS (
        SELECT s.id, s.redirect_next, 1, s.url || ' → ' || s.redirect_next,
            s.redirect_next = s.url
        FROM pages s WHERE s.redirect_next IS NOT NULL AND ({starts})
        UNION ALL
        SELECT w.start, n.redirect_next, w.hops + 1, w.path || ' → ' || n.redirect_next,
            instr(' → ' || w.path || ' → ', ' → ' || n.redirect_next || ' → ') > 0
        FROM walk w JOIN pages n ON n.url = w.at
        WHERE NOT w.looped AND n.redirect_next IS NOT NULL AND w.hops < :max_hops
    )"""


_CIRCLE_SQL: Final = f"""{_walk("1")}
    SELECT s.id AS page_id, s.url AS url, NULL AS element,
        'Redirects in a circle: ' || w.path AS message
    FROM walk w JOIN pages s ON s.id = w.start WHERE w.looped"""
"""Redirect sources whose chain comes back to a URL it passed (each met by its own request,
so no request gave up)."""

_ENTRY: Final = """EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = s.id)
        OR s.in_sitemap = 1 OR s.in_inventory = 1
        OR NOT EXISTS (SELECT 1 FROM pages o WHERE o.redirect_next = s.url)"""
"""Where a chain starts: a URL a page links to, a sitemap or the inventory lists, or that no
other redirect leads to (a chain's middle hops are not chains of their own)."""

_CHAIN_SQL: Final = f"""{_walk(_ENTRY)}
    SELECT s.id AS page_id, s.url AS url, NULL AS element,
        w.hops || ' redirects before ' || w.at
            || CASE WHEN f.status BETWEEN 200 AND 299 THEN ''
                WHEN f.status = -1 THEN ' (which could not be fetched)'
                WHEN f.status IS NULL THEN ' (not fetched)'
                ELSE ' (which answers ' || f.status || ')' END
            || ': ' || w.path AS message
    FROM walk w JOIN pages s ON s.id = w.start JOIN pages f ON f.url = w.at
    WHERE w.hops >= :min_hops AND NOT w.looped AND f.redirect_next IS NULL
        AND f.redirect_dest_id IS NULL"""

CHECKS: Final = (
    Check(
        id="redirects/loop",
        title="Redirect loops",
        explanation=(
            "These URLs redirect in a circle (A to B to A): no browser or search engine ever "
            "reaches a page, and a visitor sees \"too many redirects\"."),
        fix=(
            "Follow the URL's redirects (curl -IL URL) and correct the rule that sends it "
            "back: often a trailing-slash, http/https or www rule that another rule undoes."),
        priority="high", category="links", sql=f"{_CIRCLE_SQL} UNION {_GAVE_UP_SQL}",
        params={"reason": "Redirect loop:%", "max_hops": MAX_HOPS},
    ),
    Check(
        id="redirects/too-many",
        title="Redirect chains too long to follow",
        explanation=(
            "These URLs redirect more times than the crawl follows (REDIRECT_MAX_TIMES, 10 "
            "unless set) before reaching a page. Browsers give up at about the same "
            "number, search engines sooner (Google follows up to 10 hops)."),
        fix=(
            "Make each URL redirect once, straight to its final page; update the rules that "
            "redirect to other redirects."),
        priority="high", category="links", sql=_GAVE_UP_SQL,
        params={"reason": "Too many redirects:%"},
    ),
    Check(
        id="redirects/chain",
        title="Redirect chains",
        explanation=(
            "These URLs redirect to another redirect before reaching a page (A to B to C). "
            "Each hop costs visitors a round trip, and search engines follow only a few hops "
            "and may pass less of a link's weight along a chain. Chains grow as a site moves "
            "(http to https, a new URL scheme), each move redirecting to the last. Each "
            "finding is where a chain starts: a URL linked from a page, listed in a sitemap "
            "or the inventory, or that no other redirect leads to."),
        fix=(
            "Make the first URL redirect straight to the final one (the message lists the "
            "hops), and point the site's links and sitemaps at the final URL."),
        priority="medium", category="links", sql=_CHAIN_SQL,
        params={"min_hops": 2, "max_hops": MAX_HOPS},
    ),
)
