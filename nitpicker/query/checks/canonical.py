"""Canonical URLs (``<link rel=canonical>``) of the internal pages that answered 2xx: missing,
relative, not http(s), pointing at another page, at a URL that does not answer 200, or at
something that is not HTML.

The archive holds each canonical resolved against its page (``pages.canonical``, and
``pages.canonical_relative`` when it was written relative: migration ``0020_findings``); it is
looked up among the archive's URLs, and a canonical the crawl never fetched is judged only by
its form.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS"]

_SCHEME: Final = "nitpicker_url_scheme(p.canonical)"
_HTTP: Final = f"{_SCHEME} IN ('http', 'https')"
_RESOLVED: Final = "nitpicker_resolve_url(p.url, p.canonical)"


def _sql(where: str, message: str, join: str = "") -> str:
    return (f"SELECT p.id AS page_id, p.url AS url, NULL AS element, {message} AS message"
            f" FROM pages p {join} WHERE {OK_PAGE} AND {where}")


_TARGET: Final = f"JOIN pages c ON c.url = {_RESOLVED}"
"""The canonical's row (an inner join: a URL the crawl never met is not judged)."""

CHECKS: Final = (
    Check(
        id="canonical/missing",
        title="Canonical missing",
        explanation=(
            "The page has no <link rel=\"canonical\">. Without one, search engines choose "
            "themselves which of a page's addresses (with or without parameters, a trailing "
            "slash, http or https) to index, and may split its ranking between them."),
        fix=(
            "Add <link rel=\"canonical\" href=\"…\"> to the page's <head>, with the page's own "
            "absolute https URL (a self-referencing canonical), usually from the site's "
            "template."),
        priority="low", category="indexing",
        sql=_sql("p.canonical = ''", "'No <link rel=\"canonical\">'"),
    ),
    Check(
        id="canonical/not-http",
        title="Canonical is not an http(s) URL",
        explanation=(
            "The page's canonical names a file:, javascript:, mailto: or other non-web URL. "
            "Search engines ignore it at best; the page then has no valid canonical, and a "
            "template that writes it usually writes it on every page."),
        fix=(
            "Correct the template or setting that writes the canonical (often a base URL "
            "configured for a local build) so that it writes the page's public https URL."),
        priority="high", category="indexing",
        sql=_sql(f"p.canonical != '' AND {_SCHEME} != '' AND NOT {_HTTP}",
                 "'rel=canonical is a ' || " + _SCHEME + " || ': URL: ' || p.canonical"),
    ),
    Check(
        id="canonical/relative",
        title="Canonical is a relative URL",
        explanation=(
            "The page's canonical is a relative URL (/page, page.html, //host/page). Search "
            "engines resolve it against the address they fetched, which may be a duplicate "
            "address itself: the canonical then points at the duplicate."),
        fix="Write the canonical as an absolute URL, scheme and host included.",
        priority="low", category="indexing",
        sql=_sql("p.canonical != '' AND p.canonical_relative = 1",
                 "'rel=canonical is written relative (resolved: ' || p.canonical || ')'"),
    ),
    Check(
        id="canonical/elsewhere",
        title="Canonical points to another page",
        explanation=(
            "The page declares another URL as its canonical: search engines are asked to "
            "index that URL instead of this one. Right for duplicates (a print version, a URL "
            "with tracking parameters), wrong for a page that should be found on its own."),
        fix=(
            "Check that each listed page is really a duplicate of its canonical; for a page "
            "that should be indexed, make its canonical its own URL."),
        priority="info", category="indexing",
        sql=_sql(f"p.canonical != '' AND {_HTTP} AND {_RESOLVED} != p.url",
                 f"'rel=canonical points to ' || {_RESOLVED}"),
    ),
    Check(
        id="canonical/not-ok",
        title="Canonical points to a URL that does not answer 200",
        explanation=(
            "The page's canonical names a URL that answers with an error, a redirect or "
            "nothing. Search engines cannot index a canonical that is not a page, and may "
            "ignore it or drop both."),
        fix=(
            "Point the canonical at the final URL of a page that answers 200 (follow the "
            "redirect; replace the missing page's URL)."),
        priority="high", category="indexing",
        sql=_sql(f"p.canonical != '' AND {_HTTP} AND {_RESOLVED} != p.url"
                 " AND c.status IS NOT NULL AND (c.status != 200 OR c.redirect_dest_id IS NOT NULL)",
                 "'rel=canonical points to ' || c.url || CASE WHEN c.status = -1"
                 " THEN ', which could not be fetched' WHEN c.redirect_dest_id IS NOT NULL"
                 " THEN ', which redirects' ELSE ', which answers ' || c.status END", _TARGET),
    ),
    Check(
        id="canonical/not-html",
        title="Canonical points to something that is not HTML",
        explanation=(
            "The page's canonical names a URL that answers 200 with an image, a PDF or another "
            "file that is not a web page."),
        fix="Point the canonical at the HTML page itself (usually its own URL).",
        priority="medium", category="indexing",
        sql=_sql(f"p.canonical != '' AND {_HTTP} AND c.status = 200"
                 " AND c.redirect_dest_id IS NULL AND c.content_type IS NOT NULL"
                 " AND c.content_type != 'text/html'",
                 "'rel=canonical points to ' || c.url || ', which is ' || c.content_type",
                 _TARGET),
    ),
)
