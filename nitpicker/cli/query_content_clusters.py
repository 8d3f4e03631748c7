"""The content sub-commands of ``nitpicker query`` (issue 30, items 2 and 3): pages with the
same or nearly the same main content, one cluster's pages
(:mod:`nitpicker.query.content_clusters`), and the soft-404 probes
(:mod:`nitpicker.query.probes`); registered on the query group by :mod:`nitpicker.cli.query`."""

from __future__ import annotations

from typing import Annotated

import typer

from nitpicker.cli.query_answer import Limit, Offset, Pretty, answer
from nitpicker.query.content_clusters import get_content_clusters, list_content_cluster_pages
from nitpicker.query.probes import list_probes

__all__ = ["content_cluster_pages", "content_clusters", "probes"]


def content_clusters(
    ctx: typer.Context,
    kind: Annotated[str | None, typer.Option("--kind", help="exact (the same main content) or near (nearly the same); both unless given.", show_default=False)] = None,
    min_count: Annotated[int | None, typer.Option("--min-count", help="Smallest cluster (default 2).", show_default=False)] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="Sample URLs per cluster (default 5).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Pages whose main content is the same (exact) or nearly the same (near), largest first.

    Example: nitpicker query site.nitpicker content-clusters --kind near --sample 3
    """
    answer(ctx, get_content_clusters, pretty=pretty, kind=kind, min_count=min_count,
           sample=sample, limit=limit, offset=offset)


def content_cluster_pages(
    ctx: typer.Context,
    kind: Annotated[str, typer.Option("--kind", help="exact or near: the cluster's kind.", show_default=False)],
    cluster: Annotated[int, typer.Option("--cluster", help="The cluster's id (its first page's id, query content-clusters).", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The pages of one content cluster, most alike first.

    Example: nitpicker query site.nitpicker content-cluster-pages --kind near --cluster 12
    """
    answer(ctx, list_content_cluster_pages, pretty=pretty, kind=kind, cluster=cluster,
           limit=limit, offset=offset)


def probes(ctx: typer.Context, limit: Limit = None, offset: Offset = None,
           pretty: Pretty = False) -> None:
    """The soft-404 probes: a random missing URL fetched once for each directory of pages,
    and what the site answered (never pages of the site).

    Example: nitpicker query site.nitpicker probes --pretty
    """
    answer(ctx, list_probes, pretty=pretty, limit=limit, offset=offset)
