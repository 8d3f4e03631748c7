"""How an archive's pages spread: by crawl depth, by content type, and findings by validator
(the viewer's Summary charts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from nitpicker.query._common import INTERNAL_HTML, fetch_all, has_tables

if TYPE_CHECKING:
    import sqlite3

__all__ = ["Distributions", "LabelCount", "get_distributions"]


class LabelCount(TypedDict):
    label: str
    count: int


class Distributions(TypedDict):
    depth: list[LabelCount]
    """Internal HTML pages by crawl depth (``"0"`` the roots), shallowest first."""
    content_type: list[LabelCount]
    """Fetched URLs (redirect sources left out) by content type, most first; ``"unknown"``
    when the response named none."""
    validator: list[LabelCount]
    """Analyzer findings by validator, most first (empty before any analysis)."""


_DEPTH_SQL = f"""SELECT p.depth, count(*) FROM pages p WHERE {INTERNAL_HTML}
    GROUP BY p.depth ORDER BY p.depth IS NULL, p.depth"""

_CONTENT_TYPE_SQL = """SELECT coalesce(nullif(p.content_type, ''), 'unknown'), count(*)
    FROM pages p WHERE +p.scraped = 1 AND +p.redirect_dest_id IS NULL
    GROUP BY 1 ORDER BY 2 DESC, 1"""

_VALIDATOR_SQL = """SELECT validator, count(*) FROM violations GROUP BY validator
    ORDER BY 2 DESC, 1"""


def get_distributions(conn: sqlite3.Connection) -> Distributions:
    """Pages by depth, URLs by content type, findings by validator."""
    depth: list[LabelCount] = [{"label": "unknown" if d is None else str(d), "count": n}
                               for d, n in fetch_all(conn, _DEPTH_SQL)]
    content_type: list[LabelCount] = [{"label": t, "count": n}
                                      for t, n in fetch_all(conn, _CONTENT_TYPE_SQL)]
    validator: list[LabelCount] = (
        [{"label": v, "count": n} for v, n in fetch_all(conn, _VALIDATOR_SQL)]
        if has_tables(conn, "violations") else [])
    return {"depth": depth, "content_type": content_type, "validator": validator}
