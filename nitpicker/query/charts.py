"""The count behind every chart: the viewer's Summary and the HTML report both draw from here,
each its own way (the viewer's geometry in :mod:`nitpicker.viewer.charts` and its template,
the report's SVG in ``reports/svg.py``), so a chart both show counts the same rows in both.

A chart is a list of bars, ``(label, count)``, in the order drawn. ``listed=True``: over the
pages of ``report --urls`` only (:func:`~nitpicker.query._common.listed_filter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import (
    INTERNAL_HTML,
    PAGE_LIST_BASE,
    fetch_all,
    has_migration,
    has_tables,
    listed_filter,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["NEVER_FETCHED", "RESPONSE_TIME_BUCKETS", "SIZE_BUCKETS", "Bar", "Distributions",
           "LabelCount", "broken_links_by_source", "content_types", "findings_by_validator",
           "get_distributions", "pages_by_depth", "response_time_distribution",
           "size_distribution", "status_counts", "status_distribution", "top_violation_pages",
           "top_violation_rules"]

Bar = tuple[str, int]
"""One bar: its label and its value."""

NEVER_FETCHED: Final = "never"
"""The label of the status bar of pages never fetched (no status)."""

UNKNOWN_DEPTH: Final = "unknown"
"""The label of the depth bar of pages whose depth was not recorded."""

SIZE_BUCKETS: Final = ((10_000, "< 10 KB"), (100_000, "10–100 KB"), (1_000_000, "100 KB–1 MB"),
                       (10_000_000, "1–10 MB"))

RESPONSE_TIME_BUCKETS: Final = ((100, "< 100 ms"), (250, "100–250 ms"), (500, "250–500 ms"),
                                (1_000, "500 ms–1 s"), (2_000, "1–2 s"), (5_000, "2–5 s"))

_LISTED: Final = f" AND {listed_filter('p.id')}"
"""Added to a chart's conditions on its pages ``p`` for a report of listed URLs."""


def _status(listed: str) -> str:
    return f"""SELECT p.status, count(*) FROM pages p
    WHERE {PAGE_LIST_BASE} AND +p.is_skipped = 0{listed}
    GROUP BY p.status ORDER BY p.status IS NULL, p.status"""


def _depth(listed: str) -> str:
    return f"""SELECT p.depth, count(*) FROM pages p WHERE {INTERNAL_HTML}{listed}
    GROUP BY p.depth ORDER BY p.depth IS NULL, p.depth"""


def _content_types(listed: str) -> str:
    return f"""SELECT coalesce(nullif(p.content_type, ''), 'unknown'), count(*)
    FROM pages p WHERE +p.scraped = 1 AND +p.redirect_dest_id IS NULL{listed}
    GROUP BY 1 ORDER BY 2 DESC, 1"""


def _validators(listed: str) -> str:
    return f"""SELECT v.validator, count(*) FROM violations v WHERE 1{listed}
    GROUP BY v.validator ORDER BY 2 DESC, 1"""


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


_ON_VIOLATION: Final = f" AND {listed_filter('v.page_id')}"

_STATUS: Final = (_status(""), _status(_LISTED))
_DEPTH: Final = (_depth(""), _depth(_LISTED))
_CONTENT_TYPES: Final = (_content_types(""), _content_types(_LISTED))
_VALIDATORS: Final = (_validators(""), _validators(_ON_VIOLATION))
_SIZES: Final = (_sizes(""), _sizes(_LISTED))
_RESPONSE_TIMES: Final = (_response_times(""), _response_times(_LISTED))
_BROKEN_BY_SOURCE: Final = (_broken_by_source(""),
                            _broken_by_source(f" AND {listed_filter('s.id')}"))
_VIOLATION_RULES: Final = (_violation_rules(""), _violation_rules(_ON_VIOLATION))
_VIOLATION_PAGES: Final = (_violation_pages(""), _violation_pages(_LISTED))
"""Each chart's statement: ``[listed]``, of every page (0) or of the listed ones (1)."""


def status_counts(conn: sqlite3.Connection, *,
                  listed: bool = False) -> list[tuple[int | None, int]]:
    """Pages per HTTP status, ascending, ``None`` (never fetched) last; ``-1`` a fetch error.
    The pages: the page list's rows (SPEC §5: no redirect source, no known non-HTML), skipped
    ones left out — what ``query summary``'s ``status_distribution`` counts."""
    return [(s, int(n)) for s, n in fetch_all(conn, _STATUS[listed])]


def status_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """:func:`status_counts` as bars (:data:`NEVER_FETCHED` for no status)."""
    return [(NEVER_FETCHED if s is None else str(s), n)
            for s, n in status_counts(conn, listed=listed)]


def pages_by_depth(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per crawl depth (``"0"`` the roots), shallowest first; a depth not
    recorded is :data:`UNKNOWN_DEPTH`, last."""
    return [(UNKNOWN_DEPTH if d is None else str(d), int(n))
            for d, n in fetch_all(conn, _DEPTH[listed])]


def content_types(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """Fetched URLs (redirect sources left out) per content type, most first; ``"unknown"``
    when the response named none."""
    return [(str(t), int(n)) for t, n in fetch_all(conn, _CONTENT_TYPES[listed])]


def findings_by_validator(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """Analyzer findings per validator, most first; empty when never analysed."""
    if not has_tables(conn, "violations"):
        return []
    return [(str(v), int(n)) for v, n in fetch_all(conn, _VALIDATORS[listed])]


def size_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per response size (``Content-Length``) bucket."""
    labels = [label for _, label in SIZE_BUCKETS] + ["≥ 10 MB"]
    return [(labels[b], int(n)) for b, n in fetch_all(conn, _SIZES[listed])]


def response_time_distribution(conn: sqlite3.Connection, *, listed: bool = False) -> list[Bar]:
    """In-scope HTML pages per response time bucket (request to response headers; a rendered
    page: its HTML preflight's). Empty when no page was timed (an archive before
    ``0014_response_time``)."""
    if not has_migration(conn, "0014_response_time"):
        return []
    labels = [label for _, label in RESPONSE_TIME_BUCKETS] + ["≥ 5 s"]
    return [(labels[b], int(n)) for b, n in fetch_all(conn, _RESPONSE_TIMES[listed])]


def broken_links_by_source(conn: sqlite3.Connection, limit: int = 20, *,
                           listed: bool = False) -> list[Bar]:
    """The pages with the most bad links (no status, fetch error, 4xx but 401, 5xx)."""
    return [(u, int(n)) for u, n in fetch_all(conn, _BROKEN_BY_SOURCE[listed], (limit,))]


def top_violation_rules(conn: sqlite3.Connection, limit: int = 20, *,
                        listed: bool = False) -> list[Bar]:
    """The most frequent ``validator: rule`` pairs; empty when never analysed."""
    if not has_tables(conn, "violations"):
        return []
    return [(r, int(n)) for r, n in fetch_all(conn, _VIOLATION_RULES[listed], (limit,))]


def top_violation_pages(conn: sqlite3.Connection, limit: int = 20, *,
                        listed: bool = False) -> list[Bar]:
    """The pages with the most violations; empty when never analysed."""
    if not has_tables(conn, "violations"):
        return []
    return [(u, int(n)) for u, n in fetch_all(conn, _VIOLATION_PAGES[listed], (limit,))]


# -- the viewer's Summary charts, as JSON ---------------------------------------------------------


class LabelCount(TypedDict):
    label: str
    count: int


class Distributions(TypedDict):
    depth: list[LabelCount]
    """:func:`pages_by_depth`."""
    content_type: list[LabelCount]
    """:func:`content_types`."""
    validator: list[LabelCount]
    """:func:`findings_by_validator` (empty before any analysis)."""


def get_distributions(conn: sqlite3.Connection) -> Distributions:
    """Pages by depth, URLs by content type, findings by validator (the viewer's Summary)."""

    def rows(bars: list[Bar]) -> list[LabelCount]:
        return [{"label": label, "count": count} for label, count in bars]

    return {"depth": rows(pages_by_depth(conn)), "content_type": rows(content_types(conn)),
            "validator": rows(findings_by_validator(conn))}
