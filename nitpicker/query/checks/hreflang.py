"""hreflang: the language alternates of the internal pages that answered 2xx
(``<link rel=alternate hreflang>``, ``hreflang_links``): invalid language codes, no
self-reference, no ``x-default``, alternates that do not name the page back, and alternates
that are no indexable page (an error, a redirect, noindex, canonicalised elsewhere).

An alternate is judged by the archive's row of its URL: one the crawl never fetched (no link
leads to it, or the crawl stopped first) is judged by its code only. The return links are
read from the alternate's own hreflang tags, which the crawl records for out-of-scope pages
too (their ``<head>``, within ``NITPICKER_METADATA_BYTES``).
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS"]

_FROM: Final = f"FROM pages p JOIN hreflang_links h ON h.page_id = p.id WHERE {OK_PAGE}"
"""Each hreflang tag of an internal page that answered 2xx."""

_TARGET: Final = f"""FROM pages p JOIN hreflang_links h ON h.page_id = p.id
        JOIN pages t ON t.url = h.url
    WHERE {OK_PAGE} AND h.url != p.url"""
"""Each hreflang tag naming another URL the archive has a row of (``t``)."""

_CANONICALISED: Final = ("t.canonical != '' AND t.canonical != t.url"
                         " AND nitpicker_url_scheme(t.canonical) IN ('http', 'https')"
                         " AND nitpicker_resolve_url(t.url, t.canonical) != t.url")
"""The canonical (stored resolved) names another URL: the functions run only on the rows
whose canonical differs as written (an archive's canonicals before they were resolved)."""

_PAGE_OK: Final = ("t.status BETWEEN 200 AND 299 AND t.redirect_dest_id IS NULL"
                   " AND t.content_type = 'text/html'")

_NAMES: Final = "'hreflang=\"' || h.lang || '\" names ' || h.url"


def _target_sql(where: str, message: str) -> str:
    return (f"SELECT p.id AS page_id, p.url AS url, h.url AS element, {_NAMES} || ', which '"
            f" || {message} AS message {_TARGET} AND {where} GROUP BY p.id, h.url")


CHECKS: Final = (
    Check(
        id="hreflang/invalid-code",
        title="Invalid hreflang codes",
        explanation=(
            "An hreflang value must be x-default or an ISO 639-1 language code, optionally "
            "with an ISO 15924 script and an ISO 3166-1 alpha-2 region (en, en-GB, "
            "zh-Hant-TW). Search engines ignore an alternate whose code they cannot read: "
            "en-UK (the code is GB), jp (the language is ja), en_US (a hyphen, not an "
            "underscore) and es-419 (not a country) are the common mistakes."),
        fix="Correct the code in the template or plugin that writes the hreflang tags.",
        priority="medium", category="indexing",
        sql=(f"SELECT p.id AS page_id, p.url AS url, h.lang AS element, 'hreflang=\"' || h.lang"
             f" || '\" is not valid: ' || nitpicker_hreflang_problem(h.lang) AS message {_FROM}"
             " AND h.lang IN (SELECT lang FROM (SELECT DISTINCT lang FROM hreflang_links)"
             " WHERE nitpicker_hreflang_problem(lang) != '') GROUP BY p.id, h.lang"),
    ),
    Check(
        id="hreflang/no-self-reference",
        title="hreflang without a self-reference",
        explanation=(
            "A page with hreflang alternates must list itself among them, with its own "
            "language: search engines may otherwise ignore its annotations."),
        fix="Add the page's own URL to its hreflang tags, with its language code.",
        priority="medium", category="indexing",
        sql=(f"SELECT p.id AS page_id, p.url AS url, NULL AS element, 'Names ' || count(*)"
             " || ' hreflang alternates, none of them itself' AS message"
             f" {_FROM} GROUP BY p.id HAVING sum(h.url = p.url) = 0"),
    ),
    Check(
        id="hreflang/no-x-default",
        title="hreflang without x-default",
        explanation=(
            "The page's hreflang alternates name no x-default: the version for visitors whose "
            "language none of them matches (often a language chooser, or the main "
            "language). Without it, search engines pick one themselves."),
        fix="Add <link rel=\"alternate\" hreflang=\"x-default\" href=\"…\"> to every page of the set.",
        priority="low", category="indexing",
        sql=(f"SELECT p.id AS page_id, p.url AS url, NULL AS element, 'Names ' || count(*)"
             " || ' hreflang alternates, no x-default' AS message"
             f" {_FROM} GROUP BY p.id HAVING sum(lower(h.lang) = 'x-default') = 0"),
    ),
    Check(
        id="hreflang/no-return-link",
        title="hreflang alternates without a return link",
        explanation=(
            "hreflang works in pairs: when page A names B as its alternate, B must name A "
            "too. Search engines ignore an annotation that is not confirmed by its "
            "alternate. Judged on alternates that are indexable pages the crawl read."),
        fix=(
            "Add the missing tag to the alternate (the element), usually by generating every "
            "page's hreflang tags from one list of the set's URLs."),
        priority="medium", category="indexing",
        sql=_target_sql(
            f"{_PAGE_OK} AND t.noindex = 0 AND NOT ({_CANONICALISED}) AND NOT EXISTS"
            " (SELECT 1 FROM hreflang_links r WHERE r.page_id = t.id AND r.url = p.url)",
            "'does not name this page back'"),
    ),
    Check(
        id="hreflang/target-not-ok",
        title="hreflang alternates that do not answer 2xx",
        explanation=(
            "The page names as its alternate a URL that answers with an error or not at all. "
            "Search engines drop the annotation, and visitors sent to that language land on "
            "an error."),
        fix="Point the tag at the alternate's working URL, or remove it.",
        priority="high", category="indexing",
        sql=_target_sql(
            "t.status IS NOT NULL AND t.redirect_dest_id IS NULL"
            " AND NOT t.status BETWEEN 200 AND 299",
            "CASE WHEN t.status = -1 THEN 'could not be fetched'"
            " ELSE 'answers ' || t.status END"),
    ),
    Check(
        id="hreflang/target-redirect",
        title="hreflang alternates that redirect",
        explanation=(
            "The page names as its alternate a URL that redirects. Search engines want the "
            "final URL in hreflang tags, and may ignore the annotation."),
        fix="Replace the URL with the one it redirects to (given in the message).",
        priority="medium", category="indexing",
        sql=_target_sql("t.redirect_dest_id IS NOT NULL",
                        "'redirects to ' || (SELECT f.url FROM pages f"
                        " WHERE f.id = t.redirect_dest_id)"),
    ),
    Check(
        id="hreflang/target-noindex",
        title="hreflang alternates that are noindex",
        explanation=(
            "The page names as its alternate a page that forbids indexing (robots noindex): "
            "one of the two is a mistake, and the annotation is ignored."),
        fix="Remove the noindex from the alternate, or the alternate from the hreflang tags.",
        priority="medium", category="indexing",
        sql=_target_sql(f"{_PAGE_OK} AND t.noindex = 1", "'is noindex'"),
    ),
    Check(
        id="hreflang/target-canonicalised",
        title="hreflang alternates canonicalised elsewhere",
        explanation=(
            "The page names as its alternate a page whose canonical is another URL. hreflang "
            "tags must name canonical URLs: search engines index the canonical, not the "
            "alternate named."),
        fix="Name the alternate's canonical URL in the hreflang tags (or correct its canonical).",
        priority="medium", category="indexing",
        sql=_target_sql(f"{_PAGE_OK} AND {_CANONICALISED}",
                        "'has the canonical ' || nitpicker_resolve_url(t.url, t.canonical)"),
    ),
)
