"""The archive writer: the one connection that writes a ``.nitpicker`` file during a crawl.

Everything a crawl writes — page rows, anchors, images, snapshots, frontier inserts, leases
and acknowledgements — goes through this connection inside one open transaction, committed
in batches (:meth:`ArchiveWriter.maybe_commit`). A crash loses at most the uncommitted batch,
whose frontier rows are then still pending or leased and are fetched again on resume: no
page is lost and none is recorded twice.

:class:`ArchiveWriter` creates or reopens the file and owns what its parts share: the
connection, the lock, the open batch, the crawl's stored information, the size budget, the
close. Its parts write by concept, through the same connection and under the same mutex:

- ``writer.frontier`` (a :class:`~nitpicker.archive.frontier_port.FrontierPort`; here
  :class:`~nitpicker.archive.frontier_store.FrontierStore`): the frontier rows — add, lease,
  acknowledge, release, pending count;
- ``writer.runs`` (:class:`~nitpicker.archive.run_log.RunLog`): the run rows, lost runs,
  the trap cap's events and the signatures it capped;
- ``writer.pages`` (:class:`~nitpicker.archive.page_recorder.PageRecorder`): page rows and
  their children, sitemap listings, the URL order;
- ``writer.site`` (:class:`~nitpicker.archive.site_facts.SiteFacts`): the sitemap documents
  and what each lists, the https origins' certificates.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from nitpicker import __version__
from nitpicker.archive.budget import SizeBudget
from nitpicker.archive.click_depth import set_click_depths, store_click_depths
from nitpicker.archive.connection import connect, now, serialised, sorting_on_disk
from nitpicker.archive.frontier_store import FrontierStore
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.page_recorder import PageRecorder
from nitpicker.archive.run_log import RunLog
from nitpicker.archive.schema import SchemaError, migrate
from nitpicker.archive.site_facts import SiteFacts
from nitpicker.archive.template_store import KnownSkeletons
from nitpicker.errors import UserError
from nitpicker.query.connection import ArchiveOpenError, open_archive

if TYPE_CHECKING:
    from collections.abc import Callable

    from nitpicker.archive.frontier_port import FrontierPort

__all__ = ["ArchiveError", "ArchiveWriter", "CrawlOptions", "check_archive_file"]

logger = logging.getLogger(__name__)

_INBOUND_INDEX = "anchors_href_page"
_CREATE_INBOUND_INDEX = f"CREATE INDEX IF NOT EXISTS {_INBOUND_INDEX} ON anchors(href_id, page_id)"
_DEFER_FACTOR = 5
"""Defer the inbound-link index when the run may add a fifth or more of the pages there are."""


class ArchiveError(UserError):
    """The archive cannot be created or opened for writing; the message says why."""


class CrawlOptions(Protocol):
    """What the archive's ``info`` row keeps of a crawl's options (a
    :class:`~nitpicker.crawl.config.CrawlConfig`): the file, the name, the roots, every option
    as JSON."""

    @property
    def output(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    @property
    def roots(self) -> tuple[str, ...]: ...

    @property
    def list_mode(self) -> bool: ...

    def to_json(self) -> str: ...


class ArchiveWriter:
    """Creates or reopens an archive and records a crawl into it, through its parts."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: ArchiveLock | None) -> None:
        self.path = path
        self.conn = conn
        self._lock = lock
        """The lock this writer took and releases; ``None`` when the caller holds it."""
        self.mutex = self._mutex = threading.RLock()
        """One writer call at a time: the archive worker's thread and the reactor's share it,
        and the parts share it with the writer."""
        self.dirty = 0
        """Records written in the open batch (a page, a sitemap listing)."""
        self._last_commit = time.monotonic()
        self._finished = False
        self.budget = SizeBudget(conn)
        self.frontier: FrontierPort = self.make_frontier()
        self.runs = RunLog(self)
        self.pages = PageRecorder(self, self.frontier, self.budget)
        self.site = SiteFacts(self, self.pages)
        self.templates = KnownSkeletons()
        """The skeletons of the pages recorded by this writer (``record_templates`` at the
        close reads only the other pages' snapshots)."""
        self._after_commit: Callable[[], None] | None = None

    def use_frontier(self, frontier: FrontierPort, after_commit: Callable[[], None]) -> None:
        """Queue URLs in ``frontier`` instead of the archive's table (a shared frontier: this
        archive is one shard of a distributed crawl); ``after_commit`` runs after each commit,
        under the writer's mutex (the shared frontier's acknowledgements are sent then)."""
        self.frontier = frontier
        self.pages.use_frontier(frontier)
        self._after_commit = after_commit

    def make_frontier(self) -> FrontierPort:
        """The frontier part (before the page recorder, which acknowledges through it): the
        archive's table; a worker of ``--workers N`` leases it under its own token
        (:class:`~nitpicker.archive.shared_writer.SharedArchiveWriter`). A distributed crawl's
        shard swaps it for the shared store afterwards (:meth:`use_frontier`)."""
        return FrontierStore(self)

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def create(cls, config: CrawlOptions) -> ArchiveWriter:
        """Create a new archive at ``config.output``; refuses to overwrite a file."""
        path = Path(config.output)
        lock = ArchiveLock(path)
        lock.acquire()
        try:
            if path.exists():
                raise ArchiveError(
                    f"Output file already exists: {path} (use --resume to continue it, "
                    "or choose another --output)"
                )
            conn = connect(path)
            migrate(conn)
            conn.execute(
                "INSERT INTO info(id, version, name, base_url, roots, from_list, config, created_at)"
                " VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
                (
                    __version__,
                    config.name,
                    config.base_url,
                    json.dumps(list(config.roots)),
                    int(config.list_mode),
                    config.to_json(),
                    now(),
                ),
            )
        except BaseException:
            lock.release()
            raise
        return cls(path, conn, lock)

    @classmethod
    def reopen(cls, path: Path, lock: ArchiveLock | None = None) -> ArchiveWriter:
        """Open an existing archive to continue its crawl (``--resume``, ``--append``).

        ``lock``: the archive's lock, already held by the caller (an append holds it from
        before its backup to after its restore); the writer then leaves it held at close.
        Without it the writer takes the lock itself. Nothing is written before the file has
        passed :func:`check_archive_file` and the lock is held. Rows a killed run had leased
        are pending again; its run, if still ``running``, is marked lost.
        """
        check_archive_file(path)
        if lock is not None and not lock.held:
            raise ArchiveError(f"{path}: the lock handed to the writer is not held")
        owned = None
        if lock is None:
            owned = lock = ArchiveLock(path)
            lock.acquire()
        try:
            conn = connect(path)
            try:
                migrate(conn)
            except SchemaError as exc:
                conn.close()
                raise ArchiveError(f"{path}: {exc}") from exc
            writer = cls(path, conn, owned)
            writer.frontier.requeue_leased()
            writer.runs.mark_lost()
        except BaseException:
            if owned is not None:
                owned.release()
            raise
        return writer

    # -- the crawl's information ------------------------------------------------------------

    @serialised
    def update_info(self, config: CrawlOptions) -> None:
        """Store the crawl's (changed) roots and options, e.g. after ``--append``."""
        self.begin()
        self.conn.execute(
            "UPDATE info SET base_url = ?, roots = ?, from_list = ?, config = ? WHERE id = 1",
            (config.base_url, json.dumps(list(config.roots)), int(config.list_mode),
             config.to_json()),
        )

    @serialised
    def repromote(self, is_in_scope: Callable[[str], bool]) -> list[tuple[int, str]]:
        """Out-of-scope rows now in scope become pending pages again, their ids kept.

        Their fetched facts and child rows (anchors, images, headers, snapshot, resource
        referrers) are removed, and they are queued for a full crawl. Returns (id, url).
        """
        rows = self.pages.unfetch_now_in_scope(is_in_scope)
        self.frontier.repromote(url for _, url in rows)
        return rows

    @serialised
    def stored_roots(self) -> list[str]:
        row = self.conn.execute("SELECT roots FROM info WHERE id = 1").fetchone()
        return list(json.loads(row[0])) if row else []

    @serialised
    def update_roots(self, roots: tuple[str, ...]) -> None:
        """Store a changed root list (in ``info.roots`` and in the stored config)."""
        self.begin()
        self.conn.execute(
            "UPDATE info SET roots = ?, config = json_set(config, '$.roots', json(?)) WHERE id = 1",
            (json.dumps(list(roots)), json.dumps(list(roots))),
        )

    @serialised
    def stored_config_json(self) -> str:
        row = self.conn.execute("SELECT config FROM info WHERE id = 1").fetchone()
        if row is None:
            raise ArchiveError(f"{self.path}: the archive has no crawl information")
        return str(row[0])

    # -- the open batch ---------------------------------------------------------------------

    def begin(self) -> None:
        """Open the batch unless one is open (callers hold the mutex)."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")

    @serialised
    def commit(self) -> None:
        if self.conn.in_transaction:
            self.pages.store_signatures()
            self.conn.execute("COMMIT")
        self.dirty = 0
        self._last_commit = time.monotonic()
        if self._after_commit is not None:
            self._after_commit()

    @serialised
    def maybe_commit(self, max_items: int = 100, max_seconds: float = 0.2) -> None:
        """Commit when the batch is big or old enough."""
        if self.dirty >= max_items or (
            self.dirty and time.monotonic() - self._last_commit >= max_seconds
        ):
            self.commit()

    @serialised
    def rollback(self) -> None:
        """Drop the uncommitted batch (SQLite may have rolled it back already)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.dirty = 0
        self.pages.forget()  # ids and keys of the dropped batch may be gone
        self.frontier.forget()

    # -- the size budget and the inbound-link index -----------------------------------------

    @serialised
    def set_size_budget(self, max_bytes: int) -> None:
        """Cap the archive's size at ``max_bytes``: writes past it fail with SQLITE_FULL.

        The crawl gets the budget minus what closing the archive will write (the deferred
        inbound-link index, the URL order, statistics; re-estimated as pages and anchors
        are added); :meth:`finish` gets all of it. So a crawl that fills its share fails
        with ``disk_full`` and still closes within the budget.
        """
        self.budget.set(max_bytes)

    @serialised
    def defer_inbound_index(self, expected_pages: int) -> bool:
        """Drop the inbound-link index for the run when it is cheaper to build it at the end.

        Every anchor lands at a random place in ``anchors(href_id, page_id)``: kept up to date
        row by row it costs more than all the other anchor writes together, while building it
        once at :meth:`close` costs a sixth of that. A short resume of a big archive keeps it.
        While it is absent (a crawl running, or killed and not resumed yet), "who links here"
        queries scan the anchors table: slower, never wrong.
        """
        budget = self.budget
        scraped = int(self.conn.execute(
            "SELECT count(*) FROM pages WHERE scraped = 1").fetchone()[0])
        if expected_pages * _DEFER_FACTOR < scraped:
            budget.cap_for_close()  # building it is close work: the whole budget
            self.build_inbound_index()
            budget.inbound_deferred = False
            budget.cap_for_crawl()
            return False
        self.begin()
        self.conn.execute(f"DROP INDEX IF EXISTS {_INBOUND_INDEX}")
        self.commit()
        budget.inbound_deferred = True
        budget.cap_for_crawl()
        return True

    @serialised
    def build_inbound_index(self) -> None:
        """Create the inbound-link index if it is missing (sorted in temporary files)."""
        self.commit()
        with sorting_on_disk(self.conn):
            self.conn.execute(_CREATE_INBOUND_INDEX)

    # -- closing ----------------------------------------------------------------------------

    @serialised
    def finish(self, *, order: bool = False, click_depths: bool = True) -> None:
        """The close phase's writes, with the whole size budget: the URL order and the click
        depths (``order``; :mod:`~nitpicker.archive.click_depth`; ``click_depths`` false: read
        elsewhere, :meth:`store_click_depths` writes them), the inbound-link index, the
        readers' planner statistics.

        Raises what SQLite raises (``database or disk is full`` when even the whole budget
        is too small); the open batch is then rolled back and what was committed stays.
        Run once: :meth:`close` does not try again.
        """
        self._finished = True
        self.commit()
        self.budget.cap_for_close()
        try:
            if order:
                self.pages.set_url_order()
                if click_depths:
                    set_click_depths(self.conn)
            self.build_inbound_index()
            self.budget.inbound_deferred = False
            self.conn.execute("PRAGMA optimize")  # statistics for the readers' query planner
        except BaseException:
            self.rollback()
            raise

    @serialised
    def store_click_depths(self, changes: list[tuple[int, int | None]] | None) -> None:
        """After :meth:`finish` without them: the click depths another process read
        (:func:`~nitpicker.query.click_depth.read_click_depths`), or, ``None``, computed
        here; committed."""
        self.begin()
        try:
            if changes is None:
                set_click_depths(self.conn)
            else:
                store_click_depths(self.conn, changes)
        except BaseException:
            self.rollback()
            raise
        self.commit()

    @serialised
    def close(self) -> None:
        """Commit, :meth:`finish` (unless done), fold the WAL back into the file, release the
        lock (one this writer took). When it raises, the lock is still held: :meth:`abandon`.
        """
        if not self._finished:
            self.finish()
        self.commit()
        self.pages.signer.close()
        self._fold_wal()
        self.conn.close()
        if self._lock is not None:
            self._lock.release()

    def _fold_wal(self) -> None:
        """Checkpoint the WAL into the file and leave one plain SQLite file (no budget
        needed: the file holds no more pages than the WAL's last commit)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            self.conn.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError as exc:
            # A reader (query, MCP, viewer) has the file open: it stays in WAL mode,
            # complete and consistent; the next writer folds it back into one file.
            logger.warning("archive left in WAL mode (%s): %s", exc, self.path)

    @serialised
    def abandon(self) -> None:
        """Close without committing the open batch (when closing cleanly failed).

        What was committed is folded back into one file when SQLite can; when it cannot
        (the disk itself is full) the WAL keeps it and the next writer folds it back.
        """
        try:
            self.pages.signer.close()
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            try:
                self._fold_wal()
            except sqlite3.Error as exc:
                logger.warning("archive left in WAL mode (%s): %s", exc, self.path)
            self.conn.close()
        finally:
            if self._lock is not None:
                self._lock.release()


def check_archive_file(path: Path) -> None:
    """Raise ``ArchiveError`` unless ``path`` is an archive this version can write.

    The check every reader's opening makes (:func:`~nitpicker.query.connection.open_archive`:
    read only, nothing is written), made before a writer takes the lock.
    """
    try:
        open_archive(path).close()
    except ArchiveOpenError as exc:
        raise ArchiveError(str(exc)) from exc
