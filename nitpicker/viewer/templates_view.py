"""The viewer's Templates view: the template clusters (pages grouped by their DOM skeleton),
each with its pages and the findings of its skeleton once per cluster.

``/a/<n>/templates``: the clusters, most pages first, with example pages and how many
template-level findings each has; ``?template=K``: that cluster's pages (paged) and its
findings grouped by element (:func:`nitpicker.query.templates.list_template_findings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker.query.templates import list_template_findings, list_template_pages, list_templates
from nitpicker.viewer.params import int_param

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nitpicker.viewer.views import OpenArchive

__all__ = ["templates_view"]

_TEMPLATE_MAX = 2**62


def templates_view(archive: OpenArchive, params: Mapping[str, str]
                   ) -> tuple[str, dict[str, Any]]:
    """The clusters, or one cluster's pages and findings (``?template=``)."""
    from nitpicker.viewer.views import page_number, window  # the views' paging, one place

    number = page_number(params)
    limit, offset = window(number)
    template = int_param(params, "template", None, 1, _TEMPLATE_MAX)
    if template is None:
        clusters = list_templates(archive.conn, examples=3, limit=limit, offset=offset)
        findings: dict[int, int] = {}
        for item in list_template_findings(archive.conn, limit=1000)["items"]:
            findings[item["template"]] = findings.get(item["template"], 0) + 1
        return "templates.html", {"templates": clusters, "findings": findings,
                                  "cluster": None, "page": number}
    pages = list_template_pages(archive.conn, template, limit=limit, offset=offset)
    grouped = list_template_findings(archive.conn, template=template, everything=True,
                                     limit=1000)
    return "templates.html", {"cluster": template, "template_pages": pages,
                              "template_findings": grouped, "page": number}
