"""Sitemaps: the URLs the sitemaps list that are no indexable page of theirs (an error, a
redirect, canonicalised elsewhere, outside the sitemap's scope), the indexable pages no sitemap
lists, and sitemap documents too large or unreadable.

Read from the sitemap documents the crawl asked for and the URLs each lists (``sitemaps``,
``sitemap_urls``: migration ``0029_site_audit``, so an archive crawled before it has none of
these findings but the missing pages). A listed URL is judged by its row: one the crawl did
not fetch (out of the crawl's scope, excluded) by its place only. A noindex page in a
sitemap is ``indexing/noindex-in-sitemap``.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS", "MAX_BYTES", "MAX_URLS"]

MAX_URLS: Final = 50_000
"""The most URLs (or sitemaps, for an index) one sitemap document may list (sitemaps.org)."""
MAX_BYTES: Final = 52_428_800
"""The largest a sitemap document may be, uncompressed: 50 MB (sitemaps.org)."""

_LISTED: Final = """SELECT p.id AS page_id, p.url AS url, d.url AS element,
        'Listed in ' || d.url || ', but ' || {message} AS message
    FROM sitemap_urls su JOIN pages p ON p.id = su.page_id JOIN sitemaps d ON d.id = su.sitemap_id
    WHERE {where}"""
"""Each listing of a URL by a sitemap; the sitemap is the element (what to edit)."""

_CANONICALISED: Final = ("p.canonical != '' AND p.canonical != p.url"
                         " AND nitpicker_url_scheme(p.canonical) IN ('http', 'https')"
                         " AND nitpicker_resolve_url(p.url, p.canonical) != p.url")
"""As the hreflang checks' (the functions only where the canonical differs as written)."""

_ORIGIN: Final = "substr({url}, 1, instr(substr({url}, 9), '/') + 7)"
"""``scheme://host:port`` of an absolute http(s) URL (the archive's form: a path always)."""

_DOCUMENT: Final = """SELECT (SELECT id FROM pages WHERE url = d.url) AS page_id, d.url AS url,
        NULL AS element, {message} AS message FROM sitemaps d WHERE {where}"""

_TOO_LARGE_SQL: Final = (
    _DOCUMENT.format(
        message="printf('Lists %,d %s: a sitemap may list at most %,d', d.entries,"
                " CASE d.kind WHEN 'sitemapindex' THEN 'sitemaps' ELSE 'URLs' END, :max_urls)",
        where="d.entries > :max_urls")
    + " UNION ALL "
    + _DOCUMENT.format(
        message="printf('More than 50 MB uncompressed (%,d bytes or more): a sitemap may be"
                " at most %,d bytes', d.size, :max_bytes)",
        where="d.size > :max_bytes"))

CHECKS: Final = (
    Check(
        id="sitemaps/not-ok",
        title="Sitemap URLs that do not answer 2xx",
        explanation=(
            "A sitemap lists URLs that answer with an error or not at all. A sitemap should "
            "list only the pages to index: search engines that find errors in it trust it "
            "less, and spend their crawl on dead URLs."),
        fix=(
            "Remove the URLs from the sitemap (the element), or bring the pages back; a "
            "sitemap generated from the site's content usually has a stale cache or a "
            "filter missing."),
        priority="high", category="indexing",
        sql=_LISTED.format(
            message="CASE WHEN p.status = -1 THEN 'could not be fetched'"
                    " ELSE 'answers ' || p.status END",
            where="p.status IS NOT NULL AND p.redirect_dest_id IS NULL"
                  " AND NOT p.status BETWEEN 200 AND 299"),
    ),
    Check(
        id="sitemaps/redirect",
        title="Sitemap URLs that redirect",
        explanation=(
            "A sitemap lists URLs that redirect. Search engines want the final URL of each "
            "page in a sitemap; a redirecting one costs them a hop and is not indexed as "
            "listed."),
        fix="List the URL each one redirects to (in the message) instead.",
        priority="medium", category="indexing",
        sql=_LISTED.format(
            message="'redirects to ' || (SELECT f.url FROM pages f WHERE f.id = p.redirect_dest_id)",
            where="p.redirect_dest_id IS NOT NULL"),
    ),
    Check(
        id="sitemaps/canonicalised",
        title="Sitemap URLs canonicalised elsewhere",
        explanation=(
            "A sitemap lists pages whose canonical is another URL: the sitemap asks search "
            "engines to index the page, the page asks them to index another. A sitemap "
            "should list canonical URLs only."),
        fix="List the canonical URL instead, or correct the page's canonical.",
        priority="medium", category="indexing",
        sql=_LISTED.format(
            message="'its canonical is ' || nitpicker_resolve_url(p.url, p.canonical)",
            where=f"{OK_PAGE} AND {_CANONICALISED}"),
    ),
    Check(
        id="sitemaps/out-of-scope",
        title="Sitemap URLs outside the sitemap's scope",
        explanation=(
            "A sitemap may list only URLs of its own scheme, host and port, under its own "
            "directory (a sitemap at /blog/sitemap.xml lists /blog/ URLs); one named in a "
            "robots.txt may list any URL of that robots.txt's site. Search engines ignore "
            "the URLs outside: often the http or non-www form of the site's URLs."),
        fix=(
            "List each URL in a sitemap of its own site and directory, written as the site "
            "serves it (scheme and host included); move the sitemap up, or name it in the "
            "robots.txt of the site its URLs are on."),
        priority="medium", category="indexing",
        sql=_LISTED.format(
            message="nitpicker_sitemap_scope(d.url, d.found_in, p.url)",
            where="nitpicker_sitemap_scope(d.url, d.found_in, p.url) != ''"),
    ),
    Check(
        id="sitemaps/missing-page",
        title="Indexable pages missing from the sitemaps",
        explanation=(
            "These pages answer 2xx, are not noindex and are their own canonical, on a site "
            "whose sitemaps list other pages, but no sitemap lists them. Search engines may "
            "find them later, or not at all when few links lead to them."),
        fix=(
            "Add them to the sitemap (a generated sitemap may filter them out by mistake), "
            "or make them noindex or canonicalised if they should not be found."),
        priority="low", category="indexing",
        sql=(f"SELECT p.id AS page_id, p.url AS url, NULL AS element,"
             " 'Indexable, but listed in no sitemap' AS message FROM pages p"
             f" WHERE {OK_PAGE} AND p.in_sitemap = 0 AND p.noindex = 0 AND NOT ({_CANONICALISED})"
             f" AND {_ORIGIN.format(url='p.url')} IN (SELECT DISTINCT"
             f" {_ORIGIN.format(url='s.url')} FROM pages s WHERE s.in_sitemap = 1)"),
    ),
    Check(
        id="sitemaps/too-large",
        title="Sitemaps over 50,000 URLs or 50 MB",
        explanation=(
            "A sitemap document may list at most 50,000 URLs and be at most 50 MB (52,428,800 "
            "bytes) uncompressed; search engines reject a larger one whole, or read only its "
            "start."),
        fix="Split it into several sitemaps listed by a sitemap index.",
        priority="high", category="indexing", sql=_TOO_LARGE_SQL,
        params={"max_urls": MAX_URLS, "max_bytes": MAX_BYTES},
    ),
    Check(
        id="sitemaps/unreadable",
        title="Sitemaps that cannot be read",
        explanation=(
            "A robots.txt or a sitemap index names these sitemaps, but they answer with an "
            "error, cannot be parsed as a sitemap, or are larger than the crawl reads "
            "(NITPICKER_SITEMAP_MAX_BYTES): search engines cannot read what the first two "
            "list. A /sitemap.xml the crawl only guessed is not judged."),
        fix=(
            "Open the URL: serve the sitemap (or remove the line that names it), as XML of "
            "the sitemaps.org schema, gzip-compressed or not."),
        priority="medium", category="indexing",
        sql=_DOCUMENT.format(
            message="'Not read (' || d.error || '); named in ' || d.found_in",
            where="d.error IS NOT NULL AND d.found_in IS NOT NULL"
                  " AND NOT coalesce(d.size > :max_bytes, 0)"),
        params={"max_bytes": MAX_BYTES},
    ),
)
