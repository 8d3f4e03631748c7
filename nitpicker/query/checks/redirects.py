"""Redirects: loops and chains too long to follow.

The archive records where each redirect *ends* (``pages.redirect_dest_id``), not each hop's
next hop; a chain the crawl gave up on is a fetch error with its reason
(:func:`nitpicker.spiders.redirects.ignored_as_error`): ``Redirect loop: …`` or
``Too many redirects: …``.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import Check

__all__ = ["CHECKS"]

_GAVE_UP_SQL: Final = """SELECT p.id AS page_id, p.url AS url, NULL AS element,
        p.status_text AS message
    FROM pages p WHERE p.status = -1 AND p.status_text LIKE :reason"""

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
        priority="high", category="links", sql=_GAVE_UP_SQL,
        params={"reason": "Redirect loop:%"},
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
)
