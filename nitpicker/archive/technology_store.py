"""Detecting the technologies of every page and storing them (migration ``0035_technologies``).

A post-crawl pass, never on the crawl's path: :func:`record_technologies` reads each page the
archive has a snapshot of, with its response headers and the resources it loaded
(:func:`nitpicker.query.technologies.iter_page_evidence`, one page at a time), matches it
against the fingerprint data set (:mod:`nitpicker.technologies`) and writes what it finds, in
**one transaction**: the archive's technologies are replaced whole, or (an error, Ctrl-C)
left as they were. A pass is one row of ``technology_runs``.

``nitpicker technologies FILE`` holds the archive as ``nitpicker check`` does
(:class:`~nitpicker.archive.check_store.CheckStore`: checked, locked, migrated, the WAL
folded back when it closes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from nitpicker.archive.connection import now
from nitpicker.query.technologies import iter_page_evidence
from nitpicker.technologies import PageEvidence, detect

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from nitpicker.technologies import DataSet

__all__ = ["TechnologyRunSummary", "record_technologies"]

_CLEAR: Final = ("DELETE FROM page_technologies", "DELETE FROM technology_categories",
                 "DELETE FROM technologies")
_TECHNOLOGY: Final = "INSERT INTO technologies(name, website, description) VALUES (?, ?, ?)"
_CATEGORY: Final = ("INSERT OR IGNORE INTO technology_categories(technology_id, category)"
                    " VALUES (?, ?)")
_PAGE: Final = ("INSERT OR REPLACE INTO page_technologies(page_id, technology_id, version,"
                " confidence, evidence) VALUES (?, ?, ?, ?, ?)")
_RUN: Final = ("INSERT INTO technology_runs(data_set, started_at, ended_at, pages, technologies)"
               " VALUES (?, ?, ?, ?, ?)")


@dataclass
class TechnologyRunSummary:
    """What one pass found."""

    data_set: str = ""
    pages: int = 0
    """Pages read."""
    technologies: dict[str, int] = field(default_factory=dict)
    """Technology → pages it was found on."""
    elapsed: float = 0.0


def record_technologies(conn: sqlite3.Connection, data_set: DataSet, *,
                        on_page: Callable[[int], None] | None = None) -> TechnologyRunSummary:
    """Detect the technologies of every page with a snapshot and replace the archive's with
    them, in one transaction on ``conn`` (a writer's autocommit connection, the archive
    migrated). ``on_page(done)`` is called after each page."""
    summary = TechnologyRunSummary(data_set.name)
    started_at, started = now(), time.monotonic()
    ids: dict[str, int] = {}
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _CLEAR:
            conn.execute(statement)
        for page in iter_page_evidence(conn):
            evidence = PageEvidence(page["url"], page["html"], page["headers"],
                                    page["resources"])
            rows = []
            for detection in detect(data_set, evidence):
                technology_id = ids.get(detection.name)
                if technology_id is None:
                    technology_id = ids[detection.name] = _add_technology(
                        conn, data_set, detection.name)
                rows.append((page["page_id"], technology_id, detection.version,
                             detection.confidence, detection.evidence))
                summary.technologies[detection.name] = (
                    summary.technologies.get(detection.name, 0) + 1)
            conn.executemany(_PAGE, rows)
            summary.pages += 1
            if on_page is not None:
                on_page(summary.pages)
        conn.execute(_RUN, (data_set.name, started_at, now(), summary.pages, len(ids)))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    summary.elapsed = time.monotonic() - started
    return summary


def _add_technology(conn: sqlite3.Connection, data_set: DataSet, name: str) -> int:
    technology = data_set.technologies[name]
    cursor = conn.execute(_TECHNOLOGY, (name, technology.website, technology.description))
    technology_id = int(cursor.lastrowid or 0)
    conn.executemany(_CATEGORY, [(technology_id, c) for c in technology.categories])
    return technology_id
