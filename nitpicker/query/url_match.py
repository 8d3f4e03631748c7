"""Matching a list of URLs against an archive: for each, whether the crawl has it and how.

A URL matches a page row when the archive has it as listed or in its normalised form (the
form every URL is stored in: :func:`nitpicker.policy.urls.normalize_url`, the lookup
``page-detail`` makes too). The listed URLs are looked up in batches, each one query joining
the batch (one JSON array parameter, read by ``json_each``) on the ``pages.url`` index.

    match_urls(conn, ["https://example.com/a", "https://example.com/gone"])
    # {"items": [{"url": "https://example.com/a", "matched": True, "match": "exact", …},
    #            {"url": "https://example.com/gone", "matched": False, …}],
    #  "total": 2, "listed": 2, "matched": 1, "unmatched": 1, "offset": 0, "limit": 100}
"""

from __future__ import annotations

import json
from itertools import islice
from typing import TYPE_CHECKING, Any, Final, Literal

from typing_extensions import TypedDict

from nitpicker.policy.urls import normalize_url
from nitpicker.query._common import check_paging, fetch_all

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator, Sequence

__all__ = ["UrlMatch", "UrlMatches", "match_urls"]

_BATCH: Final = 5000
"""URLs looked up by one statement."""

_LOOKUP_SQL: Final = (
    "SELECT p.url, p.id, p.status, p.content_type, p.is_external, p.is_skipped, p.skip_reason,"
    " d.url FROM json_each(:urls) AS j JOIN pages AS p ON p.url = j.value"
    " LEFT JOIN pages AS d ON d.id = p.redirect_dest_id"
)


class UrlMatch(TypedDict):
    url: str
    """As listed."""
    normalized: str | None
    """Its normalised form (how the archive stores URLs); ``None``: not an http(s) URL."""
    matched: bool
    match: Literal["exact", "normalized"] | None
    """How it matched: as listed, or once normalised; ``None`` when it did not."""
    page_id: int | None
    archived_url: str | None
    """The URL of the page row it matched."""
    status: int | None
    """HTTP status (-1: no HTTP answer; ``None``: never fetched: out of scope, skipped, a
    link not followed)."""
    content_type: str | None
    is_external: bool | None
    is_skipped: bool | None
    skip_reason: str | None
    redirect_to: str | None
    """Where the page redirects to (the end of its redirects), when it is a redirect source."""


class UrlMatches(TypedDict):
    items: list[UrlMatch]
    total: int
    """Items of the list asked for (every listed URL, or only the unmatched ones)."""
    listed: int
    """Distinct URLs listed (a repeat is listed once)."""
    matched: int
    unmatched: int
    offset: int
    limit: int


def _batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _item(url: str, normal: str | None, row: tuple[Any, ...] | None,
          match: Literal["exact", "normalized"] | None) -> UrlMatch:
    if row is None:
        return {"url": url, "normalized": normal, "matched": False, "match": None,
                "page_id": None, "archived_url": None, "status": None, "content_type": None,
                "is_external": None, "is_skipped": None, "skip_reason": None,
                "redirect_to": None}
    archived, page_id, status, content_type, is_external, is_skipped, reason, dest = row
    return {"url": url, "normalized": normal, "matched": True, "match": match,
            "page_id": page_id, "archived_url": archived, "status": status,
            "content_type": content_type, "is_external": bool(is_external),
            "is_skipped": bool(is_skipped), "skip_reason": reason, "redirect_to": dest}


def match_urls(conn: sqlite3.Connection, urls: Sequence[str], *, unmatched_only: bool = False,
               limit: int = 100, offset: int = 0) -> UrlMatches:
    """For each of ``urls`` (in their order, repeats dropped), whether the archive has a page
    row for it, as listed or normalised, and that row's facts. ``unmatched_only``: list only
    the URLs it does not have (``matched`` and ``unmatched`` count all of them either way).
    ``ValueError`` for a ``limit`` or ``offset`` out of range."""
    check_paging(limit, offset)
    listed = list(dict.fromkeys(urls))
    normals = {url: normalize_url(url) for url in listed}
    wanted = dict.fromkeys([*listed, *(n for n in normals.values() if n)])
    rows: dict[str, tuple[Any, ...]] = {}
    for batch in _batches(wanted, _BATCH):
        for row in fetch_all(conn, _LOOKUP_SQL, {"urls": json.dumps(batch)}):
            rows[row[0]] = row
    found: list[tuple[str, Literal["exact", "normalized"] | None, tuple[Any, ...] | None]] = []
    for url in listed:
        normal = normals[url]
        if url in rows:
            found.append((url, "exact", rows[url]))
        elif normal is not None and normal in rows:
            found.append((url, "normalized", rows[normal]))
        else:
            found.append((url, None, None))
    matched = sum(1 for _, how, _ in found if how is not None)
    chosen = [entry for entry in found if entry[1] is None] if unmatched_only else found
    window = chosen[offset:offset + limit]
    return {"items": [_item(url, normals[url], row, how) for url, how, row in window],
            "total": len(chosen), "listed": len(listed), "matched": matched,
            "unmatched": len(listed) - matched, "offset": offset, "limit": limit}
