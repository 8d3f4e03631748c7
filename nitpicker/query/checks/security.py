"""Security: mixed content (``http:`` resources and forms on ``https:`` pages), HSTS missing
or short, cookies set without ``Secure``, ``HttpOnly`` or ``SameSite`` over https, TLS
certificates that are not valid or expire soon, and internal pages served without the common
security headers.

The certificates are the crawl's look at each https origin of its scope
(:mod:`nitpicker.crawl.tls_probe`, ``tls_certificates``); the cookies and HSTS are read from
the pages' response headers; the forms from ``pages.http_form_action``.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS", "HSTS_MIN_AGE", "SECURITY_HEADERS", "TLS_EXPIRY_DAYS"]

HSTS_MIN_AGE: Final = 31_536_000
"""The shortest HSTS ``max-age`` not reported: one year (what browsers' preload lists ask)."""
TLS_EXPIRY_DAYS: Final = 30
"""A certificate that ends within this many days of the crawl is reported."""

_MIXED_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, r.url AS element,
        'Loads ' || r.url || ' over http' AS message
    FROM pages p JOIN resource_referrers rr ON rr.page_id = p.id
        JOIN resources r ON r.id = rr.resource_id
    WHERE {OK_PAGE} AND p.url LIKE 'https:%' AND r.url LIKE 'http:%'
    UNION
    SELECT p.id, p.url, i.src, 'Loads ' || i.src || ' over http'
    FROM pages p JOIN images i ON i.page_id = p.id
    WHERE {OK_PAGE} AND p.url LIKE 'https:%' AND i.src LIKE 'http:%'
    UNION
    SELECT p.id, p.url, p.http_form_action, 'A form submits to ' || p.http_form_action
        || ' over http'
    FROM pages p WHERE {OK_PAGE} AND p.http_form_action IS NOT NULL"""
"""The resources a browser loaded for the page (rendered crawls), the images of its markup
(every crawl) and the first form that submits over http."""

SECURITY_HEADERS: Final = (
    ("Content-Security-Policy", "1"),
    ("X-Content-Type-Options", "1"),
    ("X-Frame-Options", "1"),
)
"""Each header, and when a page must have it (``Strict-Transport-Security`` is
``security/hsts``'s)."""


def _missing_sql() -> str:
    parts = " || ".join(
        f"CASE WHEN {when} AND NOT EXISTS (SELECT 1 FROM response_headers h"
        f" WHERE h.page_id = p.id AND h.name = '{name}' COLLATE NOCASE)"
        f" THEN ', {name}' ELSE '' END"
        for name, when in SECURITY_HEADERS)  # names from the tuple above, never input
    return (f"SELECT page_id, url, NULL AS element, 'Served without ' || substr(missing, 3)"
            f" AS message FROM (SELECT p.id AS page_id, p.url AS url, {parts} AS missing"
            f" FROM pages p WHERE {OK_PAGE}) WHERE missing != ''")


_HSTS: Final = ("(SELECT h.value FROM response_headers h WHERE h.page_id = p.id"
                " AND h.name = 'strict-transport-security' COLLATE NOCASE ORDER BY h.rowid LIMIT 1)")

_HSTS_SQL: Final = f"""SELECT page_id, url, NULL AS element,
        CASE WHEN hsts IS NULL THEN 'Served without Strict-Transport-Security'
            WHEN age IS NULL THEN 'Strict-Transport-Security without a valid max-age: ' || hsts
            ELSE printf('Strict-Transport-Security max-age=%d (%d days): shorter than a year',
                        age, age / 86400) END AS message
    FROM (SELECT p.id AS page_id, p.url AS url, {_HSTS} AS hsts,
            nitpicker_hsts_max_age({_HSTS}) AS age
          FROM pages p WHERE {OK_PAGE} AND p.url LIKE 'https:%')
    WHERE hsts IS NULL OR age IS NULL OR age < :min_age"""

_COOKIES: Final = """FROM pages p JOIN response_headers h ON h.page_id = p.id
        AND h.name = 'set-cookie' COLLATE NOCASE
    WHERE p.scraped = 1 AND p.is_external = 0 AND p.url LIKE 'https:%'"""
"""Each cookie an in-scope https response sets (any content type)."""


def _cookie_sql(lacking: str) -> str:
    """The cookies set without one of the attributes ``lacking`` (SQL: ``missing`` holds what
    the cookie lacks, ``Secure, HttpOnly, SameSite`` at most), one finding per page and
    cookie."""
    return (f"SELECT page_id, url, name AS element, 'Sets the cookie ' || name || ' without '"
            f" || {lacking} AS message FROM (SELECT p.id AS page_id, p.url AS url,"
            " nitpicker_cookie_name(h.value) AS name,"
            f" nitpicker_cookie_missing(h.value) AS missing {_COOKIES})"
            f" WHERE {lacking} != '' GROUP BY page_id, name")


_NOT_SECURE: Final = "CASE WHEN instr(missing, 'Secure') THEN 'Secure' ELSE '' END"
_NOT_PROTECTED: Final = "ltrim(replace(replace(missing, 'Secure', ''), ', , ', ', '), ', ')"
"""What the cookie lacks but ``Secure``: ``HttpOnly``, ``SameSite`` or both."""

_CERTIFICATE: Final = """SELECT (SELECT id FROM pages WHERE url = c.origin || '/') AS page_id,
        c.origin || '/' AS url, NULL AS element, {message} AS message
    FROM tls_certificates c WHERE {where}"""

_DAYS_LEFT: Final = "CAST(julianday(c.not_after) - julianday(c.checked_at) AS INTEGER)"

CHECKS: Final = (
    Check(
        id="security/mixed-content",
        title="Mixed content (http resources and forms on https pages)",
        explanation=(
            "These https pages load scripts, styles or images over plain http, or have a "
            "form that submits over plain http. Browsers block such scripts and styles (the "
            "page breaks), mark the page as not fully secure, and warn before sending a "
            "form; the http requests can be read and changed on the way."),
        fix=(
            "Load every resource and submit every form over https (change http:// to "
            "https:// in the markup or the CMS's settings; a host without https needs "
            "replacing), or send Content-Security-Policy: upgrade-insecure-requests."),
        priority="high", category="security", sql=_MIXED_SQL,
    ),
    Check(
        id="security/hsts",
        title="HSTS missing or short",
        explanation=(
            "These https pages are served without Strict-Transport-Security, with one that "
            "has no valid max-age, or with a max-age shorter than a year. Without it a "
            "visitor's first request, and every link written http://, can be intercepted "
            "and downgraded to plain http."),
        fix=(
            "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the web "
            "server or CDN for every https response (once every subdomain serves https)."),
        priority="medium", category="security", sql=_HSTS_SQL,
        params={"min_age": HSTS_MIN_AGE},
    ),
    Check(
        id="security/cookie-not-secure",
        title="Cookies without Secure on https",
        explanation=(
            "An https page sets a cookie without the Secure attribute: the browser also sends "
            "it over plain http, where anyone on the way can read it (a session cookie "
            "read is a session taken). A SameSite=None cookie without Secure is refused by "
            "browsers outright."),
        fix="Set every cookie of an https site with Secure (the application's or framework's cookie settings).",
        priority="medium", category="security", sql=_cookie_sql(_NOT_SECURE),
    ),
    Check(
        id="security/cookie-attributes",
        title="Cookies without HttpOnly or SameSite",
        explanation=(
            "An https page sets a cookie without HttpOnly (any script on the page, an "
            "injected one too, can read it) or without SameSite (the browser's default then "
            "decides whether other sites' requests carry it). A cookie that scripts must "
            "read needs no HttpOnly."),
        fix=(
            "Set HttpOnly on every cookie scripts do not read, and SameSite=Lax (or Strict) "
            "unless another site must send it."),
        priority="low", category="security", sql=_cookie_sql(_NOT_PROTECTED),
    ),
    Check(
        id="security/tls-invalid",
        title="TLS certificate not valid",
        explanation=(
            "The certificate of this https origin is refused by a browser's verification: "
            "expired, self-signed, for another host name, or with its chain incomplete. "
            "Browsers show a full-page warning instead of the site, and most visitors leave."),
        fix=(
            "Install a valid certificate for the host name, with its intermediate "
            "certificates, and renew it automatically (ACME, e.g. Let's Encrypt)."),
        priority="critical", category="security",
        sql=_CERTIFICATE.format(
            message="'The certificate of ' || c.origin || ' is not valid: ' || c.error"
                    " || coalesce(' (valid until ' || c.not_after || ')', '')",
            where="c.error IS NOT NULL"),
    ),
    Check(
        id="security/tls-expiring",
        title="TLS certificate expiring soon",
        explanation=(
            "The certificate of this https origin ends within 30 days of the crawl. Once it "
            "has, browsers refuse the site."),
        fix="Renew the certificate, and make its renewal automatic.",
        priority="high", category="security",
        sql=_CERTIFICATE.format(
            message="'The certificate of ' || c.origin || ' expires on ' || date(c.not_after)"
                    f" || ', ' || {_DAYS_LEFT} || ' days after the crawl'",
            where=f"c.error IS NULL AND c.not_after IS NOT NULL AND {_DAYS_LEFT} < :days"),
        params={"days": TLS_EXPIRY_DAYS},
    ),
    Check(
        id="security/missing-headers",
        title="Security headers missing",
        explanation=(
            "These pages are served without Content-Security-Policy, X-Content-Type-Options "
            "or X-Frame-Options: the browser's defences against injected scripts, content "
            "sniffing and clickjacking stay off (Strict-Transport-Security is "
            "security/hsts)."),
        fix=(
            "Send the headers from the web server or CDN for every page (one setting, not "
            "per page): start with X-Content-Type-Options: nosniff and X-Frame-Options: "
            "SAMEORIGIN, then a Content-Security-Policy in report-only mode."),
        priority="low", category="security", sql=_missing_sql(),
    ),
)
