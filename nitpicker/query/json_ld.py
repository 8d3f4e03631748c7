"""JSON-LD: the pages with ``<script type="application/ld+json">`` blocks, their types, the
invalid ones.

The rows of ``json_ld_blocks`` and ``json_ld_types`` (migration ``0011_json_ld``), written for
in-scope HTML pages over HTTP and in the browser alike. An archive written before that
migration has no such tables, and a read-only connection never creates them: it simply has no
blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_paging,
    fetch_all,
    fetch_counted,
    find_page_id,
    has_tables,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["JsonLdBlockItem", "JsonLdPage", "get_page_json_ld", "list_json_ld"]


class JsonLdBlockItem(TypedDict):
    position: int
    """The block's place among the page's blocks, from 0 (document order)."""
    types: list[str]
    """The ``@type`` values of its top-level entities (``@graph`` members and top-level
    arrays included), sorted; ``[]`` for an invalid block."""
    is_valid: bool
    error: str | None
    """Why the block is not JSON-LD (``Expecting ',' delimiter (line 3, column 5)``)."""


class JsonLdPage(TypedDict):
    url: str
    types: list[str]
    """Every type of the page's blocks, once, sorted."""
    invalid_blocks: int
    blocks: list[JsonLdBlockItem]


_PAGES_SQL = (
    "SELECT p.id, p.url, count(*) OVER () FROM pages p"
    " WHERE p.id IN (SELECT page_id FROM json_ld_blocks)"
    " AND (:type IS NULL OR p.id IN (SELECT b.page_id FROM json_ld_types t"
    "  JOIN json_ld_blocks b ON b.id = t.block_id WHERE t.type = :type))"
    " AND (NOT :invalid OR p.id IN (SELECT page_id FROM json_ld_blocks WHERE is_valid = 0))"
    " ORDER BY p.url LIMIT :limit OFFSET :offset"
)
_COUNT_SQL = (
    "SELECT count(*) FROM pages p"
    " WHERE p.id IN (SELECT page_id FROM json_ld_blocks)"
    " AND (:type IS NULL OR p.id IN (SELECT b.page_id FROM json_ld_types t"
    "  JOIN json_ld_blocks b ON b.id = t.block_id WHERE t.type = :type))"
    " AND (NOT :invalid OR p.id IN (SELECT page_id FROM json_ld_blocks WHERE is_valid = 0))"
)
_BLOCKS_SQL = (
    "SELECT b.id, b.position, b.is_valid, b.error FROM json_ld_blocks b"
    " WHERE b.page_id = ? ORDER BY b.position"
)
_TYPES_SQL = (
    "SELECT t.block_id, t.type FROM json_ld_types t JOIN json_ld_blocks b ON b.id = t.block_id"
    " WHERE b.page_id = ? ORDER BY t.type"
)


def _page(conn: sqlite3.Connection, page_id: int, url: str) -> JsonLdPage:
    types_of: dict[int, list[str]] = {}
    for block_id, kind in fetch_all(conn, _TYPES_SQL, (page_id,)):
        types_of.setdefault(block_id, []).append(kind)
    blocks: list[JsonLdBlockItem] = [
        {"position": position, "types": types_of.get(block_id, []), "is_valid": bool(valid),
         "error": error}
        for block_id, position, valid, error in fetch_all(conn, _BLOCKS_SQL, (page_id,))
    ]
    every = sorted({kind for kinds in types_of.values() for kind in kinds})
    invalid = sum(1 for block in blocks if not block["is_valid"])
    return {"url": url, "types": every, "invalid_blocks": invalid, "blocks": blocks}


def list_json_ld(
    conn: sqlite3.Connection,
    *,
    type: str | None = None,  # (shadows the builtin: the flag's name, as in list_links)
    invalid: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> Paged[JsonLdPage]:
    """The pages with JSON-LD blocks, by URL, each with its blocks.

    ``type``: only pages with a block of that ``@type`` (exact, as written: ``Product``,
    ``BreadcrumbList``); ``invalid``: only pages with a block that is not JSON-LD (malformed
    JSON, not an object or array, empty). The filters combine.
    """
    check_paging(limit, offset)
    if type is not None and not type.strip():
        raise ValueError(f"Invalid JSON-LD type: {type!r}. Give a type, such as Product")
    if not has_tables(conn, "json_ld_blocks", "json_ld_types"):
        return paged([], 0, limit, offset)
    params: dict[str, Any] = {"type": type, "invalid": int(invalid), "limit": limit,
                              "offset": offset}
    rows, total = fetch_counted(conn, _PAGES_SQL, _COUNT_SQL, params, offset)
    return paged([_page(conn, page_id, url) for page_id, url in rows], total, limit, offset)


def get_page_json_ld(conn: sqlite3.Connection, url: str) -> JsonLdPage | None:
    """The JSON-LD blocks of the page at ``url`` (none: an empty ``blocks``); ``None`` when the
    archive has no such URL."""
    found = find_page_id(conn, url)
    if found is None:
        return None
    if not has_tables(conn, "json_ld_blocks", "json_ld_types"):
        return {"url": found[1], "types": [], "invalid_blocks": 0, "blocks": []}
    return _page(conn, *found)
