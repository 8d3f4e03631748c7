"""What every query shares: the page sets, paging, choice checks, URL lookup, what an archive
has (its migrations, tables and columns: the one schema probe), SQL functions.

The SQL fragments here are constants; values always travel as parameters.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from typing_extensions import TypedDict

from nitpicker.messages import shown_integer
from nitpicker.policy.signature import OG_FIELDS, is_signable, meta_signature
from nitpicker.policy.urls import join_href, normalize_url
from nitpicker.query.audit_functions import register_audit_functions

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "INTEGER_RANGES",
    "INTERNAL_HTML",
    "INTERNAL_HTML_INDEXED",
    "LISTED_TABLE",
    "PAGE_LIST_BASE",
    "SQLITE_INTEGER_MAX",
    "STATUS_RANGE",
    "Paged",
    "check_choice",
    "check_integer",
    "check_paging",
    "fetch_all",
    "fetch_counted",
    "fetch_dicts",
    "fetch_one",
    "find_page_id",
    "has_column",
    "has_migration",
    "has_tables",
    "like_escape",
    "listed_filter",
    "paged",
    "register_functions",
    "url_candidates",
]

T = TypeVar("T")

INTERNAL_HTML = (
    "+p.scraped = 1 AND +p.is_external = 0 AND +p.content_type = 'text/html'"
    " AND +p.redirect_dest_id IS NULL"
)
"""Internal HTML pages (SPEC §5): fetched, in scope, HTML, not a redirect source. Alias ``p``.

These columns hold one value on almost every row, and an archive has no ``ANALYZE``
statistics: the unary ``+`` keeps the planner from walking their single-column indexes (a
walk over nearly the whole table in rowid lookups) instead of scanning it.
"""

INTERNAL_HTML_INDEXED = (
    "likely(p.scraped = 1) AND likely(p.is_external = 0)"
    " AND likely(p.content_type = 'text/html') AND likely(p.redirect_dest_id IS NULL)"
)
"""The same set, written to match the partial indexes ``pages_internal_title`` and
``pages_internal_description`` (migration ``0002_query_indexes``): for queries that group or
look up pages by title or description."""

PAGE_LIST_BASE = (
    "+p.scraped = 1 AND +p.redirect_dest_id IS NULL"
    " AND (+p.content_type IS NULL OR +p.content_type = 'text/html')"
)
"""The page list (SPEC §5): every dealt-with URL but redirect sources and known non-HTML."""

LISTED_TABLE: Final = "temp.report_listed"
"""The ids of the pages ``report --urls`` lists (one column, ``id``), kept in the reading
connection's temporary database by :func:`nitpicker.query.report_rows.listed.list_pages`."""


def listed_filter(column: str) -> str:
    """The SQL condition: ``column`` (a page id, ``p.id``) is a listed page's (``column`` is a
    constant of a query module, never input)."""
    return f"{column} IN (SELECT id FROM {LISTED_TABLE})"


class Paged(TypedDict, Generic[T]):
    """One page of a list: the items, the total count of matches, and the window asked for."""

    items: list[T]
    total: int
    offset: int
    limit: int


def paged(items: list[T], total: int, limit: int, offset: int) -> Paged[T]:
    return {"items": items, "total": total, "offset": offset, "limit": limit}


SQLITE_INTEGER_MAX = 2**63 - 1
"""The largest integer SQLite binds: a larger Python ``int`` raises ``OverflowError``."""

STATUS_RANGE = (-1, 999)
"""An HTTP status (three digits), or -1: no HTTP answer (a fetch error)."""

INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "limit": (0, SQLITE_INTEGER_MAX),
    "offset": (0, SQLITE_INTEGER_MAX),
    "link_limit": (0, SQLITE_INTEGER_MAX),
    "max_length": (0, SQLITE_INTEGER_MAX),
    "status": STATUS_RANGE,
    "status_min": STATUS_RANGE,
    "status_max": STATUS_RANGE,
    "oversized_threshold": (0, SQLITE_INTEGER_MAX),
    "min_count": (1, SQLITE_INTEGER_MAX),
    "sample": (0, SQLITE_INTEGER_MAX),
    "max_urls": (0, SQLITE_INTEGER_MAX),
    "run_id": (1, SQLITE_INTEGER_MAX),
    "examples": (0, 100),
    "template": (1, SQLITE_INTEGER_MAX),
    "cluster": (1, SQLITE_INTEGER_MAX),
}
"""The accepted range of every integer argument of the queries, by parameter name: an
interface (the CLI, the MCP server) checks against the same table."""


def check_integer(name: str, value: int | None, label: str | None = None) -> None:
    """Raise ``ValueError`` naming ``value`` and its range unless it is in
    ``INTEGER_RANGES[name]`` (``None``, an absent filter, passes). ``label`` names it in the
    message (default: the parameter name in words)."""
    if value is None:
        return
    low, high = INTEGER_RANGES[name]
    if not low <= value <= high:
        raise ValueError(f"Invalid {label or name.replace('_', ' ')}: {shown_integer(value)}. "
                         f"Must be between {low} and {high}")


def check_paging(limit: int, offset: int) -> None:
    """Raise ``ValueError`` unless ``limit`` and ``offset`` are in range."""
    check_integer("limit", limit)
    check_integer("offset", offset)


def check_choice(label: str, value: str, allowed: Sequence[str]) -> None:
    """Raise ``ValueError`` naming ``value`` and the allowed values unless it is one of them."""
    if value not in allowed:
        raise ValueError(f"Invalid {label}: {value!r}. Must be one of: {', '.join(allowed)}")


def like_escape(text: str) -> str:
    """``text`` for a ``LIKE … ESCAPE '\\'`` pattern, its own ``%`` and ``_`` taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def fetch_all(conn: sqlite3.Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()
              ) -> list[tuple[Any, ...]]:
    """Rows as plain tuples, whatever ``row_factory`` the caller's connection has."""
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        return cursor.execute(sql, params).fetchall()
    finally:
        cursor.close()


def fetch_dicts(conn: sqlite3.Connection, sql: str,
                params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
    """Rows as ``{column: value}`` (for tables whose columns grew by migrations)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        rows = cursor.execute(sql, params).fetchall()
        names = [column[0] for column in cursor.description]
    finally:
        cursor.close()
    return [dict(zip(names, row, strict=True)) for row in rows]


def fetch_one(conn: sqlite3.Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()
              ) -> tuple[Any, ...] | None:
    rows = fetch_all(conn, sql, params)
    return rows[0] if rows else None


def fetch_counted(conn: sqlite3.Connection, sql: str, count_sql: str, params: dict[str, Any],
                  offset: int) -> tuple[list[tuple[Any, ...]], int]:
    """The rows of ``sql``, whose last column is ``count(*) OVER ()``, and the total.

    One pass computes both the page and the total (the filter is evaluated once); only a page
    past the end, which has no row to carry the total, costs a second statement.
    """
    rows = fetch_all(conn, sql, params)
    if rows:
        return [row[:-1] for row in rows], int(rows[0][-1])
    if offset == 0:
        return [], 0
    row = fetch_one(conn, count_sql, params)
    return [], int(row[0]) if row else 0


def url_candidates(url: str) -> Iterator[str]:
    """``url`` as given, then its normalised form when that differs (computed only if asked)."""
    yield url
    normal = normalize_url(url)
    if normal and normal != url:
        yield normal


def find_page_id(conn: sqlite3.Connection, url: str) -> tuple[int, str] | None:
    """``(id, archived url)`` of the page row for ``url``, tried as given, then normalised."""
    for candidate in url_candidates(url):
        row = fetch_one(conn, "SELECT id FROM pages WHERE url = ?", (candidate,))
        if row is not None:
            return int(row[0]), candidate
    return None


# -- what an archive has -------------------------------------------------------------------------
# An archive of an older version lacks what later migrations added, one never analysed the
# analysis tables: a query asks here, and answers without them (an empty list, a NULL column).

_SCHEMAS: Final = ("main", "old", "new")
"""The databases a probe may name: an archive's own, and the two ``nitpicker diff`` attaches."""

_HAS_MIGRATION_SQL: Final = "SELECT 1 FROM {schema}.migrations WHERE name = ?"
_HAS_TABLE_SQL: Final = """SELECT count(*) FROM {schema}.sqlite_master
    WHERE type IN ('table', 'view') AND name IN (SELECT value FROM json_each(?))"""
_HAS_COLUMN_SQL: Final = "SELECT 1 FROM pragma_table_info(?, ?) WHERE name = ?"


def has_migration(conn: sqlite3.Connection, name: str, *, schema: str = "main") -> bool:
    """Whether the archive has had the migration ``name`` (``0014_response_time``: what it
    added is there)."""
    return fetch_one(conn, _HAS_MIGRATION_SQL.format(schema=_schema(schema)), (name,)) is not None


def has_tables(conn: sqlite3.Connection, *names: str, schema: str = "main") -> bool:
    """Whether the archive has every one of the tables (or views) ``names``."""
    row = fetch_one(conn, _HAS_TABLE_SQL.format(schema=_schema(schema)), (json.dumps(names),))
    return row is not None and int(row[0]) == len(set(names))


def has_column(conn: sqlite3.Connection, table: str, column: str, *,
               schema: str = "main") -> bool:
    """Whether the archive's ``table`` has the column ``column``."""
    return fetch_one(conn, _HAS_COLUMN_SQL, (table, _schema(schema), column)) is not None


def _schema(name: str) -> str:
    """``name``, a database name from this module's table (it goes into the SQL text)."""
    if name not in _SCHEMAS:
        raise ValueError(f"Invalid schema: {name!r}. Must be one of: {', '.join(_SCHEMAS)}")
    return name


# -- SQL functions ------------------------------------------------------------------------------

PAGE_SIGNATURE_SQL = (
    "nitpicker_page_signature(p.url, p.title, p.description, "
    + ", ".join(f"p.{name}" for name in OG_FIELDS)
    + ")"
)
"""The signature of row ``p`` (NULL when not signed), computed by :mod:`nitpicker.policy.signature`."""


_OG_TITLE = OG_FIELDS.index("og_title")
_OG_URL = OG_FIELDS.index("og_url")


def _page_signature(url: str, title: str, description: str, *og: str) -> str | None:
    if not is_signable(title, og):
        return None
    return meta_signature(url, title, description, og[_OG_TITLE], og[_OG_URL])


def _resolve_url(base: str, href: str) -> str:
    """``href`` resolved against ``base`` and normalised (``href`` itself when unparsable)."""
    return normalize_url(join_href(base, href)) or href


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _url_scheme(text: str | None) -> str:
    """The scheme of ``text`` lower-cased (``file``, ``https``), ``''`` for a relative URL."""
    found = _SCHEME.match(text or "")
    return found.group()[:-1].lower() if found else ""


def register_functions(conn: sqlite3.Connection) -> None:
    """Register the deterministic SQL functions the queries use on ``conn`` (idempotent).

    ``nitpicker_page_signature(url, title, description, og_type, og_title, og_site_name,
    og_description, og_url, og_image)``, ``nitpicker_resolve_url(base, href)`` and
    ``nitpicker_url_scheme(text)``, and the checks' (:mod:`nitpicker.query.audit_functions`).
    Registering a function changes nothing in the file.
    """
    conn.create_function("nitpicker_page_signature", 3 + len(OG_FIELDS), _page_signature,
                         deterministic=True)
    conn.create_function("nitpicker_resolve_url", 2, _resolve_url, deterministic=True)
    conn.create_function("nitpicker_url_scheme", 1, _url_scheme, deterministic=True)
    register_audit_functions(conn)
