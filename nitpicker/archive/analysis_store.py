"""The analysis writer: what ``nitpicker analyze`` records in an archive (migration
``0013_analysis``).

:meth:`AnalysisStore.open` checks the file (read-only), takes the archive lock, refuses an
archive with no snapshot to analyse, and only then migrates: an archive it refuses is left
byte for byte as it was. The lock is held until :meth:`close`.

Per plugin run: :meth:`start_run` opens its row, :meth:`record` stores one page's findings
(replacing what the same plugin recorded for that page before), :meth:`record_error` a page the
plugin failed on, :meth:`end_run` closes the row with its outcome and counts. Writes are
batched: :meth:`maybe_commit` commits every ``max_items`` pages or ``max_seconds``, so Ctrl-C
or a kill loses at most one batch, which a re-run analyses again.

A value that is a float but not a finite number (NaN, infinity) is stored as ``null``, an empty
cell: JSON has no such numbers (the archive's ``NaN`` text would break every strict JSON reader
downstream: the viewer, ``query``, the MCP server, the XLSX and Sheets reports). The page is not
refused for it: its other values and violations are good, and refusing it would analyse it again
on every run for the same answer. The first such value of a run is logged, and the run's count
of them once it ends (:attr:`AnalysisStore.non_finite`).

Reading snapshots for the runner (:meth:`pending_snapshots`) goes through a second, read-only
connection, in pages of ``batch`` rows by page id: memory does not grow with the archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from nitpicker.archive.connection import connect, now
from nitpicker.archive.disk_full import is_disk_full, write_failure
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.schema import SchemaError, migrate
from nitpicker.archive.writer import ArchiveError, check_archive_file
from nitpicker.findings import Findings, PageUrl, Snapshot, Violation
from nitpicker.query.connection import open_archive
from nitpicker.query.fingerprint import violation_fingerprint
from nitpicker.query.snapshot_encoding import DecodeError, decode

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

__all__ = ["PAGE", "URL", "AnalysisStore", "RunKey", "UnreadableSnapshot", "is_disk_full",
           "settings_hash", "write_failure"]

PAGE: Final = "page"
"""The phase of ``each_page`` (a snapshot)."""
URL: Final = "url"
"""The phase of ``each_url`` (a URL, internal or external)."""

logger = logging.getLogger(__name__)

_ANALYSABLE: Final = (
    "p.scraped = 1 AND p.is_external = 0 AND p.content_type = 'text/html'"
    " AND p.redirect_dest_id IS NULL"
)
"""Internal HTML pages (a snapshot is kept only for those)."""

_COUNT_SNAPSHOTS: Final = (
    f"SELECT count(*) FROM pages p JOIN snapshots s ON s.page_id = p.id WHERE {_ANALYSABLE}"
)

_SELECTED: Final = "(:everything OR p.id IN (SELECT page_id FROM temp.selected_pages))"
"""The pages :meth:`AnalysisStore.restrict` limited the run to (``--sample``, ``--pages``)."""

_COUNT_SELECTED: Final = f"{_COUNT_SNAPSHOTS} AND {_SELECTED}"

_NOT_DONE: Final = (
    "NOT EXISTS (SELECT 1 FROM analyzed_pages a WHERE a.plugin = :plugin AND a.phase = :phase"
    " AND a.page_id = p.id AND a.version = :version AND a.settings_hash = :hash AND a.ok = 1)"
)

_PENDING_PAGE: Final = (
    "SELECT p.id, p.url, s.encoding, s.html FROM pages p JOIN snapshots s ON s.page_id = p.id"
    f" WHERE {_ANALYSABLE} AND p.id > :after AND ({_NOT_DONE} OR :force) AND {_SELECTED}"
    " ORDER BY p.id LIMIT :batch"
)

_PAGE_RESOURCES: Final = (
    "SELECT rr.page_id, r.url FROM resource_referrers rr JOIN resources r ON r.id = rr.resource_id"
    " WHERE rr.page_id BETWEEN :first AND :last"
)
"""The sub-resources the crawl recorded for a range of pages."""

_CRAWLED_ORIGIN: Final = (
    "SELECT 1 FROM pages WHERE is_external = 0 AND url >= :origin || '/'"
    " AND url < :origin || '0' LIMIT 1"
)
"""Whether the crawl has an internal page on ``origin`` (``scheme://host[:port]``): the URLs
starting ``origin/`` (``'0'`` follows ``'/'``), found in the index ``pages(is_external, url)``."""

_COUNT_PENDING: Final = (
    "SELECT count(*) FROM pages p JOIN snapshots s ON s.page_id = p.id"
    f" WHERE {_ANALYSABLE} AND ({_NOT_DONE} OR :force) AND {_SELECTED}"
)

_FETCHED_URL: Final = "p.status IS NOT NULL AND p.redirect_dest_id IS NULL"
"""Every URL ``each_url`` sees: fetched (or tried: status -1), not a redirect source."""

_PENDING_URL: Final = (
    f"SELECT p.id, p.url, p.is_external FROM pages p WHERE {_FETCHED_URL} AND p.id > :after"
    f" AND ({_NOT_DONE} OR :force) AND {_SELECTED} ORDER BY p.id LIMIT :batch"
)

_COUNT_URLS: Final = f"SELECT count(*) FROM pages p WHERE {_FETCHED_URL} AND {_SELECTED}"

_COUNT_PENDING_URLS: Final = (
    f"SELECT count(*) FROM pages p WHERE {_FETCHED_URL} AND ({_NOT_DONE} OR :force)"
    f" AND {_SELECTED}"
)


def settings_hash(settings: Mapping[str, Any]) -> str:
    """The settings' fingerprint: sha256 of their canonical JSON (keys sorted)."""
    canonical = json.dumps(settings, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                           default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class UnreadableSnapshot:
    """A page whose stored snapshot cannot be read (its blob fails decompression): no plugin
    sees it; the runner records ``error`` as the page's error for each plugin."""

    page_id: int
    url: str
    error: str


def _snapshot(page_id: int, url: str, encoding: str, blob: bytes,
              resources: frozenset[str]) -> Snapshot | UnreadableSnapshot:
    try:
        data = decode(encoding, blob)
    except DecodeError as exc:  # a corrupt blob: that page's error, not the whole run's
        return UnreadableSnapshot(page_id, url, "the snapshot cannot be read:"
                                  f" {type(exc).__module__}.{type(exc).__name__}: {exc}")
    return Snapshot(page_id=page_id, url=url, html=data.decode("utf-8", errors="replace"),
                    resources=resources)


def _details(violation: Violation) -> tuple[str, str | None, str | None, str | None,
                                           str | None]:
    """The engine's facts beside the rule (migration ``0021_violation_details``): status,
    impact, tags (a JSON list, ``NULL`` when none), help URL, failure summary."""
    tags = json.dumps(list(violation.tags), ensure_ascii=False) if violation.tags else None
    return (violation.status, violation.impact, tags, violation.help_url,
            violation.summary)


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL as the archive spells it (no parsing: the page rows
    it is compared with are spelled by the same crawl)."""
    start = url.find("//") + 2
    end = url.find("/", start) if start > 1 else -1
    return url if end < 0 else url[:end]


class RunKey:
    """What makes two analyses of a page the same: plugin, version and settings."""

    __slots__ = ("hash", "plugin", "version")

    def __init__(self, plugin: str, version: str, settings: Mapping[str, Any]) -> None:
        self.plugin = plugin
        self.version = version
        self.hash = settings_hash(settings)

    def params(self, phase: str = PAGE) -> dict[str, str]:
        return {"plugin": self.plugin, "version": self.version, "hash": self.hash,
                "phase": phase}


class AnalysisStore:
    """The one writer of analysis results into an archive, holding its lock."""

    def __init__(self, path: Path, conn: sqlite3.Connection, reader: sqlite3.Connection,
                 lock: ArchiveLock) -> None:
        self.path = path
        self.conn = conn
        self._reader = reader
        self._lock = lock
        self._dirty = 0
        self._last_commit = time.monotonic()
        self._crawled: dict[str, bool] = {}  # origin -> whether the crawl has a page there
        self.non_finite: dict[int, int] = {}
        """Per run id: the values stored as ``null`` because they were NaN or infinite."""
        self._non_finite_plugin: dict[int, str] = {}
        self.scope: dict[str, Any] | None = None
        """What :meth:`restrict` limited the run to; ``None``: every page."""
        reader.execute("CREATE TEMP TABLE IF NOT EXISTS selected_pages"
                       " (page_id INTEGER PRIMARY KEY)")

    @classmethod
    def open(cls, path: Path) -> AnalysisStore:
        """Check, lock and migrate the archive; raise ``ArchiveError`` (one line) when it is
        not an archive, is locked, or has no snapshot. Nothing is written before all three
        checks have passed."""
        check_archive_file(path)
        lock = ArchiveLock(path, command="analyze")
        try:
            lock.acquire()
        except OSError as exc:  # a read-only directory or a full disk: no lock can be taken
            reason = write_failure(path, exc) if is_disk_full(path, exc) else (
                f"{path}: cannot take the archive lock ({exc})")
            raise ArchiveError(reason) from exc
        try:
            reader = open_archive(path)
            try:
                snapshots = int(reader.execute(_COUNT_SNAPSHOTS).fetchone()[0])
            except sqlite3.DatabaseError as exc:
                reader.close()
                raise ArchiveError(f"{path}: corrupt archive ({exc})") from exc
            if not snapshots:
                reader.close()
                raise ArchiveError(
                    f"{path}: the archive has no HTML snapshot to analyse (no internal HTML "
                    "page was crawled)")
            try:
                conn = connect(path)
            except sqlite3.Error as exc:  # WAL mode needs its files: a full disk
                reader.close()
                raise ArchiveError(write_failure(path, exc)) from exc
            try:
                migrate(conn)
                store = cls(path, conn, reader, lock)
                store._mark_lost()
            except (SchemaError, sqlite3.Error) as exc:  # a newer schema; a full disk
                _close_quietly(conn)
                reader.close()
                raise ArchiveError(write_failure(path, exc)) from exc
        except BaseException:
            lock.release()
            raise
        return store

    # -- reading what to analyse -------------------------------------------------------------

    def restrict(self, page_ids: Iterable[int], scope: Mapping[str, Any]) -> None:
        """Analyse only these pages (``--sample``, ``--pages``); ``scope`` is recorded with
        each run that follows (``analysis_runs.scope``)."""
        self._reader.execute("DELETE FROM temp.selected_pages")
        self._reader.executemany("INSERT OR IGNORE INTO temp.selected_pages VALUES (?)",
                                 ((page_id,) for page_id in page_ids))
        self.scope = dict(scope)

    def _params(self, key: RunKey | None = None, phase: str = PAGE) -> dict[str, Any]:
        return {**(key.params(phase) if key is not None else {}),
                "everything": int(self.scope is None)}

    def pending_count(self, key: RunKey, *, force: bool) -> int:
        """Pages with a snapshot that this plugin, version and settings have not analysed
        (every one with ``force``)."""
        row = self._reader.execute(_COUNT_PENDING, {**self._params(key), "force": int(force)})
        return int(row.fetchone()[0])

    def snapshot_count(self) -> int:
        return int(self._reader.execute(_COUNT_SELECTED, self._params()).fetchone()[0])

    def url_count(self) -> int:
        """URLs ``each_url`` sees (fetched, not redirect sources)."""
        return int(self._reader.execute(_COUNT_URLS, self._params()).fetchone()[0])

    def pending_url_count(self, key: RunKey, *, force: bool) -> int:
        row = self._reader.execute(_COUNT_PENDING_URLS,
                                   {**self._params(key, URL), "force": int(force)})
        return int(row.fetchone()[0])

    def pending_urls(self, key: RunKey, *, force: bool, batch: int = 500) -> Iterator[PageUrl]:
        """The URLs ``each_url`` has not seen with this version and settings, by page id."""
        after = 0
        params: dict[str, Any] = {**self._params(key, URL), "force": int(force),
                                  "batch": batch}
        while True:
            rows = self._reader.execute(_PENDING_URL, {**params, "after": after}).fetchall()
            if not rows:
                return
            for page_id, url, is_external in rows:
                yield PageUrl(page_id=page_id, url=url, is_external=bool(is_external))
            after = rows[-1][0]
    def pending_snapshots(self, key: RunKey, *, force: bool, batch: int = 50
                          ) -> Iterator[Snapshot | UnreadableSnapshot]:
        """The pages to analyse, by page id, read ``batch`` rows at a time (a page whose
        snapshot cannot be read as an :class:`UnreadableSnapshot`).

        The reader sees the file as committed: a page recorded in this run is committed
        before the next batch is read or is past the last id read, so nothing is read twice.
        """
        after = 0
        params: dict[str, Any] = {**self._params(key), "force": int(force), "batch": batch}
        while True:
            rows = self._reader.execute(_PENDING_PAGE, {**params, "after": after}).fetchall()
            if not rows:
                return
            resources = self._own_resources(rows[0][0], rows[-1][0])
            for page_id, url, encoding, blob in rows:
                yield _snapshot(page_id, url, encoding, blob,
                                frozenset(resources.get(page_id, ())))
            after = rows[-1][0]
            del rows

    def _own_resources(self, first: int, last: int) -> dict[int, list[str]]:
        """The sub-resources the crawl recorded for the pages ``first``…``last``, on a host the
        crawl crawled (:attr:`Snapshot.resources`), by page id."""
        found: dict[int, list[str]] = {}
        for page_id, url in self._reader.execute(_PAGE_RESOURCES,
                                                 {"first": first, "last": last}):
            origin = _origin(url)
            crawled = self._crawled.get(origin)
            if crawled is None:
                crawled = self._crawled[origin] = self._reader.execute(
                    _CRAWLED_ORIGIN, {"origin": origin}).fetchone() is not None
            if crawled:
                found.setdefault(page_id, []).append(url)
        return found

    # -- writing -----------------------------------------------------------------------------

    def start_run(self, key: RunKey, settings: Mapping[str, Any],
                  headers: Mapping[str, str]) -> int:
        cursor = self.conn.execute(
            "INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
            " started_at, outcome, scope) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)",
            (key.plugin, key.version, key.hash,
             json.dumps(settings, ensure_ascii=False, sort_keys=True, default=str),
             json.dumps(dict(headers), ensure_ascii=False), os.getpid(), now(),
             None if self.scope is None else json.dumps(self.scope)),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _begin(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")

    @contextlib.contextmanager
    def _one_page(self) -> Iterator[None]:
        """One page's writes, all or none, inside the open batch: a Ctrl-C between two of
        them must not commit a page whose old findings are gone and new ones missing."""
        self._begin()
        self.conn.execute("SAVEPOINT page")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO page")
            self.conn.execute("RELEASE page")
            raise
        self.conn.execute("RELEASE page")

    def _forget(self, key: RunKey, phase: str, page_id: int) -> None:
        for table in ("page_values", "violations"):  # names from this tuple, never input
            self.conn.execute(
                f"DELETE FROM {table} WHERE plugin = ? AND phase = ? AND page_id = ?",
                (key.plugin, phase, page_id))

    def _mark(self, key: RunKey, phase: str, run_id: int, page_id: int, ok: bool) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO analyzed_pages(plugin, phase, page_id, run_id, version,"
            " settings_hash, ok) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key.plugin, phase, page_id, run_id, key.version, key.hash, int(ok)),
        )
        self._dirty += 1

    def record(self, key: RunKey, run_id: int, item: Snapshot | PageUrl,
               findings: Findings | None, phase: str = PAGE) -> None:
        """Store one page's findings (``None``: analysed, nothing to record), replacing what
        this plugin's ``phase`` recorded for the page before."""
        with self._one_page():
            self._record(key, run_id, item, findings, phase)

    def _record(self, key: RunKey, run_id: int, item: Snapshot | PageUrl,
                findings: Findings | None, phase: str) -> None:
        self._forget(key, phase, item.page_id)
        if findings is not None:
            self.conn.executemany(
                "INSERT OR REPLACE INTO page_values(plugin, page_id, key, phase, value, note)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(key.plugin, item.page_id, name, phase,
                  self._stored(key, run_id, item, name, cell.value), cell.note)
                 for name, cell in findings.values.items()],
            )
            self.conn.executemany(
                "INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, code,"
                " message, url, location, element, fingerprint, status, impact, tags, help_url,"
                " summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(item.page_id, key.plugin, phase, v.validator, v.severity, v.rule,
                  v.code or "", v.message, v.url or item.url, v.location, v.element,
                  violation_fingerprint(v.validator, v.rule, v.url or item.url, v.element,
                                        v.code, v.message), *_details(v))
                 for v in findings.violations],
            )
        self._mark(key, phase, run_id, item.page_id, ok=True)

    def _stored(self, key: RunKey, run_id: int, item: Snapshot | PageUrl, name: str,
                value: Any) -> str:
        """A page value as the archive keeps it (JSON): a non-finite float as ``null``."""
        if isinstance(value, float) and not math.isfinite(value):
            seen = self.non_finite.get(run_id, 0)
            self.non_finite[run_id] = seen + 1
            if not seen:
                self._non_finite_plugin[run_id] = key.plugin
                logger.warning("plugin %s gave %r for %r on %s, not a finite number: stored as"
                               " empty (null); its run counts any more", key.plugin, value,
                               name, item.url)
            return "null"
        return json.dumps(value, ensure_ascii=False)

    def record_error(self, key: RunKey, run_id: int,
                     item: Snapshot | PageUrl | UnreadableSnapshot, message: str,
                     phase: str = PAGE) -> None:
        """The plugin failed twice on this page: a plugin error; the page is analysed again by
        the next run."""
        with self._one_page():
            self._forget(key, phase, item.page_id)
            self.conn.execute(
                "INSERT INTO plugin_errors(run_id, plugin, phase, page_id, url, message,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, key.plugin, phase, item.page_id, item.url, message, now()),
            )
            self._mark(key, phase, run_id, item.page_id, ok=False)

    def maybe_commit(self, max_items: int = 100, max_seconds: float = 0.5) -> None:
        if self._dirty >= max_items or (
                self._dirty and time.monotonic() - self._last_commit >= max_seconds):
            self.commit()

    def commit(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self._dirty = 0
        self._last_commit = time.monotonic()

    def end_run(self, run_id: int, outcome: str, *, done: int, skipped: int, errors: int,
                detail: str | None = None) -> None:
        self.commit()
        if self.non_finite.get(run_id, 0) > 1:
            logger.warning("plugin %s: %d values were not finite numbers (NaN, infinity),"
                           " stored as empty (null)", self._non_finite_plugin[run_id],
                           self.non_finite[run_id])
        self.conn.execute(
            "UPDATE analysis_runs SET ended_at = ?, outcome = ?, pages_done = ?,"
            " pages_skipped = ?, errors = ?, detail = ? WHERE id = ?",
            (now(), outcome, done, skipped, errors, detail, run_id),
        )

    def _mark_lost(self) -> None:
        """Runs a killed process left ``running`` are ``lost`` (their committed pages stay)."""
        self.conn.execute(
            "UPDATE analysis_runs SET outcome = 'lost' WHERE outcome = 'running' AND pid != ?",
            (os.getpid(),))

    def abandon(self) -> None:
        """After a failed write (a full disk): drop the batch not committed, fold the WAL back
        into the file when SQLite can, release the lock. The pages committed before stay."""
        with contextlib.suppress(sqlite3.Error):
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        self._shut(logging.INFO)  # the caller says what failed, in one line

    def close(self) -> None:
        """Commit, fold the WAL back into the file, release the lock."""
        try:
            self.commit()
        except sqlite3.Error:
            self.abandon()
            raise
        self._shut(logging.WARNING)

    def _shut(self, level: int) -> None:
        try:
            self._reader.close()
            _close_quietly(self.conn, level)
        finally:
            self._lock.release()


def _close_quietly(conn: sqlite3.Connection, level: int = logging.INFO) -> None:
    """Fold the WAL back into the file and close. What SQLite refuses (a reader has the file
    open, the disk is full) stays in the WAL, where SQLite finds it the next time the archive
    is opened: logged at ``level``."""
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error as exc:
        logger.log(level, "archive left in WAL mode (%s)", exc)
    conn.close()
