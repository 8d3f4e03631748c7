"""Response codes: internal URLs that answer with a client error (4xx) or a server error
(5xx), and URLs the crawl could not fetch at all, by cause."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import Check

__all__ = ["CHECKS"]

_ANSWER: Final = "p.status || coalesce(' ' || nullif(p.status_text, ''), '')"

_ERROR_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'Answers ' || {_ANSWER} AS message
    FROM pages p
    WHERE p.status BETWEEN :low AND :high AND p.is_external = 0 AND p.redirect_dest_id IS NULL"""

_FETCH_ERROR_SQL: Final = """SELECT p.id AS page_id, p.url AS url,
        coalesce(nullif(p.status_text, ''), 'unknown error') AS element,
        'Could not be fetched: ' || coalesce(nullif(p.status_text, ''), 'unknown error')
            AS message
    FROM pages p WHERE p.status = -1 AND p.redirect_dest_id IS NULL
        AND coalesce(p.status_text, '') NOT LIKE 'Redirect loop:%'
        AND coalesce(p.status_text, '') NOT LIKE 'Too many redirects:%'"""
"""Fetch errors, the cause as the element (the URLs of one cause together); the redirect
loops and chains are the redirects family's."""

CHECKS: Final = (
    Check(
        id="status/server-error",
        title="Server errors (5xx)",
        explanation=(
            "Internal URLs that answered with a server error: the page is broken for every "
            "visitor, and search engines that see it again and again drop it from their "
            "index."),
        fix=(
            "Look up the URL in the server's error log at the time of the crawl and fix the "
            "cause; if the error came and went (an overloaded server), crawl more gently "
            "(--parallels, --interval) and check again."),
        priority="critical", category="links", sql=_ERROR_SQL, params={"low": 500, "high": 599},
    ),
    Check(
        id="status/client-error",
        title="Client errors (4xx)",
        explanation=(
            "Internal URLs that answered 404 Not Found, 410 Gone, 403 Forbidden or another "
            "client error. The crawl reached them through links, a sitemap or the list it "
            "was given, so someone else can too."),
        fix=(
            "Find what leads to the URL (its page detail: links in, and whether a sitemap "
            "lists it) and correct it, or restore the page, or redirect the URL to the page "
            "that replaced it."),
        priority="high", category="links", sql=_ERROR_SQL, params={"low": 400, "high": 499},
    ),
    Check(
        id="status/fetch-error",
        title="URLs that could not be fetched",
        explanation=(
            "The crawl got no HTTP answer from these URLs: the connection was refused or "
            "reset, the name did not resolve, the certificate was refused, the answer timed "
            "out or was too large. The element column is the cause, so one cause's URLs come "
            "together."),
        fix=(
            "Work cause by cause: a refused connection or a timeout on internal URLs usually "
            "means an overloaded or blocking server (crawl more gently, allow the crawler); a "
            "name that does not resolve or a bad certificate on external URLs means a link to "
            "correct."),
        priority="high", category="crawl", sql=_FETCH_ERROR_SQL,
    ),
)
