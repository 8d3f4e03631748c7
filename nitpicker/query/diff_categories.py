"""The categories of :mod:`nitpicker.query.diff`: what one kind of change is, as SQL.

Each :class:`Category` is a name, a description, one SQL statement over the two attached
archives (``old`` and ``new``, their matched page ids in ``temp.pairs``) and its items' field
names; :data:`CATEGORIES` lists them in output order. The SQL here is built from constants
only: the URL map's prefixes are parameters (``:old_prefix``, ``:new_prefix``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from nitpicker.query.diff_findings import (
    PERSISTING_FIELDS,
    VALUE_FIELDS,
    VIOLATION_FIELDS,
    VIOLATIONS_FIXED_SQL,
    VIOLATIONS_NEW_SQL,
    VIOLATIONS_PERSISTING_SQL,
    value_item,
    values_sql,
    violation_item,
)

__all__ = ["CATEGORIES", "CATEGORY_NAMES", "GATES", "PAGE_FIELDS", "Category"]


def _to_new(column: str) -> str:
    """SQL for an OLD URL ``column`` as NEW spells it (``column`` is a constant, never input)."""
    return (f"(CASE WHEN substr({column}, 1, :old_len) = :old_prefix"
            f" THEN :new_prefix || substr({column}, :old_len + 1) ELSE {column} END)")


def _to_old(column: str) -> str:
    """SQL for a NEW URL ``column`` as OLD spells it."""
    return (f"(CASE WHEN substr({column}, 1, :new_len) = :new_prefix"
            f" THEN :old_prefix || substr({column}, :new_len + 1) ELSE {column} END)")


def _site(alias: str) -> str:
    """Site pages: in scope, dealt with, not skipped (redirect sources and non-HTML count)."""
    return f"{alias}.is_external = 0 AND {alias}.scraped = 1 AND {alias}.is_skipped = 0"


_PAIRS_SQL: Final = f"""INSERT OR IGNORE INTO temp.pairs(old_id, new_id)
    SELECT o.id, n.id FROM old.pages o JOIN new.pages n ON n.url = {_to_new("o.url")}"""
"""Every URL of OLD with its URL in NEW (all rows: site pages, external URLs, link targets).
Two OLD URLs the map sends to one NEW URL: the first in URL order is matched."""

_BROKEN: Final = "({s} >= 400 OR {s} = -1)"


def _broken(status: str) -> str:
    return _BROKEN.format(s=status)


def _final_status(db: str, target: str) -> str:
    """The status at the end of ``target``'s redirect (one hop, as ``links`` judges it)."""
    return (f"coalesce((SELECT f.status FROM {db}.pages f WHERE f.id = {target}.redirect_dest_id),"
            f" {target}.status)")


def _inbound(db: str, page: str) -> str:
    """Links naming the page, directly or through a URL that redirects to it (``inbound_total``
    of ``page-detail``)."""
    return (f"((SELECT count(*) FROM {db}.anchors a WHERE a.href_id = {page}.id)"
            f" + (SELECT count(*) FROM {db}.pages r JOIN {db}.anchors a ON a.href_id = r.id"
            f" WHERE r.redirect_dest_id = {page}.id))")


PAGE_FIELDS: Final = ("status", "redirect_to", "title", "description", "canonical", "noindex",
                      "nofollow", "alternate", "content_type", "depth", "inbound_links")
"""The facts compared for a page in both archives. ``alternate`` is the first
``<link rel="alternate">`` (the archive keeps one, hreflang or not)."""

_URL_FIELDS: Final = frozenset({"redirect_to", "canonical", "alternate"})

_PAGE_VALUES: Final = {
    "status": "{p}.status",
    "redirect_to": "(SELECT d.url FROM {db}.pages d WHERE d.id = {p}.redirect_dest_id)",
    "title": "{p}.title",
    "description": "{p}.description",
    "canonical": "{p}.canonical",
    "noindex": "{p}.noindex",
    "nofollow": "{p}.nofollow",
    "alternate": "{p}.alternate",
    "content_type": "{p}.content_type",
    "depth": "{p}.depth",
}
"""The SQL of each fact of page ``{p}`` in archive ``{db}`` (``inbound_links``: :func:`_inbound`)."""


def _value(field: str, db: str, page: str) -> str:
    if field == "inbound_links":
        return _inbound(db, page)
    return _PAGE_VALUES[field].format(p=page, db=db)


def _page_changes_sql() -> str:
    """Pages in both with at least one changed fact: the OLD and NEW value of each field."""
    columns: list[str] = []
    differs: list[str] = []
    for field in PAGE_FIELDS:
        old, new = _value(field, "old", "o"), _value(field, "new", "n")
        columns += [f"{old} AS old_{field}", f"{new} AS new_{field}"]
        compared = _to_new(f"old_{field}") if field in _URL_FIELDS else f"old_{field}"
        differs.append(f"{compared} IS NOT new_{field}")
    return f"""SELECT * FROM (
        SELECT o.url AS old_url, n.url AS new_url, {", ".join(columns)}
        FROM temp.pairs x JOIN old.pages o ON o.id = x.old_id JOIN new.pages n ON n.id = x.new_id
        WHERE {_site("o")} AND {_site("n")})
        WHERE {" OR ".join(differs)} ORDER BY new_url"""


_PAGES_ONLY_SQL: Final = """SELECT p.url, p.status, p.title FROM {db}.pages p
    WHERE {site} AND NOT EXISTS (
        SELECT 1 FROM temp.pairs x JOIN {other}.pages q ON q.id = x.{other}_id
        WHERE x.{db}_id = p.id AND {other_site})
    ORDER BY p.url"""


def _pages_only(db: str, other: str) -> str:
    return _PAGES_ONLY_SQL.format(db=db, other=other, site=_site("p"), other_site=_site("q"))


_COMMON_SQL: Final = f"""SELECT count(*) FROM temp.pairs x
    JOIN old.pages o ON o.id = x.old_id JOIN new.pages n ON n.id = x.new_id
    WHERE {_site("o")} AND {_site("n")}"""


def _new_status_class(low: int) -> str:
    return f"""SELECT url, old_status, new_status FROM (
        SELECT n.url AS url, n.status AS new_status,
            (SELECT o.status FROM temp.pairs x JOIN old.pages o ON o.id = x.old_id
             WHERE x.new_id = n.id AND {_site("o")}) AS old_status
        FROM new.pages n WHERE n.status BETWEEN {low} AND {low + 99} AND {_site("n")})
        WHERE old_status IS NULL OR old_status NOT BETWEEN {low} AND {low + 99}
        ORDER BY url"""


_BOTH_SITE_PAIRS: Final = """temp.pairs s
    CROSS JOIN old.pages AS os NOT INDEXED ON os.id = s.old_id
    CROSS JOIN new.pages AS ns NOT INDEXED ON ns.id = s.new_id"""
"""Pages in both, walked in pair order. Archives have no ``ANALYZE`` statistics: the ``CROSS
JOIN``s (SQLite keeps their order) stop the planner from scanning every target page for each
linking page."""

_LINKS_REMOVED_SQL: Final = f"""SELECT DISTINCT os.url, t.url FROM {_BOTH_SITE_PAIRS}
    CROSS JOIN old.anchors AS a INDEXED BY anchors_page_id ON a.page_id = s.old_id
    CROSS JOIN old.pages AS t NOT INDEXED ON t.id = a.href_id
    WHERE {_site("os")} AND {_site("ns")} AND NOT EXISTS (
        SELECT 1 FROM temp.pairs y JOIN new.anchors b ON b.href_id = y.new_id
        WHERE y.old_id = a.href_id AND b.page_id = s.new_id)
    ORDER BY os.url, t.url"""

_LINKS_ADDED_SQL: Final = f"""SELECT DISTINCT ns.url, t.url FROM {_BOTH_SITE_PAIRS}
    CROSS JOIN new.anchors AS b INDEXED BY anchors_page_id ON b.page_id = s.new_id
    CROSS JOIN new.pages AS t NOT INDEXED ON t.id = b.href_id
    WHERE {_site("os")} AND {_site("ns")} AND NOT EXISTS (
        SELECT 1 FROM temp.pairs y JOIN old.anchors a ON a.href_id = y.old_id
        WHERE y.new_id = b.href_id AND a.page_id = s.old_id)
    ORDER BY ns.url, t.url"""


def _broken_links_sql(db: str, other: str) -> str:
    """Links of ``db`` to a broken target, with the status of the same link in ``other``
    (``NULL`` when ``other`` has no such link), where that link is not broken there.

    Starts from the broken targets (the status index) and reaches the links through
    ``anchors(href_id, page_id)``, as :mod:`nitpicker.query.links` does.
    """
    return f"""WITH broken(id) AS MATERIALIZED (
            SELECT id FROM {db}.pages WHERE status >= 400
            UNION ALL SELECT id FROM {db}.pages WHERE status = -1
        ), targets(id) AS MATERIALIZED (
            SELECT id FROM broken
            UNION ALL SELECT r.id FROM broken k JOIN {db}.pages r ON r.redirect_dest_id = k.id
        ), links AS MATERIALIZED (
            SELECT DISTINCT s.id AS source_id, s.url AS source_url, t.id AS target_id,
                t.url AS dest_url, {_final_status(db, "t")} AS status
            FROM targets x CROSS JOIN {db}.pages t ON t.id = x.id
            CROSS JOIN {db}.anchors a ON a.href_id = t.id
            CROSS JOIN {db}.pages s ON s.id = a.page_id
        ), compared AS MATERIALIZED (
            SELECT l.source_url, l.dest_url, l.status, (
                SELECT {_final_status(other, "ot")}
                FROM temp.pairs ps JOIN temp.pairs pt ON pt.{db}_id = l.target_id
                JOIN {other}.pages ot ON ot.id = pt.{other}_id
                WHERE ps.{db}_id = l.source_id AND EXISTS (
                    SELECT 1 FROM {other}.anchors oa
                    WHERE oa.href_id = pt.{other}_id AND oa.page_id = ps.{other}_id)
            ) AS other_status FROM links l)
        SELECT source_url, dest_url, {{old}}, {{new}} FROM compared
        WHERE other_status IS NULL OR NOT {_broken("other_status")}
        ORDER BY source_url, dest_url"""


_LINKS_BROKEN_SQL: Final = _broken_links_sql("new", "old").format(old="other_status",
                                                                  new="status")
_LINKS_FIXED_SQL: Final = _broken_links_sql("old", "new").format(old="status",
                                                                 new="other_status")

_RESOURCES_FAILING_SQL: Final = f"""SELECT url, kind, old_status, new_status FROM (
        SELECT n.url AS url, n.kind AS kind, n.status AS new_status,
            (SELECT o.status FROM old.resources o WHERE o.url = {_to_old("n.url")}) AS old_status
        FROM new.resources n WHERE {_broken("n.status")})
    WHERE old_status IS NULL OR NOT {_broken("old_status")}
    ORDER BY url"""

_IMAGES_LOST_ALT_SQL: Final = f"""SELECT DISTINCT n.url, i.src FROM temp.pairs x
    JOIN new.pages n ON n.id = x.new_id JOIN new.images i ON i.page_id = x.new_id
    WHERE (i.alt IS NULL OR i.alt = '') AND EXISTS (
        SELECT 1 FROM old.images j WHERE j.page_id = x.old_id AND j.src = {_to_old("i.src")}
        AND j.alt IS NOT NULL AND j.alt != '')
    ORDER BY n.url, i.src"""

_TRAP_CAPS_NEW_SQL: Final = """SELECT n.signature, n.parent_path, n.count, n.first_url,
    n.last_url FROM new.trap_events n {where} ORDER BY n.id"""
_TRAP_CAPS_SEEN: Final = ("WHERE NOT EXISTS (SELECT 1 FROM old.trap_events o"
                          " WHERE o.signature = n.signature)")


@dataclass(frozen=True)
class Category:
    """One kind of change: its name, what it holds, its SQL, and its items' field names."""

    name: str
    description: str
    sql: str
    fields: tuple[str, ...]
    needs: tuple[tuple[str, str], ...] = ()
    """``(schema, table)`` pairs the SQL reads beyond the first migration's tables."""
    findings: bool = False
    """Reads the fingerprints :func:`nitpicker.query.diff_findings.prepare` makes."""
    make_item: Callable[[tuple[str, ...], tuple[Any, ...]], dict[str, Any]] | None = None
    """A row as an item (default: the fields and the row zipped)."""


_FINDINGS_NEEDS: Final = tuple((db, table) for db in ("old", "new")
                               for table in ("analysis_runs", "violations", "page_values"))


CATEGORIES: Final[tuple[Category, ...]] = (
    Category("pages_added", "pages only in NEW", _pages_only("new", "old"),
             ("url", "status", "title")),
    Category("pages_removed", "pages only in OLD", _pages_only("old", "new"),
             ("url", "status", "title")),
    Category("page_changes", "changed facts of pages in both", _page_changes_sql(),
             ("url", "old_url", "field", "old", "new")),
    Category("new_4xx", "pages answering 4xx in NEW and not in OLD", _new_status_class(400),
             ("url", "old_status", "new_status")),
    Category("new_5xx", "pages answering 5xx in NEW and not in OLD", _new_status_class(500),
             ("url", "old_status", "new_status")),
    Category("links_added", "links new on pages in both", _LINKS_ADDED_SQL,
             ("source_url", "dest_url")),
    Category("links_removed", "links gone from pages in both", _LINKS_REMOVED_SQL,
             ("source_url", "dest_url")),
    Category("links_broken", "links broken in NEW and not in OLD", _LINKS_BROKEN_SQL,
             ("source_url", "dest_url", "old_status", "new_status")),
    Category("links_fixed", "links broken in OLD and not in NEW", _LINKS_FIXED_SQL,
             ("source_url", "dest_url", "old_status", "new_status")),
    Category("resources_failing", "resources failing in NEW and not in OLD",
             _RESOURCES_FAILING_SQL, ("url", "kind", "old_status", "new_status")),
    Category("images_lost_alt", "images with an alt text in OLD and none in NEW",
             _IMAGES_LOST_ALT_SQL, ("page_url", "src")),
    Category("trap_caps_new", "trap-cap firings in NEW whose signature never fired in OLD",
             _TRAP_CAPS_NEW_SQL, ("signature", "parent_path", "count", "first_url", "last_url"),
             needs=(("new", "trap_events"),)),
    Category("violations_new", "findings in NEW not in OLD", VIOLATIONS_NEW_SQL,
             VIOLATION_FIELDS, needs=_FINDINGS_NEEDS, findings=True, make_item=violation_item),
    Category("violations_fixed", "findings in OLD not in NEW", VIOLATIONS_FIXED_SQL,
             VIOLATION_FIELDS, needs=_FINDINGS_NEEDS, findings=True, make_item=violation_item),
    Category("violations_persisting", "findings in both", VIOLATIONS_PERSISTING_SQL,
             PERSISTING_FIELDS, needs=_FINDINGS_NEEDS, findings=True, make_item=violation_item),
    Category("values_changed", "plugin values changed on pages in both", values_sql(_site),
             VALUE_FIELDS, needs=_FINDINGS_NEEDS, findings=True, make_item=value_item),
)
"""Every category, in output order. The findings categories (``needs`` the analysis tables:
an archive older than migration 0013 gives none) compare only the plugins run on both."""

CATEGORY_NAMES: Final = tuple(category.name for category in CATEGORIES)
_BY_NAME: Final = {category.name: category for category in CATEGORIES}

GATES: Final = {
    "new-broken-links": "links_broken",
    "new-4xx": "new_4xx",
    "new-5xx": "new_5xx",
    "removed-pages": "pages_removed",
    "new-violations": "violations_new",
}
"""``--fail-on`` names and the category each one trips on when it is not empty."""
