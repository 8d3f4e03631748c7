"""Links: broken internal and external links (one finding per broken target, with how often
and from how many pages it is linked), links to redirects, links with no text, and links whose
``#fragment`` finds no element on their page."""

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

_FRAGMENT_SQL: Final = f"""WITH fragments(page_id, target_id, hash, name) AS MATERIALIZED (
        SELECT DISTINCT a.page_id, a.href_id, a.hash, nitpicker_fragment_target(a.hash)
        FROM anchors a NOT INDEXED WHERE a.hash != ''  -- a scan: 8 times faster than the index
    )
    SELECT p.id AS page_id, p.url AS url, t.url || '#' || x.hash AS element,
        CASE WHEN e.status BETWEEN 200 AND 299
            THEN 'No element on ' || e.url || ' has the id (or <a name>) "' || x.name || '"'
            ELSE 'The page is missing: ' || e.url || CASE WHEN e.status = -1
                THEN ' could not be fetched' ELSE ' answers ' || e.status END
                || ', so its #' || x.hash || ' cannot be reached' END AS message
    FROM fragments x JOIN pages p ON p.id = x.page_id JOIN pages t ON t.id = x.target_id
        JOIN pages e ON e.id = coalesce(t.redirect_dest_id, t.id)
    WHERE x.name IS NOT NULL AND {OK_PAGE} AND t.is_external = 0 AND (
        e.status >= 400 OR e.status = -1
        OR e.status BETWEEN 200 AND 299
            AND EXISTS (SELECT 1 FROM page_content c WHERE c.page_id = e.id)
            AND NOT EXISTS (SELECT 1 FROM page_fragment_ids i
                            WHERE i.page_id = e.id AND i.name = x.name))"""
"""Links of a page to ``page#fragment`` (one finding per page and link target): the page is
missing (it, or the end of its redirects, answers an error or nothing), or it was read
(``page_content``: an in-scope HTML page, as rendered when the browser rendered it) and no
element has the fragment as its id or ``<a name>``. The links are read by a scan of
``anchors``: SQLite otherwise took the ``(href_id, page_id)`` index, read it whole and looked
each row up in the table (0.87 s against 0.11 s over 745,000 links). ``#``, ``#top``, text fragments and
routes (``#/about``) need no element (:func:`nitpicker.policy.fragments.fragment_target`)."""

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
    Check(
        id="links/broken-fragment",
        title="Links to missing page sections",
        explanation=(
            "Links point at a section of a page (page#section), but no element of that page "
            "has the id (or <a name>) the fragment names, or the page itself is missing. A "
            "visitor lands at the top of the page, or on an error, instead of the section. "
            "The ids are read from the page as the browser rendered it when rendering is on, "
            "so sections a script creates count; \"#\", \"#top\" and routes (#/about) are "
            "never broken. The message says which: the page or the section is missing."),
        fix=(
            "Point the link at the section's current id (headings' ids change when their "
            "text does), give the section back its id, or remove the fragment; for a missing "
            "page, correct the link as for a broken link."),
        priority="medium", category="links", sql=_FRAGMENT_SQL,
    ),
)
