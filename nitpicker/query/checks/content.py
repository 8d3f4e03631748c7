"""Content: pages whose main content is the same as other pages' (by content hash), or nearly
the same (the near-duplicate clusters: MinHash signatures, banded after the crawl,
:mod:`nitpicker.archive.content_clusters`); soft 404s, pages like what the site answers for a
missing URL (the probes of :mod:`nitpicker.crawl.soft404`), and pages whose title says they
are missing.

The main content is what the ``main-contents`` plugin takes (``main``, ``[role="main"]``,
``#content``, …, else the body), read by the crawl from the page as rendered; pages with fewer
than :data:`~nitpicker.query.content_signatures.MIN_WORDS` words of it are not compared.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check, counted
from nitpicker.query.content_signatures import COMPARED

__all__ = ["CHECKS"]

_EXACT_SQL: Final = f"""WITH compared(id, url, content_hash) AS MATERIALIZED (
        SELECT p.id, p.url, c.content_hash FROM page_content c JOIN pages p ON p.id = c.page_id
        WHERE {COMPARED}
    ), shared AS (
        SELECT id, url, count(*) OVER w AS n, first_value(url) OVER w AS first,
            nth_value(url, 2) OVER w AS second
        FROM compared
        WINDOW w AS (PARTITION BY content_hash ORDER BY url
                     ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    )
    SELECT id AS page_id, url, NULL AS element,
        'The same main content as ' || {counted("n - 1", "other page")} || ': '
            || CASE WHEN url = first THEN second ELSE first END AS message
    FROM shared WHERE n > 1"""
"""Compared pages that share their content hash with another."""

_NEAR_SQL: Final = f"""WITH clusters AS (
        SELECT k.page_id, k.cluster_id, k.similarity,
            count(*) OVER (PARTITION BY k.cluster_id) AS n
        FROM content_clusters k
    )
    SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'One of ' || {counted("k.n", "page")} || ' whose main contents are near duplicates: '
            || CASE WHEN k.page_id = k.cluster_id THEN 'the first of them'
                ELSE printf('%d%%', CAST(round(k.similarity * 100) AS INTEGER)) || ' like '
                    || f.url END AS message
    FROM clusters k JOIN pages p ON p.id = k.page_id JOIN pages f ON f.id = k.cluster_id"""
"""The pages of the near-duplicate clusters, with their similarity to the cluster's first."""

SOFT404_SIMILARITY: Final = 0.9
"""How alike a page's main content and a probe's must be (besides the same title)."""

_SOFT404_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'Answers like a missing URL of the site (' || s.url || '): the same title'
            || CASE WHEN c.content_hash = s.content_hash THEN ' and content'
                ELSE printf(', content %d%% alike', CAST(round(
                    nitpicker_minhash_similarity(c.minhash, s.minhash) * 100) AS INTEGER)) END
            AS message
    FROM soft404_probes s JOIN pages p ON p.title = s.title
        JOIN page_content c ON c.page_id = p.id
    WHERE s.status = 200 AND s.title IS NOT NULL AND {OK_PAGE}
        AND substr(p.url, 1, length(s.directory)) = s.directory
        AND (c.content_hash = s.content_hash
             OR nitpicker_minhash_similarity(c.minhash, s.minhash) >= :similarity)
    GROUP BY p.id"""
"""Pages under a probed directory whose title is the probe's answer's and whose main content
is the same or nearly (the probes answered 200 for a random missing URL)."""

_NOT_FOUND_TITLE_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url, NULL AS element,
        'Answers ' || p.status || ' with the title "' || p.title || '"' AS message
    FROM pages p WHERE {OK_PAGE} AND nitpicker_not_found_title(p.title)"""

CHECKS: Final = (
    Check(
        id="content/exact-duplicate",
        title="Pages with the same content",
        explanation=(
            "These pages' main content (the page without its header, navigation and footer) "
            "is word for word the same as other pages'. Search engines show one of them and "
            "drop the others, maybe not the one you want; visitors find the same text twice. "
            "Often a page reached at two URLs (a parameter, a printer version, a copy left "
            "behind by a move)."),
        fix=(
            "Keep one URL: redirect the others to it, or name it in their rel=canonical; a "
            "page meant to differ needs its own content."),
        priority="medium", category="content", sql=_EXACT_SQL,
    ),
    Check(
        id="content/near-duplicate",
        title="Pages with nearly the same content",
        explanation=(
            "These pages' main content is nearly the same as other pages' (by default 90% or "
            "more of its three-word phrases shared, estimated from MinHash signatures): thin "
            "variations of one text, which search engines treat as duplicates and visitors as "
            "repetition. Each finding names the cluster's first page and how alike the two "
            "are (NITPICKER_NEAR_DUPLICATE_THRESHOLD, nitpicker check "
            "--near-duplicate-threshold)."),
        fix=(
            "Merge the pages into one (redirecting the others), make each say something of "
            "its own, or point their rel=canonical at the one to keep. nitpicker query FILE "
            "content-clusters lists the clusters."),
        priority="low", category="content", sql=_NEAR_SQL,
    ),
    Check(
        id="content/soft-404",
        title="Soft 404s: missing pages that answer 200",
        explanation=(
            "The crawl fetched a random URL that cannot exist in each directory of the site "
            "(NITPICKER_SOFT404_PROBES, 50 at most); where the site answered it with 200 and "
            "a page rather than 404, these pages have that page's title and the same or "
            "nearly the same content: they are what the site says for a missing URL. Search "
            "engines index them as pages (or call them soft 404s and drop them), and the "
            "links to them look fine to any link checker. The probes are listed by nitpicker "
            "query FILE probes."),
        fix=(
            "Make the server answer a missing URL with 404 (or 410) and its error page; "
            "then correct the links that lead to these URLs, or bring their pages back."),
        priority="high", category="content", sql=_SOFT404_SQL,
        params={"similarity": SOFT404_SIMILARITY},
    ),
    Check(
        id="content/not-found-title",
        title="Pages titled as missing",
        explanation=(
            "These pages answer 200, but their title says the page is missing (\"Page not "
            "found\", \"404\", \"ページが見つかりません\"): most likely error pages served "
            "with the wrong status. A weaker signal than content/soft-404 (a title can say so "
            "on purpose), but worth a look."),
        fix=(
            "If the page is an error page, make the server answer 404 for it; if it is a real "
            "page, give it a title that says what it is."),
        priority="medium", category="content", sql=_NOT_FOUND_TITLE_SQL,
    ),
)
