"""The figures the HTML report draws: distributions and top lists over the archive (``listed``:
over the listed pages, ``report --urls``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query._common import INTERNAL_HTML, has_migration, has_tables
from nitpicker.query.report_rows.listed import listed_filter

if TYPE_CHECKING:
    import sqlite3

__all__ = ["RESPONSE_TIME_BUCKETS", "SIZE_BUCKETS", "Bar", "broken_links_by_source",
           "pages_by_depth", "response_time_distribution", "size_distribution",
           "status_distribution", "top_violation_pages", "top_violation_rules"]

Bar = tuple[str, int]
"""One bar: its label and its value."""

SIZE_BUCKETS: Final = ((10_000, "< 10 KB"), (100_000, "10–100 KB"), (1_000_000, "100 KB–1 MB"),
                       (10_000_000, "1–10 MB"))

RESPONSE_TIME_BUCKETS: Final = ((100, "< 100 ms"), (250, "100–250 ms"), (500, "250–500 ms"),
                                (1_000, "500 ms–1 s"), (2_000, "1–2 s"), (5_000, "2–5 s"))

_LISTED: Final = f" AND {listed_filter('p.id')}"
"""Added to a chart's conditions on its pages ``p`` for a report of listed URLs."""


def _status(listed: str) -> str:
    return f"""SELECT coalesce(p.status, 'none'), count(*) FROM pages p WHERE 1{listed}
    GROUP BY p.status ORDER BY p.status IS NULL, p.status"""


def _depth(listed: str) -> str:
    return f"""SELECT p.depth, count(*) FROM pages p WHERE {INTERNAL_HTML}{listed}
    GROUP BY p.depth ORDER BY p.depth"""


def _sizes(listed: str) -> str:
    return f"""SELECT CASE {' '.join(f'WHEN p.content_length < {limit} THEN {n}'
                                     for n, (limit, _) in enumerate(SIZE_BUCKETS))}
    ELSE {len(SIZE_BUCKETS)} END, count(*) FROM pages p
    WHERE {INTERNAL_HTML} AND p.content_length IS NOT NULL{listed} GROUP BY 1 ORDER BY 1"""


def _response_times(listed: str) -> str:
    return f"""SELECT CASE {' '.join(
        f'WHEN p.response_time_ms < {limit} THEN {n}'
        for n, (limit, _) in enumerate(RESPONSE_TIME_BUCKETS))}
    ELSE {len(RESPONSE_TIME_BUCKETS)} END, count(*) FROM pages p
    WHERE {INTERNAL_HTML} AND p.response_time_ms IS NOT NULL{listed} GROUP BY 1 ORDER BY 1"""


_STATUS: Final = (_status(""), _status(_LISTED))
_DEPTH: Final = (_depth(""), _depth(_LISTED))
_SIZES: Final = (_sizes(""), _sizes(_LISTED))
_RESPONSE_TIMES: Final = (_response_times(""), _response_times(_LISTED))


def _broken_by_source(listed: str) -> str:
    return f"""SELECT s.url, count(*) FROM anchors a
    JOIN pages h ON h.id = a.href_id LEFT JOIN pages d ON d.id = h.redirect_dest_id
    JOIN pages s ON s.id = a.page_id
    WHERE h.is_skipped = 0 AND (coalesce(d.status, h.status) IS NULL
       OR coalesce(d.status, h.status) < 0
       OR (coalesce(d.status, h.status) >= 400 AND coalesce(d.status, h.status) != 401)){listed}
    GROUP BY s.url ORDER BY count(*) DESC, s.url LIMIT ?"""


def _violation_rules(listed: str) -> str:
    return f"""SELECT v.validator || ': ' || v.rule, count(*) FROM violations v WHERE 1{listed}
    GROUP BY v.validator, v.rule ORDER BY count(*) DESC, 1 LIMIT ?"""


def _violation_pages(listed: str) -> str:
    return f"""SELECT p.url, count(*) FROM violations v
    JOIN pages p ON p.id = v.page_id WHERE 1{listed}
    GROUP BY p.url ORDER BY count(*) DESC, p.url LIMIT ?"""


_BROKEN_BY_SOURCE: Final = (_broken_by_source(""),
                            _broken_by_source(f" AND {listed_filter('s.id')}"))
_VIOLATION_RULES: Final = (_violation_rules(""),
                           _violation_rules(f" AND {listed_filter('v.page_id')}"))
_VIOLATION_PAGES: Final = (_violation_pages(""), _violation_pages(_LISTED))
"""Each chart's statement: ``[listed]``, of every page (0) or of the listed ones (1)."""


def status_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """Recorded URLs per HTTP status (``-1`` a fetch error, ``none`` never fetched)."""
    return [(str(s), int(n)) for s, n in conn.execute(_STATUS[listed])]


def pages_by_depth(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per crawl depth."""
    return [(str(d) if d is not None else "?", int(n)) for d, n in conn.execute(_DEPTH[listed])]


def size_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per response size (``Content-Length``) bucket."""
    labels = [label for _, label in SIZE_BUCKETS] + ["≥ 10 MB"]
    return [(labels[b], int(n)) for b, n in conn.execute(_SIZES[listed])]


def response_time_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per response time bucket (request to response headers; a rendered
    page: its HTML preflight's). Empty when no page was timed (an archive before
    ``0014_response_time``)."""
    if not has_migration(conn, "0014_response_time"):
        return []
    labels = [label for _, label in RESPONSE_TIME_BUCKETS] + ["≥ 5 s"]
    return [(labels[b], int(n)) for b, n in conn.execute(_RESPONSE_TIMES[listed])]


def broken_links_by_source(conn: sqlite3.Connection, limit: int = 20, *,
                           listed: bool = False) -> list[Bar]:
    """The pages with the most bad links (no status, fetch error, 4xx but 401, 5xx)."""
    return [(u, int(n)) for u, n in conn.execute(_BROKEN_BY_SOURCE[listed], (limit,))]


def top_violation_rules(conn: sqlite3.Connection, limit: int = 20, *,
                        listed: bool = False) -> list[Bar]:
    """The most frequent ``validator: rule`` pairs; empty when never analysed."""
    if not has_tables(conn, "violations"):
        return []
    return [(r, int(n)) for r, n in conn.execute(_VIOLATION_RULES[listed], (limit,))]


def top_violation_pages(conn: sqlite3.Connection, limit: int = 20, *,
                        listed: bool = False) -> list[Bar]:
    """The pages with the most violations; empty when never analysed."""
    if not has_tables(conn, "violations"):
        return []
    return [(u, int(n)) for u, n in conn.execute(_VIOLATION_PAGES[listed], (limit,))]
