"""Indexing: noindex pages that the site links to or lists in a sitemap, and pages that only
a sitemap or the crawl's inventory knows (no crawled page links to them)."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import PAGE, Check, counted

__all__ = ["CHECKS"]

_LINKS_IN: Final = "(SELECT count(*) FROM anchors a WHERE a.href_id = p.id AND a.page_id != p.id)"
_LINKING_PAGES: Final = ("(SELECT count(DISTINCT a.page_id) FROM anchors a"
                         " WHERE a.href_id = p.id AND a.page_id != p.id)")

_NOINDEX_LINKED_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'noindex, but linked ' || {counted(_LINKS_IN, 'time')} || ' from '
            || {counted(_LINKING_PAGES, 'page')} AS message
    FROM pages p WHERE {PAGE} AND p.noindex = 1 AND {_LINKS_IN} > 0"""

_NOINDEX_SITEMAP_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'noindex, but listed in a sitemap' AS message
    FROM pages p WHERE {PAGE} AND p.noindex = 1 AND p.in_sitemap = 1"""

_ORPHAN_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        CASE WHEN p.in_sitemap = 1 AND p.in_inventory = 1 THEN 'Listed in a sitemap and in the inventory'
            WHEN p.in_sitemap = 1 THEN 'Listed in a sitemap' ELSE 'Listed in the inventory' END
        || ', but no crawled page links to it' AS message
    FROM pages p WHERE {PAGE} AND (p.in_sitemap = 1 OR p.in_inventory = 1)
        AND NOT EXISTS (SELECT 1 FROM anchors a WHERE a.href_id = p.id AND a.page_id != p.id)
        AND NOT EXISTS (SELECT 1 FROM pages r JOIN anchors a ON a.href_id = r.id
                        WHERE r.redirect_dest_id = p.id AND a.page_id != p.id)
        AND p.url NOT IN (SELECT value FROM info, json_each(info.roots))"""
"""The orphans of ``query links --type orphaned`` that a sitemap or ``--inventory`` lists:
pages that exist but that no link of the crawled site leads to (the crawl's roots aside)."""

CHECKS: Final = (
    Check(
        id="indexing/noindex-in-sitemap",
        title="Noindex pages in a sitemap",
        explanation=(
            "A sitemap asks search engines to index these pages, and the pages themselves "
            "forbid it (robots noindex). The contradiction wastes crawl budget, and one of "
            "the two is a mistake."),
        fix=(
            "Decide per page: remove noindex from pages that should be found, or remove from "
            "the sitemap the pages that should not."),
        priority="medium", category="indexing", sql=_NOINDEX_SITEMAP_SQL,
    ),
    Check(
        id="indexing/noindex-linked",
        title="Noindex pages linked from the site",
        explanation=(
            "The site links to pages that ask not to be indexed (robots noindex). Often "
            "intended (a login page, a cart), sometimes a leftover from a staging site that "
            "keeps real content out of search results."),
        fix=(
            "Check that each page is meant to stay out of search results; remove the noindex "
            "from those that are not."),
        priority="low", category="indexing", sql=_NOINDEX_LINKED_SQL,
    ),
    Check(
        id="indexing/orphan",
        title="Orphan pages (in a sitemap or inventory, not linked)",
        explanation=(
            "These pages exist and a sitemap (or the list of known URLs given with "
            "--inventory) names them, but no crawled page links to them: visitors cannot "
            "reach them by navigating, and search engines give them little weight."),
        fix=(
            "Link each page from where it belongs (a menu, a category page, related "
            "articles); remove from the sitemap the pages that should no longer exist."),
        priority="medium", category="indexing", sql=_ORPHAN_SQL,
    ),
)
