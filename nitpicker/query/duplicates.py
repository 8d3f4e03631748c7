"""Metadata quality across internal HTML pages: duplicate values and mismatching pairs."""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import (
    INTERNAL_HTML,
    INTERNAL_HTML_INDEXED,
    Paged,
    check_choice,
    check_integer,
    check_paging,
    fetch_all,
    fetch_counted,
    fetch_one,
    paged,
    register_functions,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "DUPLICATE_FIELDS",
    "MISMATCH_TYPES",
    "DuplicateEntry",
    "MismatchEntry",
    "find_duplicates",
    "find_mismatches",
    "list_duplicate_pages",
]

DUPLICATE_FIELDS = ("title", "description")
MISMATCH_TYPES = ("canonical", "og:title", "og:description")


class DuplicateEntry(TypedDict):
    field: str
    value: str
    count: int
    """How many internal HTML pages share the value."""
    urls: list[str]
    """Those pages by URL; at most ``max_urls`` of them."""


class MismatchEntry(TypedDict):
    url: str
    type: str
    actual: str
    expected: str


def _groups_sql(column: str) -> str:
    return (f"SELECT p.{column}, count(*) AS n FROM pages p"
            f" WHERE {INTERNAL_HTML_INDEXED} AND p.{column} != ''"
            f" GROUP BY p.{column} HAVING n > 1")


def find_duplicates(conn: sqlite3.Connection, field: str = "title", *, limit: int = 50,
                    offset: int = 0, max_urls: int = 100) -> Paged[DuplicateEntry]:
    """Values of ``title`` or ``description`` shared by several internal HTML pages.

    Groups by count (most first), then value; each lists the first ``max_urls`` URLs.
    """
    check_choice("duplicate field", field, DUPLICATE_FIELDS)
    check_paging(limit, offset)
    check_integer("max_urls", max_urls)
    column = {"title": "title", "description": "description"}[field]  # identifier, not input
    groups = _groups_sql(column)
    rows = fetch_all(conn, f"""WITH g(value, n) AS ({groups} ORDER BY n DESC, p.{column}
            LIMIT :limit OFFSET :offset),
        ranked AS (SELECT g.value, g.n, p.url,
            row_number() OVER (PARTITION BY g.value ORDER BY p.url) AS k
            FROM g JOIN pages p ON p.{column} = g.value WHERE {INTERNAL_HTML_INDEXED})
        SELECT value, n, url FROM ranked WHERE k <= :max_urls ORDER BY n DESC, value, url""",
                     {"limit": limit, "offset": offset, "max_urls": max_urls})
    total = fetch_one(conn, f"SELECT count(*) FROM ({groups})")
    items: list[DuplicateEntry] = []
    for (value, count), members in groupby(rows, key=lambda r: (r[0], r[1])):
        items.append({"field": field, "value": value, "count": count,
                      "urls": [r[2] for r in members]})
    return paged(items, total[0] if total else 0, limit, offset)


def list_duplicate_pages(conn: sqlite3.Connection, field: str, value: str, *,
                         limit: int = 100, offset: int = 0) -> Paged[str]:
    """The URLs of the internal HTML pages whose ``title`` or ``description`` is ``value``
    exactly, by URL: every page of one :func:`find_duplicates` entry, a page at a time."""
    check_choice("duplicate field", field, DUPLICATE_FIELDS)
    check_paging(limit, offset)
    column = {"title": "title", "description": "description"}[field]  # identifier, not input
    where = f"p.{column} = :value AND {INTERNAL_HTML_INDEXED}"
    rows, total = fetch_counted(
        conn, f"SELECT p.url, count(*) OVER () FROM pages p WHERE {where}"
              " ORDER BY p.url LIMIT :limit OFFSET :offset",
        f"SELECT count(*) FROM pages p WHERE {where}",
        {"value": value, "limit": limit, "offset": offset}, offset)
    return paged([url for (url,) in rows], total, limit, offset)


_MISMATCH_SQL = {
    "canonical": (
        "p.url, nitpicker_resolve_url(p.url, p.canonical)",
        ("p.canonical != '' AND p.canonical != p.url"
         " AND nitpicker_resolve_url(p.url, p.canonical) != p.url"),
    ),
    "og:title": ("p.og_title, p.title",
                 "p.og_title != '' AND p.title != '' AND p.og_title != p.title"),
    "og:description": ("p.og_description, p.description",
                       ("p.og_description != '' AND p.description != ''"
                        " AND p.og_description != p.description")),
}
"""type → (actual, expected columns; condition)."""


def find_mismatches(conn: sqlite3.Connection, type: str, *, limit: int = 100,
                    offset: int = 0) -> Paged[MismatchEntry]:
    """Internal HTML pages whose metadata disagrees with itself, by URL.

    ``canonical``: the canonical URL (resolved against the page) is another URL — actual is the
    page URL, expected the canonical. ``og:title`` / ``og:description``: both set and different
    — actual is the Open Graph value, expected the title / description.
    """
    check_choice("mismatch type", type, MISMATCH_TYPES)
    check_paging(limit, offset)
    register_functions(conn)
    columns, condition = _MISMATCH_SQL[type]
    where = f"{INTERNAL_HTML} AND {condition}"
    rows, total = fetch_counted(
        conn,
        f"SELECT p.url, {columns}, count(*) OVER () FROM pages p WHERE {where}"
        " ORDER BY p.url LIMIT :limit OFFSET :offset",
        f"SELECT count(*) FROM pages p WHERE {where}",
        {"limit": limit, "offset": offset}, offset,
    )
    items: list[MismatchEntry] = [
        {"url": url, "type": type, "actual": actual, "expected": expected}
        for url, actual, expected in rows
    ]
    return paged(items, total, limit, offset)
