"""Template clusters (migration ``0022_page_templates``): the pages of each template, and the
findings of its skeleton reported once per cluster.

Clusters are recorded at the end of a crawl and by ``nitpicker analyze --sample``
(:mod:`nitpicker.archive.template_store`); an archive with none gives empty answers.

**Template findings** (:func:`list_template_findings`): an analyzer's findings that name an
element (its ``element``, a CSS selector as axe's are) grouped by cluster, validator, rule, status and element:
on how many of the cluster's *analysed* pages (by that plugin) each one is. The element is told
by its markup (the finding's ``code``, axe's HTML of it: one template's logo is the same
``<img class="logo" …>`` on every page), else by its selector: axe's selector is the shortest
that is unique *on that page*, so one template's logo is ``img`` on a page with no other image
and ``.logo`` on the next. A finding on every analysed
page of its cluster, at least two of them, is *template-level*: it is in the template's
skeleton, so it affects every page of the cluster (``affects``: the cluster's pages, an
extrapolation when the analysis was a sample). Findings without an element (markuplint's,
textlint's ``line:col``) are per page and never grouped here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import Paged, check_integer, check_paging, fetch_all, fetch_one, paged
from nitpicker.query.analysis_scope import has_templates
from nitpicker.query.violations import has_details

if TYPE_CHECKING:
    import sqlite3

__all__ = ["TemplateFinding", "TemplateItem", "TemplatePage", "list_template_findings",
           "list_template_pages", "list_templates"]


class TemplateItem(TypedDict):
    template: int
    """The cluster's number: 1 has the most pages."""
    pages: int
    examples: list[str]
    """Up to ``examples`` of its page URLs, the representative first."""
    min_similarity: float | None
    """The least Jaccard similarity of a page to the representative's skeleton."""
    paths: int
    """Structural paths in the representative's skeleton."""


_TEMPLATES_SQL: Final = """SELECT t.id, t.pages, t.paths, e.url,
    (SELECT min(similarity) FROM page_templates WHERE template_id = t.id), count(*) OVER ()
    FROM templates t JOIN pages e ON e.id = t.example_page_id
    ORDER BY t.id LIMIT ? OFFSET ?"""

_EXAMPLES_SQL: Final = """SELECT p.url FROM page_templates pt JOIN pages p ON p.id = pt.page_id
    WHERE pt.template_id = ? AND p.url != ? ORDER BY p.id LIMIT ?"""


def list_templates(conn: sqlite3.Connection, *, examples: int = 3, limit: int = 100,
                   offset: int = 0) -> Paged[TemplateItem]:
    """The template clusters, most pages first, each with example pages."""
    check_paging(limit, offset)
    check_integer("examples", examples)
    if not has_templates(conn):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _TEMPLATES_SQL, (limit, offset))
    total = int(rows[0][-1]) if rows else int(
        (fetch_one(conn, "SELECT count(*) FROM templates") or (0,))[0])
    items: list[TemplateItem] = []
    for number, pages, paths, example, similarity, _ in rows:
        others = [url for (url,) in fetch_all(conn, _EXAMPLES_SQL,
                                              (number, example, max(examples - 1, 0)))]
        items.append({"template": number, "pages": pages,
                      "examples": [example, *others][:examples] if examples else [],
                      "min_similarity": similarity, "paths": paths})
    return paged(items, total, limit, offset)


class TemplatePage(TypedDict):
    url: str
    similarity: float | None


_TEMPLATE_PAGES_SQL: Final = """SELECT p.url, pt.similarity, count(*) OVER ()
    FROM page_templates pt JOIN pages p ON p.id = pt.page_id
    WHERE pt.template_id IS ? ORDER BY p.id LIMIT ? OFFSET ?"""


def list_template_pages(conn: sqlite3.Connection, template: int | None, *, limit: int = 100,
                        offset: int = 0) -> Paged[TemplatePage]:
    """The pages of cluster ``template`` by page id (``None``: the pages in no cluster)."""
    check_paging(limit, offset)
    if not has_templates(conn):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _TEMPLATE_PAGES_SQL, (template, limit, offset))
    total = int(rows[0][-1]) if rows else int((fetch_one(
        conn, "SELECT count(*) FROM page_templates WHERE template_id IS ?", (template,))
        or (0,))[0])
    return paged([{"url": url, "similarity": similarity} for url, similarity, _ in rows],
                 total, limit, offset)


class TemplateFinding(TypedDict):
    template: int
    validator: str
    rule: str
    status: str
    severity: str
    element: str
    """One of the element's selectors (axe's differ from page to page: the least)."""
    code: str
    """The element's markup (empty when the plugin gives none)."""
    message: str
    found_on: int
    """Pages of the cluster with this finding."""
    analysed: int
    """Pages of the cluster the plugin analysed."""
    template_pages: int
    template_level: bool
    """On every analysed page of the cluster (two or more): in the template's skeleton."""
    affects: int
    """Pages it affects: the cluster's, when template-level; else ``found_on``."""
    example: str
    """A page with it."""


_FINDINGS_SQL: Final = """WITH analysed AS (
    SELECT pt.template_id, a.plugin, count(*) AS n FROM analyzed_pages a
    JOIN page_templates pt ON pt.page_id = a.page_id
    WHERE a.phase = 'page' AND a.ok = 1 AND pt.template_id IS NOT NULL
    GROUP BY pt.template_id, a.plugin
), found AS (
    SELECT pt.template_id, v.plugin, v.validator, v.rule, v.status, min(v.severity) AS severity,
        min(v.element) AS element, v.code, min(v.message) AS message,
        count(DISTINCT v.page_id) AS pages, min(v.page_id) AS example
    FROM violations v JOIN page_templates pt ON pt.page_id = v.page_id
    WHERE v.element IS NOT NULL AND pt.template_id IS NOT NULL AND v.phase = 'page'
    GROUP BY pt.template_id, v.plugin, v.validator, v.rule, v.status,
        CASE WHEN v.code != '' THEN v.code ELSE v.element END
)
SELECT f.template_id, f.validator, f.rule, f.status, f.severity, f.element, f.code, f.message,
    f.pages, a.n, t.pages, p.url, count(*) OVER ()
FROM found f JOIN analysed a ON a.template_id = f.template_id AND a.plugin = f.plugin
JOIN templates t ON t.id = f.template_id JOIN pages p ON p.id = f.example
WHERE (:everything OR (f.pages = a.n AND a.n >= 2))
    AND (:template IS NULL OR f.template_id = :template)
ORDER BY t.id, f.status, f.validator, f.rule, f.element LIMIT :limit OFFSET :offset"""


def list_template_findings(conn: sqlite3.Connection, *, template: int | None = None,
                           everything: bool = False, limit: int = 100, offset: int = 0
                           ) -> Paged[TemplateFinding]:
    """Findings grouped by template cluster and element: the template-level ones only (on
    every analysed page of the cluster), or ``everything`` grouped; ``template``: one
    cluster's."""
    check_paging(limit, offset)
    check_integer("template", template)
    if not has_templates(conn) or not has_details(conn):
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _FINDINGS_SQL, {"everything": int(everything), "template": template,
                                           "limit": limit, "offset": offset})
    total = int(rows[0][-1]) if rows else 0
    if not rows and offset:
        counted = fetch_all(conn, _FINDINGS_SQL, {"everything": int(everything),
                                                  "template": template, "limit": -1,
                                                  "offset": 0})
        total = len(counted)
    items: list[TemplateFinding] = []
    for (number, validator, rule, status, severity, element, code, message, found_on,
         analysed, template_pages, example, _) in rows:
        level = found_on == analysed and analysed >= 2
        items.append({"template": number, "validator": validator, "rule": rule,
                      "status": status, "severity": severity, "element": element,
                      "code": code, "message": message, "found_on": found_on, "analysed": analysed,
                      "template_pages": template_pages, "template_level": level,
                      "affects": template_pages if level else found_on, "example": example})
    return paged(items, total, limit, offset)
