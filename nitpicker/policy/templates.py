"""Template clusters: pages grouped by the skeleton their template gives them.

Two steps, both over the skeletons of :mod:`nitpicker.policy.extract.skeleton`:

1. **buckets**: pages with exactly the same skeleton (its signature, a hash of the sorted
   paths) are one bucket; on a templated site most pages fall into a few buckets;
2. **clusters**: buckets are taken largest first; each joins the cluster whose
   representative (the skeleton of its largest bucket) it resembles most, when that Jaccard
   similarity (the paths shared over the paths of either) is at least :data:`SIMILARITY`,
   or starts a cluster of its own. A page's own content (a table, a list with a class) moves
   it a little from its template's skeleton, another template's containers a lot.

Clusters are numbered 1, 2, … by size (most pages first, then by their first page id), so the
numbering is stable for one archive. A page with no skeleton (no body, no layout) is in no
cluster. Comparisons are buckets × clusters, not pages × pages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["SIMILARITY", "TemplateCluster", "cluster_pages", "jaccard", "signature"]

SIMILARITY: Final = 0.7
"""The least Jaccard similarity of a page's skeleton to its cluster's representative."""


def signature(paths: frozenset[str]) -> str:
    """A skeleton's signature: the SHA-1 of its sorted paths, one a line."""
    return hashlib.sha1("\n".join(sorted(paths)).encode("utf-8")).hexdigest()


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Shared paths over the paths of either (1.0 for two empty skeletons)."""
    if not left and not right:
        return 1.0
    shared = len(left & right)
    return shared / (len(left) + len(right) - shared)


@dataclass(slots=True)
class TemplateCluster:
    """One template: its representative skeleton and its pages with their similarity."""

    number: int
    signature: str
    skeleton: frozenset[str]
    example: int
    """The representative page: the first page of the cluster's largest bucket."""
    pages: list[tuple[int, float]] = field(default_factory=list)
    """(page id, Jaccard similarity to the representative), by page id."""


@dataclass(slots=True)
class _Bucket:
    skeleton: frozenset[str]
    pages: list[int]


def cluster_pages(skeletons: Iterable[tuple[int, frozenset[str]]],
                  similarity: float = SIMILARITY) -> list[TemplateCluster]:
    """The clusters of the pages ``(page id, skeleton)``; a page with an empty skeleton is
    left out."""
    buckets: dict[str, _Bucket] = {}
    for page_id, paths in skeletons:
        if not paths:
            continue
        key = signature(paths)
        bucket = buckets.get(key)
        if bucket is None:
            buckets[key] = _Bucket(paths, [page_id])
        else:
            bucket.pages.append(page_id)
    ordered = sorted(buckets.items(), key=lambda item: (-len(item[1].pages), min(item[1].pages)))
    clusters: list[TemplateCluster] = []
    for key, bucket in ordered:
        home = None
        best = 0.0
        for cluster in clusters:
            score = jaccard(bucket.skeleton, cluster.skeleton)
            if score >= similarity and score > best:
                home, best = cluster, score
        if home is None:
            home = TemplateCluster(0, key, bucket.skeleton, min(bucket.pages))
            clusters.append(home)
            best = 1.0
        home.pages.extend((page_id, best) for page_id in bucket.pages)
    for cluster in clusters:
        cluster.pages.sort()
    clusters.sort(key=lambda c: (-len(c.pages), c.pages[0][0]))
    for number, cluster in enumerate(clusters, 1):
        cluster.number = number
    return clusters
