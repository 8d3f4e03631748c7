"""The archive summary: how many URLs of each kind a crawl recorded.

``summary`` feeds the crawl's closing lines; ``get_summary`` is the ``nitpicker query summary``
answer (SPEC §5.2 getSummary).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from typing_extensions import TypedDict

from nitpicker.query._common import INTERNAL_HTML, PAGE_LIST_BASE, fetch_one
from nitpicker.query.charts import status_counts

__all__ = [
    "ArchiveSummary",
    "MetadataFulfillment",
    "StatusCount",
    "Summary",
    "get_summary",
    "summary",
]


@dataclass(frozen=True)
class Summary:
    total_urls: int
    """Every row of the pages table (discovered, fetched, skipped)."""
    internal_pages: int
    """In-scope HTML pages fetched (redirect sources excluded)."""
    external_urls: int
    """Out-of-scope URLs recorded (fetched or not)."""
    redirects: int
    skipped: int
    fetch_errors: int
    """URLs that could not be fetched (status -1)."""
    status_4xx: int
    status_5xx: int
    pending: int
    """Frontier rows not yet crawled (a stopped crawl can be resumed)."""


def summary(conn: sqlite3.Connection) -> Summary:
    row = conn.execute(
        """SELECT
            count(*),
            count(*) FILTER (WHERE scraped = 1 AND is_external = 0 AND redirect_dest_id IS NULL
                             AND content_type = 'text/html'),
            count(*) FILTER (WHERE is_external = 1),
            count(*) FILTER (WHERE redirect_dest_id IS NOT NULL),
            count(*) FILTER (WHERE is_skipped = 1),
            count(*) FILTER (WHERE status = -1),
            count(*) FILTER (WHERE status BETWEEN 400 AND 499),
            count(*) FILTER (WHERE status BETWEEN 500 AND 599)
        FROM pages"""
    ).fetchone()
    pending = conn.execute("SELECT count(*) FROM frontier WHERE state < 2").fetchone()[0]
    total, internal, external, redirects, skipped, fetch_errors, s4xx, s5xx = row
    return Summary(total, internal, external, redirects, skipped, fetch_errors, s4xx, s5xx,
                   pending=pending)


class StatusCount(TypedDict):
    status: int | None
    count: int


class MetadataFulfillment(TypedDict):
    """Share (0–1) of internal HTML pages with a non-empty value for each field."""

    title: float
    description: float
    keywords: float
    og_title: float
    og_description: float
    og_image: float


class ArchiveSummary(TypedDict):
    base_url: str
    roots: list[str]
    total_pages: int
    """Page-list rows (SPEC §5: no redirect sources, no known non-HTML), skipped ones excluded."""
    internal_pages: int
    external_pages: int
    status_distribution: list[StatusCount]
    """Statuses of those rows, ascending, ``None`` (never fetched) last."""
    metadata_fulfillment: MetadataFulfillment


_FULFILLMENT_FIELDS = ("title", "description", "keywords", "og_title", "og_description", "og_image")

_LISTED = f"{PAGE_LIST_BASE} AND +p.is_skipped = 0"

_COUNTS_SQL = f"""SELECT count(*), count(*) FILTER (WHERE p.is_external = 0),
    count(*) FILTER (WHERE p.is_external = 1) FROM pages p WHERE {_LISTED}"""

_FULFILLMENT_SQL = "SELECT count(*), " + ", ".join(
    f"count(*) FILTER (WHERE p.{name} != '')" for name in _FULFILLMENT_FIELDS
) + f" FROM pages p WHERE {INTERNAL_HTML}"
"""(Two passes are quicker than one: a single pass would test both page sets on every row.)"""



def get_summary(conn: sqlite3.Connection) -> ArchiveSummary:
    """Base URL, roots, page counts, status distribution and metadata fulfilment shares."""
    info = fetch_one(conn, "SELECT base_url, roots FROM info WHERE id = 1")
    base_url, roots = (str(info[0]), list(json.loads(info[1]))) if info else ("", [])
    total, internal, external = fetch_one(conn, _COUNTS_SQL) or (0, 0, 0)
    html_pages, *filled = fetch_one(conn, _FULFILLMENT_SQL) or (0,) * 7
    statuses = status_counts(conn)  # the status chart's count (viewer, report)
    return {
        "base_url": base_url,
        "roots": roots,
        "total_pages": total,
        "internal_pages": internal,
        "external_pages": external,
        "status_distribution": [{"status": s, "count": n} for s, n in statuses],
        "metadata_fulfillment": _fulfillment(html_pages, filled),
    }


def _fulfillment(html_pages: int, filled: list[int]) -> MetadataFulfillment:
    title, description, keywords, og_title, og_description, og_image = (
        n / html_pages if html_pages else 0.0 for n in filled
    )
    return {
        "title": title,
        "description": description,
        "keywords": keywords,
        "og_title": og_title,
        "og_description": og_description,
        "og_image": og_image,
    }
