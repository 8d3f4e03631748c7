"""The archive writer: the one connection that writes a ``.nitpicker`` file during a crawl.

Everything a crawl writes — page rows, anchors, images, snapshots, frontier inserts, leases
and acknowledgements — goes through this connection inside one open transaction, committed
in batches (:meth:`ArchiveWriter.maybe_commit`). A crash loses at most the uncommitted batch,
whose frontier rows are then still pending or leased and are fetched again on resume: no
page is lost and none is recorded twice.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from nitpicker import __version__
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.lock import pid_alive as _pid_alive
from nitpicker.archive.schema import SchemaError, check_archive, migrate
from nitpicker.items import MAX_URL_LENGTH, FollowMode
from nitpicker.urls import frontier_key, natural_order_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from nitpicker.config import CrawlConfig
    from nitpicker.items import LinkRecord, PageItem, ResourceRecord

__all__ = ["ArchiveError", "ArchiveWriter", "FrontierEntry"]

logger = logging.getLogger(__name__)

PENDING, LEASED, DONE = 0, 1, 2
_UNFETCHED = (FollowMode.STUB, FollowMode.EXCLUDED, FollowMode.CAPPED)
_ID_CACHE_SIZE = 50_000
_KNOWN_KEYS_SIZE = 100_000
_CHUNK = 400
_INBOUND_INDEX = "anchors_href_page"
_CREATE_INBOUND_INDEX = f"CREATE INDEX IF NOT EXISTS {_INBOUND_INDEX} ON anchors(href_id, page_id)"
_DEFER_FACTOR = 5
"""Defer the inbound-link index when the run may add a fifth or more of the pages there are."""
_SQLITE_MAGIC = b"SQLite format 3\x00"

# What closing an archive writes, reserved out of a --max-archive-mb budget while crawling
# (measured on a 1,500-page crawl with 3,000 page rows and 217,500 anchors: 13.6 bytes an
# anchor for the inbound-link index, 16 bytes a page row for the URL order and its index; the
# figures below leave room for bigger ids and page splits).
_CLOSE_BYTES_PER_ANCHOR = 20
"""The inbound-link index built at close, per anchor (only while the index is deferred)."""
_CLOSE_BYTES_PER_PAGE = 48
"""``pages.order`` and its index, filled at close, per page row."""
_CLOSE_BYTES = 16 * 1024
"""The rest: planner statistics, the run's row, the order update's own pages."""

FrontierEntry = tuple[int, str, int, int]
"""(frontier id, url, depth, mode)"""


_json_rows = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
"""Rows as one JSON array, the parameter the ``json_each`` statements read."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _serialised(method: Callable[Concatenate[ArchiveWriter, _P], _R]
                ) -> Callable[Concatenate[ArchiveWriter, _P], _R]:
    """One writer call at a time: the archive worker's thread and the reactor's share it."""

    def locked(self: ArchiveWriter, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._mutex:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked


class ArchiveError(Exception):
    """The archive cannot be created or opened for writing; the message says why."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-32000")
    conn.execute("PRAGMA temp_store=MEMORY")
    # Checkpoint the WAL every ~40 MB instead of every 4 MB: fewer fsync-bound pauses on the
    # commit path; the WAL is folded back into the file at close anyway.
    conn.execute("PRAGMA wal_autocheckpoint=10000")
    return conn


class ArchiveWriter:
    """Creates or reopens an archive and records a crawl into it."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: ArchiveLock | None) -> None:
        self.path = path
        self.conn = conn
        self._lock = lock
        """The lock this writer took and releases; ``None`` when the caller holds it."""
        self._mutex = threading.RLock()
        self._ids: OrderedDict[str, int] = OrderedDict()
        self._known_keys: dict[str, None] = {}
        self._dirty = 0
        self._last_commit = time.monotonic()
        self.run_id: int | None = None
        self.pending = 0
        """Frontier rows in state pending (kept in step with every insert and lease)."""
        self._budget_pages: int | None = None
        """``--max-archive-mb`` in database pages; the crawl may use it minus the close reserve."""
        self._page_size = 4096
        self._inbound_deferred = False
        """The inbound-link index is absent: :meth:`finish` builds it."""
        self._finished = False

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def create(cls, config: CrawlConfig) -> ArchiveWriter:
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
            conn = _connect(path)
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
                    _now(),
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
        passed :func:`check_archive_file` and the lock is held.
        """
        check_archive_file(path)
        if lock is not None and not lock.held:
            raise ArchiveError(f"{path}: the lock handed to the writer is not held")
        owned = None
        if lock is None:
            owned = lock = ArchiveLock(path)
            lock.acquire()
        try:
            conn = _connect(path)
            try:
                migrate(conn)
            except SchemaError as exc:
                conn.close()
                raise ArchiveError(f"{path}: {exc}") from exc
            writer = cls(path, conn, owned)
            writer.conn.execute("UPDATE frontier SET state = ? WHERE state = ?", (PENDING, LEASED))
            writer.mark_lost_runs()
        except BaseException:
            if owned is not None:
                owned.release()
            raise
        return writer

    @_serialised
    def update_info(self, config: CrawlConfig) -> None:
        """Store the crawl's (changed) roots and options, e.g. after ``--append``."""
        self._begin()
        self.conn.execute(
            "UPDATE info SET base_url = ?, roots = ?, from_list = ?, config = ? WHERE id = 1",
            (config.base_url, json.dumps(list(config.roots)), int(config.list_mode),
             config.to_json()),
        )

    @_serialised
    def repromote(self, is_in_scope: Callable[[str], bool]) -> list[tuple[int, str]]:
        """Out-of-scope rows now in scope become pending pages again, their ids kept.

        Their fetched facts and child rows (anchors, images, headers, snapshot, resource
        referrers) are removed, and they are queued for a full crawl. Returns (id, url).
        """
        self._begin()
        rows = [
            (page_id, url)
            for page_id, url in self.conn.execute(
                "SELECT id, url FROM pages WHERE is_external = 1 AND redirect_dest_id IS NULL")
            if is_in_scope(url)
        ]
        ids = [(page_id,) for page_id, _ in rows]
        for table in ("anchors", "images", "response_headers", "snapshots", "resource_referrers"):
            self.conn.executemany(f"DELETE FROM {table} WHERE page_id = ?", ids)
        self.conn.executemany(
            "UPDATE pages SET scraped = 0, is_external = 0, is_target = 0, status = NULL,"
            " status_text = NULL, content_type = NULL, content_length = NULL, title = '',"
            " description = '', is_skipped = 0, skip_reason = NULL, fetched_at = NULL"
            " WHERE id = ?",
            ids,
        )
        self.conn.executemany(
            "INSERT INTO frontier(key, url, depth, mode) VALUES (?, ?, 1, 0)"
            " ON CONFLICT(key) DO UPDATE SET state = 0, mode = 0",
            [(frontier_key(url), url) for _, url in rows],
        )
        for page_id, url in rows:
            self._ids.pop(url, None)
        self.pending = self.pending_count()
        return rows

    @_serialised
    def stored_roots(self) -> list[str]:
        row = self.conn.execute("SELECT roots FROM info WHERE id = 1").fetchone()
        return list(json.loads(row[0])) if row else []

    @_serialised
    def update_roots(self, roots: tuple[str, ...]) -> None:
        """Store a changed root list (in ``info.roots`` and in the stored config)."""
        self._begin()
        self.conn.execute(
            "UPDATE info SET roots = ?, config = json_set(config, '$.roots', json(?)) WHERE id = 1",
            (json.dumps(list(roots)), json.dumps(list(roots))),
        )

    @_serialised
    def stored_config_json(self) -> str:
        row = self.conn.execute("SELECT config FROM info WHERE id = 1").fetchone()
        if row is None:
            raise ArchiveError(f"{self.path}: the archive has no crawl information")
        return str(row[0])

    # -- transactions -----------------------------------------------------------------------

    def _begin(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")

    @_serialised
    def commit(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self._dirty = 0
        self._last_commit = time.monotonic()

    @_serialised
    def maybe_commit(self, max_items: int = 100, max_seconds: float = 0.2) -> None:
        """Commit when the batch is big or old enough."""
        if self._dirty >= max_items or (
            self._dirty and time.monotonic() - self._last_commit >= max_seconds
        ):
            self.commit()

    # -- runs -------------------------------------------------------------------------------

    @_serialised
    def start_run(self, kind: str) -> int:
        self._begin()
        cur = self.conn.execute(
            "INSERT INTO runs(kind, pid, started_at, status) VALUES (?, ?, ?, 'running')",
            (kind, os.getpid(), _now()),
        )
        self.commit()
        self.run_id = int(cur.lastrowid or 0)
        self.pending = int(
            self.conn.execute("SELECT count(*) FROM frontier WHERE state = ?", (PENDING,)).fetchone()[0]
        )
        return self.run_id

    @_serialised
    def end_run(self, status: str, stop_reason: str, pages_done: int, errors: int,
                error_code: str | None = None, error_detail: str | None = None,
                phase: str | None = None) -> None:
        self._begin()
        self.conn.execute(
            "UPDATE runs SET ended_at = ?, status = ?, stop_reason = ?, pages_done = ?, errors = ?,"
            " error_code = ?, error_detail = ?, phase = ? WHERE id = ?",
            (_now(), status, stop_reason, pages_done, errors, error_code, error_detail, phase,
             self.run_id),
        )
        self.commit()

    @_serialised
    def mark_lost_runs(self) -> int:
        """The watchdog: runs still ``running`` whose process is gone become ``instance_lost``."""
        rows = self.conn.execute("SELECT id, pid FROM runs WHERE status = 'running'").fetchall()
        lost = [run_id for run_id, pid in rows if pid != os.getpid() and not _pid_alive(pid)]
        if lost:
            self._begin()
            self.conn.executemany(
                "UPDATE runs SET status = 'failed', error_code = 'instance_lost',"
                " error_detail = 'the crawling process ended without closing its run',"
                " ended_at = coalesce(ended_at, ?) WHERE id = ?",
                [(_now(), run_id) for run_id in lost],
            )
            self.commit()
        return len(lost)

    @_serialised
    def defer_inbound_index(self, expected_pages: int) -> bool:
        """Drop the inbound-link index for the run when it is cheaper to build it at the end.

        Every anchor lands at a random place in ``anchors(href_id, page_id)``: kept up to date
        row by row it costs more than all the other anchor writes together, while building it
        once at :meth:`close` costs a sixth of that. A short resume of a big archive keeps it.
        While it is absent (a crawl running, or killed and not resumed yet), "who links here"
        queries scan the anchors table: slower, never wrong.
        """
        scraped = int(self.conn.execute(
            "SELECT count(*) FROM pages WHERE scraped = 1").fetchone()[0])
        if expected_pages * _DEFER_FACTOR < scraped:
            self._cap(self._budget_pages)  # building it is close work: the whole budget
            self.build_inbound_index()
            self._inbound_deferred = False
            self._cap_for_crawl()
            return False
        self._begin()
        self.conn.execute(f"DROP INDEX IF EXISTS {_INBOUND_INDEX}")
        self.commit()
        self._inbound_deferred = True
        self._cap_for_crawl()
        return True

    @_serialised
    def build_inbound_index(self) -> None:
        """Create the inbound-link index if it is missing (sorted in temporary files)."""
        self.commit()
        with self._sorting_on_disk():
            self.conn.execute(_CREATE_INBOUND_INDEX)

    @contextlib.contextmanager
    def _sorting_on_disk(self) -> Iterator[None]:
        """SQLite's sorts spill to temporary files, not memory (a whole-archive sort may not fit)."""
        self.conn.execute("PRAGMA temp_store=FILE")
        try:
            yield
        finally:
            self.conn.execute("PRAGMA temp_store=MEMORY")

    @_serialised
    def set_size_budget(self, max_bytes: int) -> None:
        """Cap the archive's size at ``max_bytes``: writes past it fail with SQLITE_FULL.

        The crawl gets the budget minus what closing the archive will write (the deferred
        inbound-link index, the URL order, statistics; re-estimated as pages and anchors
        are added); :meth:`finish` gets all of it. So a crawl that fills its share fails
        with ``disk_full`` and still closes within the budget.
        """
        self._page_size = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        self._budget_pages = max(1, max_bytes // self._page_size)
        self._cap_for_crawl()

    def _cap(self, pages: int | None) -> None:
        if pages is not None:
            # SQLite keeps the cap at the current size when asked for less: no page is lost,
            # only growth is refused.
            self.conn.execute(f"PRAGMA max_page_count = {max(1, pages)}")

    def _cap_for_crawl(self, new_pages: int = 0, new_anchors: int = 0) -> None:
        """The crawl's share of the budget, counting ``new_pages`` and ``new_anchors`` about to
        be written."""
        if self._budget_pages is None:
            return
        pages, anchors = self.conn.execute(
            "SELECT (SELECT max(id) FROM pages), (SELECT max(id) FROM anchors)").fetchone()
        reserve = _CLOSE_BYTES + ((pages or 0) + new_pages) * _CLOSE_BYTES_PER_PAGE
        if self._inbound_deferred:
            reserve += ((anchors or 0) + new_anchors) * _CLOSE_BYTES_PER_ANCHOR
        self._cap(self._budget_pages - math.ceil(reserve / self._page_size))

    @_serialised
    def release_leases(self) -> None:
        """Leased rows not fetched (a stopped run) go back to pending."""
        self._begin()
        cur = self.conn.execute("UPDATE frontier SET state = 0 WHERE state = 1")
        self.pending += max(cur.rowcount, 0)

    @_serialised
    def pending_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM frontier WHERE state < 2").fetchone()[0])

    @_serialised
    def rollback(self) -> None:
        """Drop the uncommitted batch (SQLite may have rolled it back already)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self._dirty = 0
        self._ids.clear()  # ids and keys of the dropped batch may be gone
        self._known_keys.clear()

    # -- frontier ---------------------------------------------------------------------------

    @_serialised
    def add_to_frontier(self, entries: Iterable[tuple[str, str, int, int]]) -> int:
        """Insert (key, url, depth, mode) rows not yet known; returns how many were new.

        Keys this writer has already sent to the frontier are skipped without a round trip
        to SQLite (most links of a page are the site's navigation, known long ago); the
        memory of them is bounded and simply starts afresh when full.
        """
        known = self._known_keys
        fresh = [entry for entry in entries if entry[0] not in known]
        if not fresh:
            return 0
        self._begin()
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO frontier(key, url, depth, mode)"
            " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)",
            (_json_rows(fresh),),
        )
        if len(known) + len(fresh) > _KNOWN_KEYS_SIZE:
            known.clear()
        known.update(dict.fromkeys(entry[0] for entry in fresh))
        added = max(cur.rowcount, 0)
        self.pending += added
        return added

    @_serialised
    def lease(self, limit: int) -> list[FrontierEntry]:
        """Take up to ``limit`` pending rows, shallowest first, and mark them leased."""
        if self.pending <= 0 or limit <= 0:
            return []
        self._begin()
        rows: list[FrontierEntry] = self.conn.execute(
            "SELECT id, url, depth, mode FROM frontier WHERE state = 0 ORDER BY depth, id LIMIT ?",
            (limit,),
        ).fetchall()
        if rows:
            self.conn.executemany(
                "UPDATE frontier SET state = 1 WHERE id = ?", [(r[0],) for r in rows]
            )
        self.pending = self.pending - len(rows) if len(rows) == limit else 0
        return rows

    @_serialised
    def acknowledge(self, frontier_id: int) -> None:
        self._begin()
        self.conn.execute("UPDATE frontier SET state = 2 WHERE id = ?", (frontier_id,))

    def _mark_done_by_key(self, key: str) -> None:
        cur = self.conn.execute(
            "UPDATE frontier SET state = 2 WHERE key = ? AND state = 0", (key,)
        )
        self.pending -= max(cur.rowcount, 0)

    # -- pages ------------------------------------------------------------------------------

    def _cache_id(self, url: str, page_id: int) -> None:
        self._ids[url] = page_id
        if len(self._ids) > _ID_CACHE_SIZE:
            self._ids.popitem(last=False)

    @_serialised
    def page_ids(self, urls: Mapping[str, tuple[bool, int | None]]) -> dict[str, int]:
        """Ids of page rows for ``{url: (is_external, depth)}``, creating stub rows as needed."""
        found: dict[str, int] = {}
        missing: list[str] = []
        for url in urls:
            page_id = self._ids.get(url)
            if page_id is None:
                missing.append(url)
            else:
                found[url] = page_id
        if missing:
            self.conn.executemany(
                "INSERT OR IGNORE INTO pages(url, is_external, depth) VALUES (?, ?, ?)",
                [(u, int(urls[u][0]), urls[u][1]) for u in missing],
            )
            for start in range(0, len(missing), _CHUNK):
                chunk = missing[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for page_id, url in self.conn.execute(
                    f"SELECT id, url FROM pages WHERE url IN ({marks})", chunk
                ):
                    found[url] = page_id
                    self._cache_id(url, page_id)
        return found

    @_serialised
    def record_page(self, item: PageItem, new_links: list[tuple[str, str, int, int]]) -> int:
        """Record one URL's result, its links, and acknowledge its frontier row."""
        self._begin()
        if self._budget_pages is not None:
            links = len(item.links)
            self._cap_for_crawl(1 + links + len(item.redirects), links)
        meta = item.meta
        values = (
            item.is_target, item.is_external, item.depth, item.status, item.status_text,
            item.content_type, item.content_length, meta.lang, meta.title, meta.description,
            meta.keywords, meta.noindex, meta.nofollow, meta.noarchive, meta.canonical,
            meta.alternate, meta.og_type, meta.og_title, meta.og_site_name, meta.og_description,
            meta.og_url, meta.og_image, meta.twitter_card, item.is_skipped, item.skip_reason,
            _now(), item.links_capped,
        )
        row = self.conn.execute(
            """INSERT INTO pages(url, scraped, is_target, is_external, depth, status, status_text,
                content_type, content_length, lang, title, description, keywords, noindex,
                nofollow, noarchive, canonical, alternate, og_type, og_title, og_site_name,
                og_description, og_url, og_image, twitter_card, is_skipped, skip_reason, fetched_at,
                links_capped)
            VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(url) DO UPDATE SET scraped = 1, redirect_dest_id = NULL,
                is_target = excluded.is_target, is_external = excluded.is_external,
                depth = coalesce(pages.depth, excluded.depth), status = excluded.status,
                status_text = excluded.status_text, content_type = excluded.content_type,
                content_length = excluded.content_length, lang = excluded.lang,
                title = excluded.title, description = excluded.description,
                keywords = excluded.keywords, noindex = excluded.noindex,
                nofollow = excluded.nofollow, noarchive = excluded.noarchive,
                canonical = excluded.canonical, alternate = excluded.alternate,
                og_type = excluded.og_type, og_title = excluded.og_title,
                og_site_name = excluded.og_site_name, og_description = excluded.og_description,
                og_url = excluded.og_url, og_image = excluded.og_image,
                twitter_card = excluded.twitter_card, is_skipped = excluded.is_skipped,
                skip_reason = excluded.skip_reason, fetched_at = excluded.fetched_at,
                links_capped = excluded.links_capped
            RETURNING id""",
            (item.url, *values),
        ).fetchone()
        page_id = int(row[0])
        self._cache_id(item.url, page_id)
        self._replace_children(page_id, item)
        for hop in item.redirects:
            if hop.url == item.url:
                continue  # a self-redirect (e.g. an auth challenge) is not a source
            self.conn.execute(
                """INSERT INTO pages(url, scraped, is_external, depth, status, redirect_dest_id,
                    fetched_at) VALUES (?, 1, ?, ?, ?, ?, ?)
                ON CONFLICT(url) DO UPDATE SET scraped = 1, status = excluded.status,
                    redirect_dest_id = excluded.redirect_dest_id""",
                (hop.url, item.is_external, item.depth, hop.status, page_id, _now()),
            )
        if item.redirects:
            self._mark_done_by_key(frontier_key(item.url))
        if item.frontier_id is not None:
            self.acknowledge(item.frontier_id)
        if new_links:
            self.add_to_frontier(new_links)
        self._dirty += 1
        return page_id

    @_serialised
    def record_sitemap(self, entries: list[tuple[str, bool]], depth: int = 1) -> int:
        """Mark ``(url, is_external)`` pages as listed in a sitemap; queue the in-scope ones."""
        self._begin()
        if self._budget_pages is not None:
            self._cap_for_crawl(len(entries))
        ids = self.page_ids({url: (external, depth) for url, external in entries})
        self.conn.executemany(
            "UPDATE pages SET in_sitemap = 1 WHERE id = ?", [(ids[url],) for url, _ in entries]
        )
        added = self.add_to_frontier(
            (frontier_key(url), url, depth, 0) for url, external in entries if not external
        )
        self._dirty += 1
        return added

    def _replace_children(self, page_id: int, item: PageItem) -> None:
        conn = self.conn
        conn.execute("DELETE FROM response_headers WHERE page_id = ?", (page_id,))
        if item.headers:
            conn.execute(
                "INSERT INTO response_headers(page_id, name, value)"
                " SELECT ?, value ->> 0, value ->> 1 FROM json_each(?)",
                (page_id, _json_rows(item.headers)),
            )
        conn.execute("DELETE FROM anchors WHERE page_id = ?", (page_id,))
        if item.links:
            self._insert_links(page_id, item.links, item.depth + 1)
        conn.execute("DELETE FROM images WHERE page_id = ?", (page_id,))
        if item.images:
            conn.executemany(
                "INSERT INTO images(page_id, src, current_src, alt, width, height, natural_width,"
                " natural_height, is_lazy, viewport_width, source_code)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (page_id, i.src, i.current_src, i.alt, i.width, i.height, i.natural_width,
                     i.natural_height, i.is_lazy, i.viewport_width, i.source_code)
                    for i in item.images
                ],
            )
        if item.resources:
            self._insert_resources(page_id, item.resources)
        if item.html is not None:
            conn.execute(
                "INSERT OR REPLACE INTO snapshots(page_id, encoding, html) VALUES (?, 'zlib', ?)",
                (page_id, zlib.compress(item.html.encode("utf-8"), 1)),
            )

    def _insert_links(self, page_id: int, links: list[LinkRecord], depth: int) -> None:
        # A page's links go to SQLite as JSON arrays, a statement for all of them, so the GIL
        # stays free while SQLite works. Targets already known by id (most of them: the
        # site's navigation) skip the lookup; new ones get their stub row first.
        conn = self.conn
        ids = self._ids
        fresh: dict[str, bool] = {}
        for link in links:
            if link.url not in ids:
                fresh.setdefault(link.url, link.is_external)
        if fresh:
            for new_id, url in conn.execute(
                "INSERT OR IGNORE INTO pages(url, is_external, depth)"
                " SELECT value ->> 0, value ->> 1, ? FROM json_each(?) RETURNING id, url",
                (depth, _json_rows(list(fresh.items()))),
            ).fetchall():
                self._cache_id(url, new_id)
        get = ids.get
        conn.execute(
            "INSERT INTO anchors(page_id, href_id, hash, text)"
            " SELECT ?, coalesce(value ->> 0, (SELECT id FROM pages WHERE url = value ->> 1)),"
            " value ->> 2, value ->> 3 FROM json_each(?)",
            (page_id, _json_rows([(get(link.url), link.url, link.hash, link.text)
                                  for link in links])),
        )
        for link in links:
            if link.mode in _UNFETCHED:
                self._record_unfetched(link)
            elif link.mode is FollowMode.INVALID:
                self.conn.execute(
                    "UPDATE pages SET scraped = 1, status = -1, status_text = ?, is_skipped = 1,"
                    " skip_reason = 'url too long' WHERE url = ? AND scraped = 0",
                    (f"URL too long ({link.hash} characters, at most {MAX_URL_LENGTH})", link.url),
                )

    @_serialised
    def record_trap_event(self, signature: str, parent_path: str, count: int, first_url: str,
                          last_url: str) -> None:
        """The audit log of the trap cap: one row each time a signature reaches the cap."""
        self._begin()
        self.conn.execute(
            "INSERT INTO trap_events(run_id, signature, parent_path, count, first_url, last_url,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, signature, parent_path, count, first_url, last_url, _now()),
        )

    @_serialised
    def has_pending_under(self, key_prefix: str) -> bool:
        """Whether a pending frontier row's key starts with ``key_prefix`` (``//host/path/``)."""
        row = self.conn.execute(
            "SELECT 1 FROM frontier WHERE key >= ? AND key < ? AND state < 2 LIMIT 1",
            (key_prefix, key_prefix + "\U0010ffff"),
        ).fetchone()
        return row is not None

    def _record_unfetched(self, link: LinkRecord) -> None:
        reasons = {FollowMode.EXCLUDED: "excluded", FollowMode.CAPPED: "dedupe cap"}
        reason = reasons.get(link.mode)
        self.conn.execute(
            "UPDATE pages SET scraped = 1, is_skipped = ?, skip_reason = ?"
            " WHERE url = ? AND scraped = 0",
            (int(reason is not None), reason, link.url),
        )

    def _insert_resources(self, page_id: int, resources: list[ResourceRecord]) -> None:
        conn = self.conn
        conn.executemany(
            "INSERT INTO resources(url, kind, is_external, status, status_text, content_type,"
            " content_length, compress, cdn) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(url) DO UPDATE SET"
            " kind = CASE WHEN resources.kind = '' THEN excluded.kind ELSE resources.kind END,"
            " status = coalesce(excluded.status, resources.status),"
            " status_text = coalesce(excluded.status_text, resources.status_text),"
            " content_type = coalesce(excluded.content_type, resources.content_type),"
            " content_length = coalesce(excluded.content_length, resources.content_length),"
            " compress = coalesce(excluded.compress, resources.compress),"
            " cdn = coalesce(excluded.cdn, resources.cdn)",
            [
                (r.url, r.kind, r.is_external, r.status, r.status_text, r.content_type,
                 r.content_length, r.compress, r.cdn)
                for r in resources
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO resource_referrers(resource_id, page_id)"
            " SELECT id, ? FROM resources WHERE url = ?",
            [(page_id, r.url) for r in resources],
        )
        loaded = [r for r in resources if r.headers]
        if loaded:
            conn.executemany(
                "DELETE FROM resource_headers WHERE resource_id = (SELECT id FROM resources WHERE url = ?)",
                [(r.url,) for r in loaded],
            )
            conn.executemany(
                "INSERT INTO resource_headers(resource_id, name, value)"
                " SELECT id, ?, ? FROM resources WHERE url = ?",
                [(name, value, r.url) for r in loaded for name, value in r.headers],
            )

    # -- closing ----------------------------------------------------------------------------

    @_serialised
    def set_url_order(self) -> None:
        """Fill ``pages.order``: the natural URL order of internal pages, 1..N.

        SQLite sorts by the byte-encoded :func:`natural_order_key`, in temporary files: the
        URLs are never all in memory at once (300,000 of them would be ~350 MB as keys).
        """
        self.commit()
        self.conn.create_function("natural_order_key", 1, natural_order_key, deterministic=True)
        with self._sorting_on_disk():
            self._begin()
            self.conn.execute('UPDATE pages SET "order" = NULL WHERE "order" IS NOT NULL')
            self.conn.execute(
                'UPDATE pages SET "order" = ranked.n FROM ('
                " SELECT id, row_number() OVER (ORDER BY natural_order_key(url)) AS n"
                " FROM pages WHERE is_external = 0 AND redirect_dest_id IS NULL"
                ") AS ranked WHERE pages.id = ranked.id"
            )
            self.commit()

    @_serialised
    def finish(self, *, order: bool = False) -> None:
        """The close phase's writes, with the whole size budget: the URL order (``order``),
        the inbound-link index, the readers' planner statistics.

        Raises what SQLite raises (``database or disk is full`` when even the whole budget
        is too small); the open batch is then rolled back and what was committed stays.
        Run once: :meth:`close` does not try again.
        """
        self._finished = True
        self.commit()
        self._cap(self._budget_pages)
        try:
            if order:
                self.set_url_order()
            self.build_inbound_index()
            self._inbound_deferred = False
            self.conn.execute("PRAGMA optimize")  # statistics for the readers' query planner
        except BaseException:
            self.rollback()
            raise

    @_serialised
    def close(self) -> None:
        """Commit, :meth:`finish` (unless done), fold the WAL back into the file, release the
        lock (one this writer took). When it raises, the lock is still held: :meth:`abandon`.
        """
        if not self._finished:
            self.finish()
        self.commit()
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

    @_serialised
    def abandon(self) -> None:
        """Close without committing the open batch (when closing cleanly failed).

        What was committed is folded back into one file when SQLite can; when it cannot
        (the disk itself is full) the WAL keeps it and the next writer folds it back.
        """
        try:
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

    Read only: the file is opened read-only for :func:`check_archive`, the check ``query``
    makes too, and nothing is written to it.
    """
    if not path.exists():
        raise ArchiveError(f"Archive not found: {path}")
    if not path.is_file():
        raise ArchiveError(f"Not an archive file: {path}")
    with path.open("rb") as handle:
        if handle.read(16) != _SQLITE_MAGIC:
            raise ArchiveError(f"Not a nitpicker archive: {path}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        check_archive(conn)
    except SchemaError as exc:
        raise ArchiveError(f"{path}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        raise ArchiveError(f"{path}: corrupt archive ({exc})") from exc
    finally:
        conn.close()
