"""The URLs of an archive a recrawl fetches again (``nitpicker recrawl FILE URL…``): each with
the depth and follow mode it was crawled with.

A URL is in the archive when it has a page row (fetched, or a link found and not fetched);
its follow mode is its frontier row's (a full crawl, or the metadata-only check of a link out
of scope or of a list), else what its row says (out of scope: metadata-only).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import fetch_all

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = ["RecrawlTarget", "recrawl_targets"]


class RecrawlTarget(TypedDict):
    url: str
    depth: int
    """The page's depth (its frontier row's when the page has none; 0 for neither)."""
    mode: int | None
    """Its frontier row's follow mode (``FollowMode``); ``None`` when it has no row."""
    is_external: bool


_TARGETS_SQL = """SELECT p.url, coalesce(p.depth, f.depth, 0), f.mode, p.is_external
    FROM json_each(?) AS wanted
    JOIN pages AS p ON p.url = wanted.value
    LEFT JOIN frontier AS f ON f.key = (CASE
        WHEN p.url LIKE 'https:%' THEN substr(p.url, 7)
        WHEN p.url LIKE 'http:%' THEN substr(p.url, 6) ELSE p.url END)
    ORDER BY wanted.key"""
"""The frontier key is the URL without its scheme (:func:`nitpicker.policy.urls.frontier_key`)."""


def recrawl_targets(conn: sqlite3.Connection, urls: Sequence[str]) -> list[RecrawlTarget]:
    """The URLs of ``urls`` (normalised, as the archive keeps them) that the archive has, in
    the order given; a URL it does not have is left out."""
    return [{"url": url, "depth": int(depth), "mode": None if mode is None else int(mode),
             "is_external": bool(external)}
            for url, depth, mode, external in fetch_all(conn, _TARGETS_SQL,
                                                        (json.dumps(list(urls)),))]
