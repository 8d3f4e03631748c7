"""Content clusters: pages whose main content is the same (exact: one content hash) or nearly
the same (near: a near-duplicate cluster, :mod:`nitpicker.archive.content_clusters`), the
groups the ``content/exact-duplicate`` and ``content/near-duplicate`` checks report page by
page.

A cluster is named by its kind and its first page's id (the smallest): ``exact`` clusters are
computed here from the content hashes; ``near`` ones are read from ``content_clusters``,
written after the crawl with the site checks. An archive crawled before content signatures
were recorded has none.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_integer,
    check_paging,
    fetch_counted,
    has_tables,
    paged,
)
from nitpicker.query.content_signatures import COMPARED

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CLUSTER_KINDS", "ContentCluster", "ContentClusterPage", "get_content_clusters",
           "list_content_cluster_pages"]

CLUSTER_KINDS: Final = ("exact", "near")


class ContentCluster(TypedDict):
    kind: str
    """``exact`` (the same main content) or ``near`` (nearly the same)."""
    id: int
    """The cluster's first page's id: with ``kind``, what names the cluster."""
    count: int
    """Its pages."""
    min_similarity: float
    """The least estimated similarity of a page to the first (1 for an exact cluster)."""
    first_page: str
    sample_pages: list[str]
    """Its first ``sample`` URLs, by URL."""


class ContentClusterPage(TypedDict):
    url: str
    title: str
    similarity: float
    """Its estimated similarity to the cluster's first page."""


_COMPARED_CTE: Final = f"""compared(id, url, title, content_hash) AS MATERIALIZED (
        SELECT p.id, p.url, p.title, c.content_hash FROM page_content c
        JOIN pages p ON p.id = c.page_id WHERE {COMPARED})"""

_CLUSTERS_SQL: Final = f"""WITH {_COMPARED_CTE},
    exact AS (
        SELECT 'exact' AS kind, min(id) AS id, count(*) AS n, 1.0 AS low, content_hash
        FROM compared GROUP BY content_hash HAVING count(*) >= :min_count
    ), near AS (
        SELECT 'near' AS kind, cluster_id AS id, count(*) AS n, min(similarity) AS low
        FROM content_clusters GROUP BY cluster_id HAVING count(*) >= :min_count
    ), listed AS (
        SELECT kind, id, n, low, (SELECT json_group_array(url) FROM (
            SELECT c.url FROM compared c WHERE c.content_hash = e.content_hash
            ORDER BY c.url LIMIT :sample)) AS sample
        FROM exact e WHERE :kind IN ('', 'exact')
        UNION ALL
        SELECT kind, id, n, low, (SELECT json_group_array(url) FROM (
            SELECT p.url FROM content_clusters k JOIN pages p ON p.id = k.page_id
            WHERE k.cluster_id = r.id ORDER BY p.url LIMIT :sample)) AS sample
        FROM near r WHERE :kind IN ('', 'near')
    )
    SELECT l.kind, l.id, l.n, l.low, f.url, l.sample, count(*) OVER ()
    FROM listed l JOIN pages f ON f.id = l.id
    ORDER BY l.n DESC, l.kind, l.id LIMIT :limit OFFSET :offset"""

_CLUSTERS_COUNT_SQL: Final = f"""WITH {_COMPARED_CTE}
    SELECT (SELECT count(*) FROM (SELECT 1 FROM compared GROUP BY content_hash
                                  HAVING count(*) >= :min_count) WHERE :kind IN ('', 'exact'))
        + (SELECT count(*) FROM (SELECT 1 FROM content_clusters GROUP BY cluster_id
                                 HAVING count(*) >= :min_count) WHERE :kind IN ('', 'near'))"""

_EXACT_PAGES_SQL: Final = f"""WITH {_COMPARED_CTE}
    SELECT c.url, c.title, 1.0, count(*) OVER () FROM compared c
    WHERE c.content_hash = (SELECT content_hash FROM page_content WHERE page_id = :id)
        AND EXISTS (SELECT 1 FROM compared f WHERE f.id = :id)
    ORDER BY c.url LIMIT :limit OFFSET :offset"""
_EXACT_COUNT_SQL: Final = f"""WITH {_COMPARED_CTE}
    SELECT count(*) FROM compared c
    WHERE c.content_hash = (SELECT content_hash FROM page_content WHERE page_id = :id)
        AND EXISTS (SELECT 1 FROM compared f WHERE f.id = :id)"""

_NEAR_PAGES_SQL: Final = """SELECT p.url, p.title, k.similarity, count(*) OVER ()
    FROM content_clusters k JOIN pages p ON p.id = k.page_id WHERE k.cluster_id = :id
    ORDER BY k.similarity DESC, p.url LIMIT :limit OFFSET :offset"""
_NEAR_COUNT_SQL: Final = "SELECT count(*) FROM content_clusters WHERE cluster_id = :id"

_TABLES: Final = ("page_content", "content_clusters")


def _check_kind(kind: str | None) -> str:
    if kind is not None and kind not in CLUSTER_KINDS:
        raise ValueError(f"Invalid kind: {kind!r}. Must be one of: {', '.join(CLUSTER_KINDS)}")
    return kind or ""


def get_content_clusters(conn: sqlite3.Connection, *, kind: str | None = None,
                         min_count: int = 2, sample: int = 5, limit: int = 100,
                         offset: int = 0) -> Paged[ContentCluster]:
    """Clusters of at least ``min_count`` pages with the same (``exact``) or nearly the same
    (``near``) main content, ``kind`` alone or both, largest first. Each lists its first
    ``sample`` URLs."""
    wanted = _check_kind(kind)
    check_integer("min_count", min_count)
    check_integer("sample", sample)
    check_paging(limit, offset)
    if not has_tables(conn, *_TABLES):
        return paged([], 0, limit, offset)
    params = {"kind": wanted, "min_count": max(min_count, 2), "sample": sample, "limit": limit,
              "offset": offset}
    rows, total = fetch_counted(conn, _CLUSTERS_SQL, _CLUSTERS_COUNT_SQL, params, offset)
    items: list[ContentCluster] = [
        {"kind": found, "id": cluster, "count": count, "min_similarity": low,
         "first_page": first, "sample_pages": json.loads(sample_urls)}
        for found, cluster, count, low, first, sample_urls in rows]
    return paged(items, total, limit, offset)


def list_content_cluster_pages(conn: sqlite3.Connection, kind: str, cluster: int, *,
                               limit: int = 100, offset: int = 0
                               ) -> Paged[ContentClusterPage]:
    """The pages of the ``kind`` cluster whose first page's id is ``cluster`` (most alike
    first); none when there is no such cluster."""
    _check_kind(kind)
    check_integer("cluster", cluster)
    check_paging(limit, offset)
    if not has_tables(conn, *_TABLES):
        return paged([], 0, limit, offset)
    sql, count_sql = ((_EXACT_PAGES_SQL, _EXACT_COUNT_SQL) if kind == "exact"
                      else (_NEAR_PAGES_SQL, _NEAR_COUNT_SQL))
    params = {"id": cluster, "limit": limit, "offset": offset}
    rows, total = fetch_counted(conn, sql, count_sql, params, offset)
    if kind == "exact" and total < 2:  # a page alone is no cluster
        return paged([], 0, limit, offset)
    items: list[ContentClusterPage] = [{"url": url, "title": title, "similarity": similarity}
                                       for url, title, similarity in rows]
    return paged(items, total, limit, offset)

