"""Two archives compared: what changed between an OLD crawl and a NEW one (issue 17).

Both archives are attached read-only (``mode=ro`` URIs) to one in-memory connection, as
``old`` and ``new``. A URL of OLD is matched with the same normalised URL of NEW (the archive
stores URLs normalised); with a :class:`UrlMap` an OLD URL starting with its old prefix is
matched with the NEW URL that has the new prefix instead (staging against production, a domain
move). The matched page ids go into one temporary table (two integers a page, inside SQLite);
every category is then one SQL statement over the two archives, read row by row: nothing holds
a whole table in Python::

    with compare_archives("last-week.nitpicker", "today.nitpicker") as diff:
        diff.common_pages                      # pages in both
        for item in diff.items("links_broken"):
            ...

The categories (:data:`CATEGORIES`, in output order) and their items:

- ``pages_added`` / ``pages_removed``: site pages (in scope, fetched, not skipped) of one
  archive only: ``url``, ``status``, ``title``.
- ``page_changes``: for site pages in both, one item per changed fact: ``url`` (NEW),
  ``old_url``, ``field`` (:data:`PAGE_FIELDS`), ``old``, ``new``. URLs in facts
  (``redirect_to``, ``canonical``, ``alternate``) are compared through the map.
- ``new_4xx`` / ``new_5xx``: site pages of NEW answering 4xx / 5xx that did not in OLD
  (``old_status`` ``None``: not in OLD): ``url``, ``old_status``, ``new_status``.
- ``links_added`` / ``links_removed``: link edges (linking page, URL named) on pages in both:
  ``source_url``, ``dest_url``. The links of an added or removed page come with the page.
- ``links_broken``: links in NEW whose target is broken (>= 400 or a fetch error, at the end
  of its redirects) that were not a broken link in OLD (``old_status`` ``None``: no such link
  in OLD); ``links_fixed``: links broken in OLD that are not in NEW (``new_status``
  ``None``: the link is gone) or no longer broken. ``source_url``, ``dest_url``,
  ``old_status``, ``new_status``.
- ``resources_failing``: sub-resources a browser loaded that fail in NEW (>= 400 or a fetch
  error) and did not in OLD: ``url``, ``kind``, ``old_status``, ``new_status``.
- ``images_lost_alt``: images of a page in both with an alt text in OLD and none (absent or
  empty) in NEW: ``page_url``, ``src``.
- ``trap_caps_new``: firings of the trap cap in NEW whose signature never fired in OLD:
  ``signature``, ``parent_path``, ``count``, ``first_url``, ``last_url``.

Findings (violations, plugin values: new, fixed, persisting) come as further categories once
the analyzers write them: a :class:`Category` is a name, its SQL and its item's field names.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

from typing_extensions import TypedDict

from nitpicker.archive.lock import ArchiveLock
from nitpicker.query.connection import ArchiveOpenError, open_archive

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "GATES",
    "PAGE_FIELDS",
    "ArchiveDiff",
    "Category",
    "CategorySummary",
    "DiffInputError",
    "DiffSummary",
    "UrlMap",
    "compare_archives",
    "summarise_diff",
]


class DiffInputError(Exception):
    """The two archives cannot be compared: the same file twice, or one is being written."""


@dataclass(frozen=True)
class UrlMap:
    """OLD URLs starting with ``old_prefix`` compare as ``new_prefix`` + the rest."""

    old_prefix: str
    new_prefix: str

    @classmethod
    def parse(cls, text: str, label: str = "--map") -> UrlMap:
        """``OLD_PREFIX=NEW_PREFIX``; ``ValueError`` naming ``text`` (as ``label``) when it is
        not that."""
        old, sep, new = text.partition("=")
        if not sep or not old or not new:
            raise ValueError(f"Invalid {label}: {text!r}. Expected OLD_PREFIX=NEW_PREFIX, "
                             "two URL prefixes")
        return cls(old, new)

    def params(self) -> dict[str, Any]:
        return {"old_prefix": self.old_prefix, "old_len": len(self.old_prefix),
                "new_prefix": self.new_prefix, "new_len": len(self.new_prefix)}


_IDENTITY: Final = UrlMap("", "")
"""No map: ``substr(url, 1, 0) = ''`` holds for every URL, and ``'' || url`` is the URL."""


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
)
"""Every category, in output order. Findings categories are added here once analyzers write
their tables (their ``needs`` naming them, so an archive without findings gives none)."""

CATEGORY_NAMES: Final = tuple(category.name for category in CATEGORIES)
_BY_NAME: Final = {category.name: category for category in CATEGORIES}

GATES: Final = {
    "new-broken-links": "links_broken",
    "new-4xx": "new_4xx",
    "new-5xx": "new_5xx",
    "removed-pages": "pages_removed",
}
"""``--fail-on`` names and the category each one trips on when it is not empty."""

_PAGE_BOOLEANS: Final = frozenset({"noindex", "nofollow"})


class CategorySummary(TypedDict):
    count: int
    items: list[dict[str, Any]]
    """The first items (all of them when no limit was asked)."""


class ArchiveSide(TypedDict):
    path: str
    base_url: str
    created_at: str


class DiffSummary(TypedDict):
    old: ArchiveSide
    new: ArchiveSide
    url_map: dict[str, str] | None
    """``{"old_prefix", "new_prefix"}`` when ``--map`` was given."""
    common_pages: int
    """Site pages in both archives (0: the archives have no URL in common)."""
    categories: dict[str, CategorySummary]


class ArchiveDiff:
    """Two archives attached read-only to one in-memory connection, their pages matched."""

    def __init__(self, conn: sqlite3.Connection, old: ArchiveSide, new: ArchiveSide,
                 url_map: UrlMap | None) -> None:
        self._conn = conn
        self.old = old
        self.new = new
        self.url_map = url_map
        self._params = (url_map or _IDENTITY).params()
        self._conn.execute("CREATE TEMP TABLE pairs (old_id INTEGER PRIMARY KEY,"
                           " new_id INTEGER NOT NULL UNIQUE)")
        self._conn.execute(_PAIRS_SQL, self._params)
        self.common_pages = int(self._conn.execute(_COMMON_SQL).fetchone()[0])
        """Site pages in both archives."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def _has_table(self, schema: str, table: str) -> bool:
        row = self._conn.execute(  # the schema name comes from a constant, never from input
            f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?",
            (table,)).fetchone()
        return row is not None

    def _sql(self, category: Category) -> str | None:
        if not all(self._has_table(schema, table) for schema, table in category.needs):
            return None
        if category.name == "trap_caps_new":
            seen = _TRAP_CAPS_SEEN if self._has_table("old", "trap_events") else ""
            return category.sql.format(where=seen)
        return category.sql

    def items(self, name: str) -> Iterator[dict[str, Any]]:
        """The items of category ``name``, in a stable order, read row by row."""
        category = _BY_NAME.get(name)
        if category is None:
            raise ValueError(f"Invalid category: {name!r}. "
                             f"Must be one of: {', '.join(CATEGORY_NAMES)}")
        sql = self._sql(category)
        if sql is None:
            return
        cursor = self._conn.execute(sql, self._params)
        try:
            if name == "page_changes":
                for row in cursor:
                    yield from _page_change_items(row, self._params)
                return
            for row in cursor:
                yield dict(zip(category.fields, row, strict=True))
        finally:
            cursor.close()

    def count(self, name: str) -> int:
        """How many items category ``name`` has (reads them all: use :func:`summarise_diff`
        to count and sample in one pass)."""
        return sum(1 for _ in self.items(name))


def _map_to_new(url: str | None, params: dict[str, Any]) -> str | None:
    """An OLD URL as NEW spells it (as :func:`_to_new` does in SQL)."""
    prefix: str = params["old_prefix"]
    new_prefix: str = params["new_prefix"]
    if url is None or not url.startswith(prefix):
        return url
    return new_prefix + url[len(prefix):]


def _page_change_items(row: tuple[Any, ...], params: dict[str, Any]
                       ) -> Iterator[dict[str, Any]]:
    old_url, new_url = row[0], row[1]
    for index, field in enumerate(PAGE_FIELDS):
        old, new = row[2 + 2 * index], row[3 + 2 * index]
        compared = _map_to_new(old, params) if field in _URL_FIELDS else old
        if compared == new:
            continue
        if field in _PAGE_BOOLEANS:
            old, new = bool(old), bool(new)
        yield {"url": new_url, "old_url": old_url, "field": field, "old": old, "new": new}


def summarise_diff(diff: ArchiveDiff, limit: int | None = None,
                   categories: tuple[str, ...] = CATEGORY_NAMES) -> DiffSummary:
    """Every category's count and its first ``limit`` items (all with ``None``), one pass
    over each category's rows."""
    result: dict[str, CategorySummary] = {}
    for name in categories:
        items: list[dict[str, Any]] = []
        count = 0
        for item in diff.items(name):
            count += 1
            if limit is None or len(items) < limit:
                items.append(item)
        result[name] = {"count": count, "items": items}
    url_map = ({"old_prefix": diff.url_map.old_prefix, "new_prefix": diff.url_map.new_prefix}
               if diff.url_map else None)
    return {"old": diff.old, "new": diff.new, "url_map": url_map,
            "common_pages": diff.common_pages, "categories": result}


def _side(path: Path) -> ArchiveSide:
    """Check the archive at ``path`` (the checks ``query`` makes) and read what names it."""
    holder = ArchiveLock(path).live_holder()
    if holder is not None:
        raise DiffInputError(f"{path} is being written by a running crawl (PID {holder}): "
                             "compare it once the crawl has ended")
    conn = open_archive(path)
    try:
        base_url, created_at = conn.execute(
            "SELECT base_url, created_at FROM info WHERE id = 1").fetchone()
    finally:
        conn.close()
    return {"path": str(path), "base_url": base_url, "created_at": created_at}


def compare_archives(old: str | os.PathLike[str], new: str | os.PathLike[str], *,
                     url_map: UrlMap | None = None) -> ArchiveDiff:
    """Compare the archive ``old`` with ``new`` (both opened read-only, never changed).

    Raises :class:`ArchiveOpenError` for a path that is not an archive this version reads
    (missing, not an archive, corrupt, newer), :class:`DiffInputError` for the same file
    twice or an archive a live crawl holds (its lock: the comparison would see half a crawl).
    Archives of older schema versions compare: a category whose table one lacks is empty.
    """
    old_path, new_path = Path(old), Path(new)
    old_side, new_side = _side(old_path), _side(new_path)
    if old_path.resolve() == new_path.resolve() or os.path.samefile(old_path, new_path):
        raise DiffInputError(f"OLD and NEW are the same file: {old_path}")
    conn = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
    try:
        for schema, path in (("old", old_path), ("new", new_path)):
            conn.execute(f"ATTACH DATABASE ? AS {schema}",  # schema from this tuple only
                         (f"{path.resolve().as_uri()}?mode=ro",))
        return ArchiveDiff(conn, old_side, new_side, url_map)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ArchiveOpenError(f"cannot compare {old_path} with {new_path}: {exc}") from exc
