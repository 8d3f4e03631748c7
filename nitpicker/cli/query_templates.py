"""The template sub-commands of ``nitpicker query`` (issue 29): the template clusters, a
cluster's pages, and the findings of a template's skeleton (:mod:`nitpicker.query.templates`);
registered on the query group by :mod:`nitpicker.cli.query`."""

from __future__ import annotations

from typing import Annotated

import typer

from nitpicker.cli.query_answer import Limit, Offset, Pretty, answer
from nitpicker.query.templates import list_template_findings, list_template_pages, list_templates

__all__ = ["template_findings", "template_pages", "templates"]


def templates(
    ctx: typer.Context,
    examples: Annotated[int | None, typer.Option("--examples", help="Example page URLs per template (default 3).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Template clusters: pages grouped by their DOM skeleton, most pages first.

    Example: nitpicker query site.nitpicker templates --examples 5
    """
    answer(ctx, list_templates, pretty=pretty, examples=examples, limit=limit, offset=offset)


def template_pages(
    ctx: typer.Context,
    template: Annotated[int, typer.Option("--template", help="The template cluster's number (query templates).", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The pages of one template cluster, with their similarity to its skeleton.

    Example: nitpicker query site.nitpicker template-pages --template 2
    """
    answer(ctx, list_template_pages, pretty=pretty, template=template, limit=limit,
            offset=offset)


def template_findings(
    ctx: typer.Context,
    template: Annotated[int | None, typer.Option("--template", help="This template cluster only.", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every finding with an element, grouped by template; not only those on every analysed page of it.")] = False,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """Findings in a template's skeleton, once per template cluster with the pages they affect.

    Example: nitpicker query site.nitpicker template-findings --pretty
    """
    answer(ctx, list_template_findings, pretty=pretty, template=template, everything=all_,
            limit=limit, offset=offset)
