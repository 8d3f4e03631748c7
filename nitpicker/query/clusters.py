"""Duplicate-metadata clusters: internal pages that share one meta signature (seed 003 §2).

A cluster is the set of internal HTML pages with the same :mod:`nitpicker.policy.signature` (parent
path, title, description, og:title, og:url). Clusters of at least ``min_count`` pages are
listed, those whose ``og:url`` names another page than their own first (a trap signal), then by
size. Every page of a cluster has the same title, so seed 003's ``sameTitleRatio == 1.0``
holds by construction.

The signature is computed in SQL by a registered function that calls
:func:`nitpicker.policy.signature.page_signature`'s rules (:func:`~nitpicker.policy.signature.is_signable`,
:func:`~nitpicker.policy.signature.meta_signature`) — the one definition the crawl's trap cap uses
too — so SQLite groups the pages (with its external sorter: memory stays flat however large the
archive) and only the sample rows of the clusters reach Python.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.policy.signature import og_url_points_elsewhere, parent_path
from nitpicker.query._common import (
    INTERNAL_HTML_INDEXED,
    PAGE_SIGNATURE_SQL,
    Paged,
    check_integer,
    check_paging,
    fetch_all,
    fetch_counted,
    paged,
    register_functions,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "ClusterPage",
    "DuplicateCluster",
    "MetaSignatureFields",
    "get_duplicate_clusters",
    "list_cluster_pages",
]


class MetaSignatureFields(TypedDict):
    title: str
    description: str
    og_title: str
    og_url: str


class DuplicateCluster(TypedDict):
    parent_path: str
    signature: str
    """sha1 hex of the meta signature."""
    count: int
    og_url_mismatch: bool
    """Whether the pages' ``og:url`` names another page than their own."""
    sample_pages: list[str]
    """The first ``sample`` URLs of the cluster, by URL."""
    meta_signature_fields: MetaSignatureFields


CLUSTERS_SQL = f"""WITH titles AS (
        SELECT p.title FROM pages p WHERE {INTERNAL_HTML_INDEXED}
        GROUP BY p.title HAVING count(*) >= :min_count
    ), signed AS (
        SELECT p.url, p.title, p.description, p.og_title, p.og_url,
            {PAGE_SIGNATURE_SQL} AS signature
        FROM titles JOIN pages p ON p.title = titles.title WHERE {INTERNAL_HTML_INDEXED}
    ), ranked AS (
        SELECT signature, url, title, description, og_title, og_url,
            count(*) OVER (PARTITION BY signature) AS n,
            row_number() OVER (PARTITION BY signature ORDER BY url) AS k
        FROM signed WHERE signature IS NOT NULL
    )
    SELECT signature, n, url, title, description, og_title, og_url FROM ranked
    WHERE n >= :min_count AND k <= :sample ORDER BY signature, k"""
"""The sample rows of every cluster of at least ``min_count`` pages.

The pages of a cluster share their title, so only pages whose title ``min_count`` pages or more
share are signed (through the partial index on internal pages' titles); on most sites that is a
small part of the archive."""


def _cluster(rows: list[tuple[str, int, str, str, str, str, str]], sample: int
             ) -> DuplicateCluster:
    signature, count, first_url, title, description, og_title, og_url = rows[0]
    mismatch = bool(og_url) and (count > 1 or og_url_points_elsewhere(first_url, og_url))
    return {
        "parent_path": parent_path(first_url),
        "signature": signature,
        "count": count,
        "og_url_mismatch": mismatch,
        "sample_pages": [r[2] for r in rows[:sample]],
        "meta_signature_fields": {"title": title, "description": description,
                                  "og_title": og_title, "og_url": og_url},
    }


def get_duplicate_clusters(conn: sqlite3.Connection, *, min_count: int = 10, sample: int = 5,
                           limit: int = 100, offset: int = 0) -> Paged[DuplicateCluster]:
    """Clusters of at least ``min_count`` internal pages with one meta signature.

    Ordered: ``og:url`` pointing elsewhere first, then by count (largest first), parent path
    and signature. Each cluster lists its first ``sample`` page URLs.

    With one ``og:url`` shared by two or more distinct URLs, at least all but one of them point
    elsewhere, so a cluster of two or more with an ``og:url`` is a mismatch cluster.
    """
    check_integer("min_count", min_count)
    check_integer("sample", sample)
    check_paging(limit, offset)
    register_functions(conn)
    rows = fetch_all(conn, CLUSTERS_SQL, {"min_count": min_count, "sample": max(sample, 1)})
    clusters = [_cluster(list(group), sample) for _, group in groupby(rows, key=lambda r: r[0])]
    clusters.sort(key=lambda c: (not c["og_url_mismatch"], -c["count"], c["parent_path"],
                                 c["signature"]))
    return paged(clusters[offset : offset + limit], len(clusters), limit, offset)


class ClusterPage(TypedDict):
    url: str
    title: str
    og_url: str


CLUSTER_PAGES_SQL = f"""SELECT p.url, p.title, p.og_url, count(*) OVER () FROM pages p
    WHERE {INTERNAL_HTML_INDEXED} AND {PAGE_SIGNATURE_SQL} = :signature
    ORDER BY p.url LIMIT :limit OFFSET :offset"""
"""Every page of one cluster, by URL. (The signature is a hash: every internal page is signed
to find them, one pass over the internal HTML pages.)"""

CLUSTER_COUNT_SQL = f"""SELECT count(*) FROM pages p
    WHERE {INTERNAL_HTML_INDEXED} AND {PAGE_SIGNATURE_SQL} = :signature"""

TITLED_CLUSTER_PAGES_SQL = f"""SELECT p.url, p.title, p.og_url, count(*) OVER () FROM pages p
    WHERE p.title = :title AND {INTERNAL_HTML_INDEXED} AND {PAGE_SIGNATURE_SQL} = :signature
    ORDER BY p.url LIMIT :limit OFFSET :offset"""
"""The same, given the cluster's title: only the pages with that title are signed (the partial
index on internal pages' titles finds them, in URL order)."""

TITLED_CLUSTER_COUNT_SQL = f"""SELECT count(*) FROM pages p
    WHERE p.title = :title AND {INTERNAL_HTML_INDEXED} AND {PAGE_SIGNATURE_SQL} = :signature"""


def list_cluster_pages(conn: sqlite3.Connection, signature: str, *, title: str | None = None,
                       limit: int = 100, offset: int = 0) -> Paged[ClusterPage]:
    """The pages of the cluster whose signature (sha1 hex, as :func:`get_duplicate_clusters`
    gives it) is ``signature``, by URL; none when no page has it.

    ``title``: the cluster's title, when the caller knows it (a cluster's
    ``meta_signature_fields``, or an item of an earlier answer): the title is part of the
    signature, so only the pages with it are signed instead of every internal page. A title
    that is not the cluster's finds no page.
    """
    check_paging(limit, offset)
    register_functions(conn)
    params = {"signature": signature, "limit": limit, "offset": offset, "title": title}
    sql, count_sql = ((CLUSTER_PAGES_SQL, CLUSTER_COUNT_SQL) if title is None
                      else (TITLED_CLUSTER_PAGES_SQL, TITLED_CLUSTER_COUNT_SQL))
    rows, total = fetch_counted(conn, sql, count_sql, params, offset)
    items: list[ClusterPage] = [{"url": url, "title": title_, "og_url": og_url}
                                for url, title_, og_url in rows]
    return paged(items, total, limit, offset)
