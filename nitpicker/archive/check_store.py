"""Running the site checks over an archive and storing what they find (migration
``0020_findings``), each page's link score first (:mod:`nitpicker.archive.link_score`).

:func:`record_checks` runs every check of :mod:`nitpicker.query.checks` on a writer's
connection, in **one transaction**: the archive's check findings are replaced whole, or (an
error, Ctrl-C) left as they were. Each check is one ``INSERT … SELECT`` of its query, with its
id, priority, category and fingerprint (:mod:`nitpicker.query.fingerprint`); the analyzers'
violations written before the migration get their fingerprint too. A run is one row of
``check_runs``.

Two callers: the end of a crawl (``CrawlSession.close``, on the crawl's own writer) and
``nitpicker check FILE`` through :class:`CheckStore`, which checks the file, takes the archive
lock, migrates it (an archive of any older version can be checked), and folds the WAL back
into one file when it closes.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from nitpicker.archive.connection import connect, now
from nitpicker.archive.content_clusters import ContentClusterSummary, record_content_clusters
from nitpicker.archive.link_score import LinkScoreSummary, record_link_scores
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.schema import SchemaError, migrate
from nitpicker.archive.writer import ArchiveError, check_archive_file
from nitpicker.policy.near_duplicate import NEAR_DUPLICATE_THRESHOLD
from nitpicker.query._common import register_functions
from nitpicker.query.checks import CHECKS, Check
from nitpicker.query.fingerprint import (
    FINDING_FINGERPRINT_FUNCTION,
    VIOLATION_FINGERPRINT_FUNCTION,
    register_fingerprint,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from nitpicker.archive.close_reader import ComputedLinkScores

__all__ = ["CheckRunSummary", "CheckStore", "record_checks"]

logger = logging.getLogger(__name__)

_INSERT: Final = f"""INSERT INTO check_findings(rule, priority, category, page_id, url, element,
    message, fingerprint)
SELECT :rule, :priority, :category, c.page_id, c.url, c.element, c.message,
    {FINDING_FINGERPRINT_FUNCTION}(:rule, c.url, c.element) FROM ({{sql}}) AS c"""
"""``{sql}``: a check's query, a constant of the registry (never input)."""

_FILL_VIOLATION_FINGERPRINTS: Final = (
    f"UPDATE violations SET fingerprint = {VIOLATION_FINGERPRINT_FUNCTION}(validator, rule,"
    " url, element, code, message) WHERE fingerprint IS NULL")

_RECORD_RUN: Final = ("INSERT INTO check_runs(started_at, ended_at, checks, findings)"
                      " VALUES (?, ?, ?, ?)")


@dataclass
class CheckRunSummary:
    """What one run of the checks found."""

    checks: int = 0
    findings: int = 0
    by_priority: Counter[str] = field(default_factory=Counter)
    """Findings by priority."""
    elapsed: float = 0.0
    """Seconds."""
    link_scores: LinkScoreSummary | None = None
    """The link scores computed first (:mod:`nitpicker.archive.link_score`)."""
    content_clusters: ContentClusterSummary | None = None
    """The near-duplicate clusters computed first (:mod:`nitpicker.archive.content_clusters`)."""


def record_checks(conn: sqlite3.Connection, checks: Sequence[Check] = CHECKS, *,
                  on_check: Callable[[Check, int], None] | None = None,
                  link_scores: bool = True,
                  computed_scores: ComputedLinkScores | None = None,
                  near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD) -> CheckRunSummary:
    """Run ``checks`` on ``conn`` (a writer's autocommit connection, the archive migrated)
    and replace the archive's check findings with theirs, in one transaction, the pages'
    link scores computed first (``link_scores``: false when the caller has; only stored when
    ``computed_scores`` gives them, computed from the archive as it is), and the
    near-duplicate clusters at ``near_duplicate_threshold``. ``on_check(check,
    findings)`` is called after each check. Raises what SQLite raises, the transaction then
    rolled back."""
    register_functions(conn)
    register_fingerprint(conn)
    summary = CheckRunSummary()
    started_at, started = now(), time.monotonic()
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    try:
        if link_scores:
            summary.link_scores = record_link_scores(conn, computed_scores)
        summary.content_clusters = record_content_clusters(conn, near_duplicate_threshold)
        conn.execute("DELETE FROM check_findings")
        for check in checks:
            params = {**check.params, "rule": check.id, "priority": check.priority,
                      "category": check.category}
            found = conn.execute(_INSERT.format(sql=check.sql), params).rowcount
            summary.checks += 1
            summary.findings += found
            summary.by_priority[check.priority] += found
            if on_check is not None:
                on_check(check, found)
        conn.execute(_FILL_VIOLATION_FINGERPRINTS)
        conn.execute(_RECORD_RUN, (started_at, now(), summary.checks, summary.findings))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    summary.elapsed = time.monotonic() - started
    return summary


class CheckStore:
    """``nitpicker check FILE``'s hold on an archive: its lock and a writer's connection."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: ArchiveLock) -> None:
        self.path = path
        self.conn = conn
        self._lock = lock

    @classmethod
    def open(cls, path: Path) -> CheckStore:
        """Check, lock and migrate the archive; ``ArchiveError`` (one line) when it is not an
        archive or cannot be locked (``ArchiveLockError`` when another process holds it).
        Nothing is written before the checks have passed."""
        check_archive_file(path)
        lock = ArchiveLock(path)
        try:
            lock.acquire()
        except OSError as exc:  # a read-only directory: no lock can be taken
            raise ArchiveError(f"{path}: cannot take the archive lock ({exc})") from exc
        try:
            conn = connect(path)
            try:
                migrate(conn)
            except SchemaError as exc:
                conn.close()
                raise ArchiveError(f"{path}: {exc}") from exc
            except sqlite3.DatabaseError:
                conn.close()
                raise
        except BaseException:
            lock.release()
            raise
        return cls(path, conn, lock)

    def run(self, checks: Sequence[Check] = CHECKS, *,
            on_check: Callable[[Check, int], None] | None = None,
            near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD) -> CheckRunSummary:
        return record_checks(self.conn, checks, on_check=on_check,
                             near_duplicate_threshold=near_duplicate_threshold)

    def close(self) -> None:
        """Fold the WAL back into the file, release the lock."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try:
                self.conn.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.OperationalError as exc:  # a reader has the file open
                logger.warning("archive left in WAL mode (%s): %s", exc, self.path)
            self.conn.close()
        finally:
            self._lock.release()
