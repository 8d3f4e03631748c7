"""Content: pages whose main content is the same as other pages' (by content hash), or nearly
the same (the near-duplicate clusters: MinHash signatures, banded after the crawl,
:mod:`nitpicker.archive.content_clusters`).

The main content is what the ``main-contents`` plugin takes (``main``, ``[role="main"]``,
``#content``, …, else the body), read by the crawl from the page as rendered; pages with fewer
than :data:`~nitpicker.query.content_signatures.MIN_WORDS` words of it are not compared.
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import Check, counted
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
)
