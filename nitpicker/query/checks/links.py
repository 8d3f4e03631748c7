"""Links: broken internal and external links (one finding per broken target, with how often
and from how many pages it is linked), links to redirects, and links with no text."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check, counted

__all__ = ["CHECKS"]

_LINKED: Final = """(SELECT count(*) FROM anchors a WHERE a.href_id = t.id)"""
_LINKING_PAGES: Final = """(SELECT count(DISTINCT a.page_id) FROM anchors a WHERE a.href_id = t.id)"""
_LINKED_FROM: Final = (f"'; linked ' || {counted(_LINKED, 'time')} || ' from '"
                       f" || {counted(_LINKING_PAGES, 'page')}")

_BROKEN_SQL: Final = f"""WITH broken(id) AS MATERIALIZED (
        SELECT id FROM pages WHERE status >= 400
        UNION ALL SELECT id FROM pages WHERE status = -1
    ), targets(id) AS MATERIALIZED (
        SELECT id FROM broken
        UNION ALL SELECT r.id FROM broken b JOIN pages r ON r.redirect_dest_id = b.id
    )
    SELECT t.id AS page_id, t.url AS url, NULL AS element,
        CASE WHEN coalesce(f.status, t.status) = -1
            THEN 'Could not be fetched (' || coalesce(coalesce(f.status_text, t.status_text),
                                                     'no answer') || ')'
            ELSE 'Answers ' || coalesce(f.status, t.status)
                || coalesce(' ' || nullif(coalesce(f.status_text, t.status_text), ''), '') END
        || CASE WHEN f.id IS NULL THEN '' ELSE ' at the end of its redirects (' || f.url || ')'
            END || {_LINKED_FROM} AS message
    FROM targets x JOIN pages t ON t.id = x.id LEFT JOIN pages f ON f.id = t.redirect_dest_id
    WHERE t.is_external = :external AND EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = t.id)"""
"""URLs answering >= 400 or not at all (status -1), directly or at the end of their redirects,
that a crawled page links to (the query's ``list_broken_links`` targets)."""

_TO_REDIRECT_SQL: Final = f"""SELECT t.id AS page_id, t.url AS url, NULL AS element,
        'Redirects (' || coalesce(t.status, '?') || ') to ' || f.url || {_LINKED_FROM} AS message
    FROM pages t JOIN pages f ON f.id = t.redirect_dest_id
    WHERE t.is_external = 0 AND f.status BETWEEN 200 AND 399
        AND EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = t.id)"""
"""Internal URLs that redirect to a page that answers, and that pages link to."""

_NO_TEXT_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, t.url AS element,
        'A link to ' || t.url || ' has no text' || CASE WHEN count(*) > 1
            THEN printf(' (%d links)', count(*)) ELSE '' END AS message
    FROM pages p JOIN anchors a ON a.page_id = p.id JOIN pages t ON t.id = a.href_id
    WHERE {OK_PAGE} AND a.text = ''
    GROUP BY p.id, t.id"""
"""Links whose text is empty: no words, no ``alt`` of an image inside (the crawl's anchor
text), grouped by page and target."""

CHECKS: Final = (
    Check(
        id="links/broken-internal",
        title="Broken internal links",
        explanation=(
            "Pages of the site link to URLs of the site that answer with an error (4xx, 5xx) "
            "or do not answer at all. Visitors who follow them land on an error page, and "
            "search engines waste their crawl on them. Each finding is one broken URL, with "
            "how many links lead to it and from how many pages."),
        fix=(
            "Open the URL's page detail to see the pages that link to it (Links in), then "
            "correct or remove those links, or bring the URL back (or redirect it to the page "
            "that replaced it)."),
        priority="high", category="links", sql=_BROKEN_SQL, params={"external": 0},
    ),
    Check(
        id="links/broken-external",
        title="Broken external links",
        explanation=(
            "Pages of the site link to other sites' URLs that answer with an error or do not "
            "answer. Visitors hit a dead end, and a page full of dead links looks abandoned. "
            "Each finding is one broken URL, with how many links lead to it."),
        fix=(
            "Find the pages that link to the URL (its page detail, Links in) and point the "
            "links at the resource's current address, or remove them. A URL that fails only "
            "now and then (a timeout) may be fine: check it again before editing."),
        priority="medium", category="links", sql=_BROKEN_SQL, params={"external": 1},
    ),
    Check(
        id="links/to-redirect",
        title="Internal links to redirects",
        explanation=(
            "Pages of the site link to internal URLs that redirect. Each link costs visitors "
            "an extra request and search engines an extra hop, and it keeps an old address "
            "alive in the site's own markup."),
        fix=(
            "Change the links to point straight at the URL the redirect ends at (given in the "
            "message); keep the redirect for links from elsewhere."),
        priority="low", category="links", sql=_TO_REDIRECT_SQL,
    ),
    Check(
        id="links/no-text",
        title="Links without text",
        explanation=(
            "A link with no text (no words, and no image with an alt text inside) is "
            "announced by screen readers as just \"link\" or as its address: nobody can tell "
            "where it goes. Search engines also use a link's text to know what its target is "
            "about."),
        fix=(
            "Give each link visible text, or an alt text on the image it wraps. An empty link "
            "left over from a template (a placeholder, an icon) can usually be removed. The "
            "check reads the link's text and its images' alt texts: a link named only by "
            "aria-label is listed too."),
        priority="medium", category="accessibility", sql=_NO_TEXT_SQL,
    ),
)
