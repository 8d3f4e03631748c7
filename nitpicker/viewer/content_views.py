"""The viewer's content clusters (issue 30, item 3): pages whose main content is the same or
nearly the same, and one cluster's pages, the drill-down of the duplicate-metadata clusters'
(``clusters`` / ``cluster``) over :mod:`nitpicker.query.content_clusters`. Listed in
:data:`nitpicker.viewer.views.VIEWS`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

from nitpicker.query import SQLITE_INTEGER_MAX
from nitpicker.query.content_clusters import (
    CLUSTER_KINDS,
    get_content_clusters,
    list_content_cluster_pages,
)
from nitpicker.viewer.params import NotFound, choice_param, int_param

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping

__all__ = ["content_cluster_view", "content_clusters_view"]

ROWS: Final = 50
_PAGE_MAX: Final = 10**12
_ANY: Final = "any"


class ContentArchive(Protocol):
    """What these views use of an open archive (:class:`~nitpicker.viewer.views.OpenArchive`)."""

    conn: sqlite3.Connection


def _page(params: Mapping[str, str]) -> tuple[int, int, int]:
    number = int_param(params, "page", 1, 1, _PAGE_MAX)
    assert number is not None
    return number, ROWS, (number - 1) * ROWS


def content_clusters_view(archive: ContentArchive, params: Mapping[str, str]
                          ) -> tuple[str, dict[str, Any]]:
    """Content clusters of at least ``min`` pages (``kind``: exact, near or any), largest
    first."""
    kind = choice_param(params, "kind", (_ANY, *CLUSTER_KINDS), _ANY)
    min_count = int_param(params, "min", 2, 2, SQLITE_INTEGER_MAX)
    assert min_count is not None
    number, limit, offset = _page(params)
    result = get_content_clusters(archive.conn, kind=None if kind == _ANY else kind,
                                  min_count=min_count, sample=5, limit=limit, offset=offset)
    return "content_clusters.html", {"clusters": result, "kind": kind,
                                     "kinds": (_ANY, *CLUSTER_KINDS), "min": min_count,
                                     "page": number}


def content_cluster_view(archive: ContentArchive, params: Mapping[str, str]
                         ) -> tuple[str, dict[str, Any]]:
    """Every page of one content cluster (``kind`` and ``id``), most alike first."""
    kind = choice_param(params, "kind", CLUSTER_KINDS, "near")
    cluster = int_param(params, "id", None, 1, SQLITE_INTEGER_MAX)
    if cluster is None:
        raise NotFound("No cluster given (id)")
    number, limit, offset = _page(params)
    result = list_content_cluster_pages(archive.conn, kind, cluster, limit=limit,
                                        offset=offset)
    if result["total"] == 0:
        raise NotFound(f"No {kind} content cluster {cluster} in this archive")
    return "content_cluster.html", {"cluster": result, "kind": kind, "id": cluster,
                                    "page": number}
