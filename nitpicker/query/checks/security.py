"""Security: ``http:`` resources on ``https:`` pages (mixed content), and internal pages
served without the common security headers."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS", "SECURITY_HEADERS"]

_MIXED_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, r.url AS element,
        'Loads ' || r.url || ' over http' AS message
    FROM pages p JOIN resource_referrers rr ON rr.page_id = p.id
        JOIN resources r ON r.id = rr.resource_id
    WHERE {OK_PAGE} AND p.url LIKE 'https:%' AND r.url LIKE 'http:%'
    UNION
    SELECT p.id, p.url, i.src, 'Loads ' || i.src || ' over http'
    FROM pages p JOIN images i ON i.page_id = p.id
    WHERE {OK_PAGE} AND p.url LIKE 'https:%' AND i.src LIKE 'http:%'"""
"""The resources a browser loaded for the page (rendered crawls) and the images of its
markup (every crawl)."""

SECURITY_HEADERS: Final = (
    ("Content-Security-Policy", "1"),
    ("X-Content-Type-Options", "1"),
    ("X-Frame-Options", "1"),
    ("Strict-Transport-Security", "p.url LIKE 'https:%'"),
)
"""Each header, and when a page must have it (HSTS means something over https only)."""


def _missing_sql() -> str:
    parts = " || ".join(
        f"CASE WHEN {when} AND NOT EXISTS (SELECT 1 FROM response_headers h"
        f" WHERE h.page_id = p.id AND h.name = '{name}' COLLATE NOCASE)"
        f" THEN ', {name}' ELSE '' END"
        for name, when in SECURITY_HEADERS)  # names from the tuple above, never input
    return (f"SELECT page_id, url, NULL AS element, 'Served without ' || substr(missing, 3)"
            f" AS message FROM (SELECT p.id AS page_id, p.url AS url, {parts} AS missing"
            f" FROM pages p WHERE {OK_PAGE}) WHERE missing != ''")


CHECKS: Final = (
    Check(
        id="security/mixed-content",
        title="Mixed content (http resources on https pages)",
        explanation=(
            "These https pages load scripts, styles or images over plain http. Browsers "
            "block such scripts and styles (the page breaks) and mark the page as not fully "
            "secure; the http requests can be read and changed on the way."),
        fix=(
            "Load every resource over https (change http:// to https:// in the markup or the "
            "CMS's settings; a host without https needs replacing), or send "
            "Content-Security-Policy: upgrade-insecure-requests."),
        priority="high", category="security", sql=_MIXED_SQL,
    ),
    Check(
        id="security/missing-headers",
        title="Security headers missing",
        explanation=(
            "These pages are served without Content-Security-Policy, X-Content-Type-Options, "
            "X-Frame-Options or (over https) Strict-Transport-Security: the browser's "
            "defences against injected scripts, content sniffing, clickjacking and downgrade "
            "attacks stay off."),
        fix=(
            "Send the headers from the web server or CDN for every page (one setting, not "
            "per page): start with X-Content-Type-Options: nosniff, X-Frame-Options: "
            "SAMEORIGIN and HSTS, then a Content-Security-Policy in report-only mode."),
        priority="low", category="security", sql=_missing_sql(),
    ),
)
