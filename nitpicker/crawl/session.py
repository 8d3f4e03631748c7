"""CrawlSession: the live state of one crawl, shared by the spider and its components.

It holds the validated config, the scope/exclude/follow policies, the archive writer and the
counters the progress display reads. The site spider makes it; a component reaches it with
:func:`crawl_session` (in its ``from_crawler``, and keeps it). The scheduler opens it (creating
or reopening the archive and starting a run row); ``spider_closed`` closes it (order column,
run status, WAL folded back into one file, lock released).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.archive.host_board import HostBoard
from nitpicker.archive.template_store import KnownSkeletons, record_templates_after_crawl
from nitpicker.archive.worker import ArchiveWorker, yield_to_archive_thread
from nitpicker.archive.writer import ArchiveError, ArchiveWriter
from nitpicker.crawl.config import ConfigError
from nitpicker.crawl.run_failure import RunFailure, classify_exception, outcome_of_close
from nitpicker.items import FollowMode
from nitpicker.policy.excludes import Excludes
from nitpicker.policy.follow import FollowPolicy
from nitpicker.policy.links import LinkResolver
from nitpicker.policy.near_duplicate import NEAR_DUPLICATE_THRESHOLD, check_threshold
from nitpicker.policy.request_headers import RequestHeaders
from nitpicker.policy.scope import Scope
from nitpicker.policy.urls import ParsedUrl, frontier_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from nitpicker.archive.close_reader import CloseReader, ComputedLinkScores
    from nitpicker.archive.lock import ArchiveLock
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.redis_frontier import FrontierSettings, RedisFrontier
    from nitpicker.crawl.worker_role import WorkerRole

__all__ = ["CrawlCounters", "CrawlSession", "crawl_session"]

logger = logging.getLogger(__name__)


@dataclass
class CrawlCounters:
    """What the progress display and the exit code are made of."""

    done: int = 0
    """URLs recorded in this run (pages, external checks, skips, errors)."""
    pages: int = 0
    """In-scope HTML pages recorded in this run."""
    leased: int = 0
    leased_checks: int = 0
    """Of :attr:`leased`, the out-of-scope checks (``FollowMode.METADATA``)."""
    external: int = 0
    """Of :attr:`done`, the out-of-scope URLs (the progress display's ``external``)."""
    internal_errors: int = 0
    external_errors: int = 0
    too_large: int = 0
    """Fetch errors that were bodies larger than ``DOWNLOAD_MAXSIZE`` (counted in the two
    above too)."""
    skipped: int = 0


class CrawlSession:
    """One crawl's config, policies, archive and counters."""

    def __init__(self, config: CrawlConfig, follow_policy: type[FollowPolicy] = FollowPolicy) -> None:
        self.config = config
        self.scope = Scope(config.roots)
        self.excludes = Excludes(
            globs=config.excludes,
            url_prefixes=config.exclude_urls,
            keywords=config.exclude_keywords,
        )
        self.policy = follow_policy(config, self.scope, self.excludes)
        self.resolver = LinkResolver(disable_queries=config.disable_queries)
        headers = RequestHeaders(self.scope, config.root_credentials, config.request_headers)
        self.request_headers: RequestHeaders | None = headers if headers else None
        """The root URLs' credentials and ``--header``, scoped; ``None`` when there are none."""
        self.scope_version = 0
        """Bumped when a root is added during the crawl (cached scope decisions are stale)."""
        self.counters = CrawlCounters()
        self.writer: ArchiveWriter | None = None
        self.worker: ArchiveWorker | None = None
        """Writes the pages on a thread of its own (started with the archive)."""
        self.halted: str | None = None
        """Why this run takes no more URLs from the frontier (``max_pages``, ``max_duration``)."""
        self.site_written = 0
        """In-scope URLs whose outcome is written (a page recorded, a missed prediction
        dropped; counted on the archive worker's thread): the scheduler compares it with the
        site's rows it leased, to see the site's requests not settled yet (their links not
        queued yet)."""
        self.paused: str | None = None
        """Why this run leases no URL for now (``outage``: :mod:`nitpicker.middlewares.outage`);
        ``None`` while it runs. Unlike :attr:`halted`, a pause ends and the crawl goes on."""
        self.failure: RunFailure | None = None
        self.max_archive_bytes: int | None = None
        """Storage budget (``NITPICKER_ARCHIVE_MAX_MB``, set by the spider from the setting):
        the run fails with ``disk_full`` past it."""
        self.site_checks = True
        """Whether the site checks run when the crawl ends (``NITPICKER_SITE_CHECKS``)."""
        self.near_duplicate_threshold = NEAR_DUPLICATE_THRESHOLD
        """The near-duplicate clusters' similarity (``NITPICKER_NEAR_DUPLICATE_THRESHOLD``)."""
        self.content_facts = True
        """Whether the pages' fragment targets and content signatures are recorded
        (``NITPICKER_CONTENT_FACTS``)."""
        self.close_reader_pages = 0
        """Pages recorded from which the close reads the link scores and click depths in a
        process of its own (``NITPICKER_CLOSE_READER_PAGES``; 0: never)."""
        self.request_close: Callable[[str], None] = lambda reason: None
        """Set by the spider: asks Scrapy's engine to close the spider."""
        self.lock: ArchiveLock | None = None
        """The archive's lock when the caller already holds it (``--append``, from before its
        backup): the writer works under it and leaves it held."""
        self.closed_reason: str | None = None
        """The reason the run was closed with (Scrapy's close reason), once closed."""
        self.role: WorkerRole | None = None
        """This process's place in a ``--workers N`` crawl; ``None`` for a crawl of its own."""
        self.known_skeletons: KnownSkeletons | None = None
        """A worker's, once it stopped: its pages' skeletons, for the coordinator's close."""
        self.shared_frontier: FrontierSettings | None = None
        """Set by the spider: this run is one worker of a distributed crawl, its archive a
        shard, its URLs leased from this frontier (:mod:`nitpicker.crawl.redis_frontier`).
        Never together with :attr:`role` (``--workers`` share one archive, not Redis)."""
        self.host_board = HostBoard()
        """The hosts the host breaker gave up on, exchanged with the other workers by a shared
        frontier (:mod:`nitpicker.archive.host_board`); not shared in a crawl of its own."""

    def policy_url(self, url: str) -> ParsedUrl | None:
        """``url`` normalised as the crawl's policies see it (cached)."""
        return self.resolver.resolve(url, url)

    def in_scope(self, url: str | ParsedUrl | None) -> bool:
        """Whether ``url`` is in the crawl's scope as it is now (a redirecting root's
        destination joins it during the crawl): an http(s) URL under a root, by the follow
        policy's :meth:`~nitpicker.policy.follow.FollowPolicy.is_external`. A string is normalised
        first (:meth:`policy_url`); ``None`` (not a URL) is out of scope."""
        parsed = self.resolver.resolve(url, url) if isinstance(url, str) else url
        return parsed is not None and not self.policy.is_external(parsed)

    @property
    def archive(self) -> ArchiveWriter:
        if self.writer is None:
            raise RuntimeError("the crawl session is not open")
        return self.writer

    def open(self) -> None:
        """Create the archive (or reopen it to resume) and start a run."""
        if self.writer is not None:
            return
        if self.role is not None:
            self._attach(self.role)
            return
        shared = self._join_shared_frontier() if self.shared_frontier is not None else None
        if self.config.resume:
            self.writer = ArchiveWriter.reopen(Path(self.config.output), self.lock)
        else:
            self.writer = ArchiveWriter.create(self.config)
        if shared is not None:
            shared.attach(self.writer)
            shared.board = self.host_board
            self.host_board.shared = True
            self.writer.use_frontier(shared, shared.committed)
        try:
            self._start_run(self.writer)
        except (sqlite3.Error, OSError) as exc:
            self.failure = classify_exception(exc, "open")
            logger.error("could not open the archive (%s): %s", self.failure.code,
                         self.failure.detail)
            self.close("failed")
            raise ArchiveError(f"{self.config.output}: {self.failure.message}") from exc
        self.worker = ArchiveWorker(self._worker_failed)

    def _attach(self, role: WorkerRole) -> None:
        """A worker of ``--workers N``: the coordinator made the archive and the run."""
        from nitpicker.archive.shared_writer import SharedArchiveWriter

        writer = SharedArchiveWriter.attach(
            Path(self.config.output), owner=role.owner, lease_seconds=role.lease_seconds)
        self.writer = writer
        writer.frontier.board = self.host_board
        self.host_board.shared = True
        self.worker = ArchiveWorker(self._worker_failed)
        writer.more_queued = self.worker.has_queued
        yield_to_archive_thread()

    def _join_shared_frontier(self) -> RedisFrontier:
        """Reach the shared frontier and join its crawl, before the shard is created: Redis
        unreachable, or holding another crawl under the name, writes nothing."""
        from nitpicker.archive.frontier_port import FrontierUnavailable
        from nitpicker.crawl.redis_frontier import RedisFrontier, connect_frontier

        settings = self.shared_frontier
        assert settings is not None
        try:
            frontier = RedisFrontier(connect_frontier(settings), settings)
            frontier.join(self.config.roots)
        except (FrontierUnavailable, ValueError) as exc:
            raise ArchiveError(str(exc)) from exc
        frontier.on_unavailable = lambda exc: self.fail(classify_exception(exc))
        logger.info("shared frontier %s, crawl %s: worker %s", settings.shown, settings.crawl,
                    frontier.worker)
        return frontier

    def _start_run(self, writer: ArchiveWriter) -> None:
        """The open phase: the run's row, the roots, the size budget, the inbound index."""
        if self.config.resume:
            kind = "resume"
            if self.config.append:
                kind = "append"
                self._prepare_append(writer)
            elif self.config.retry_failed:
                kind = "retry"
                self._prepare_retry(writer)
            elif self.config.recrawl:
                kind = "recrawl"
                self._prepare_recrawl(writer)
            writer.runs.start(kind)
        else:
            writer.runs.start("crawl")
            writer.frontier.add(
                (frontier_key(root), root, 0, int(FollowMode.FULL)) for root in self.config.roots
            )
            self._seed_inventory(writer)
            writer.commit()
        if self.max_archive_bytes:
            writer.set_size_budget(self.max_archive_bytes)
        expected = writer.frontier.pending
        if self.config.max_pages is not None:
            expected = min(expected, self.config.max_pages)
        writer.defer_inbound_index(expected)

    def _worker_failed(self, exc: BaseException) -> None:
        """A page write failed on the archive worker's thread: the run fails (reactor thread)."""
        from twisted.internet import reactor

        if not isinstance(exc, (sqlite3.Error, OSError)):
            # Not the archive refusing a write: a bug. Keep its traceback in the log.
            logger.error("archive write failed", exc_info=exc)
        failure = classify_exception(exc)
        clock: Any = reactor
        clock.callFromThread(self.fail, failure)

    def write_behind(self, job: Callable[..., object], *args: object) -> None:
        """Run ``job(*args)`` on the archive worker's thread, in submission order."""
        if self.worker is None:
            raise RuntimeError("the crawl session is not open")
        self.worker.submit(job, *args)

    @property
    def writing(self) -> bool:
        """Whether submitted writes have not all run yet."""
        return self.worker is not None and self.worker.busy

    def settle(self) -> None:
        """Wait for every submitted write: the archive then holds all that was recorded."""
        if self.worker is not None:
            self.worker.drain()

    def _prepare_append(self, writer: ArchiveWriter) -> None:
        """``--append``: new roots, earlier out-of-scope rows now in scope re-queued."""
        writer.update_info(self.config)
        repromoted = writer.repromote(self.in_scope)
        writer.frontier.add(
            (frontier_key(root), root, 0, int(FollowMode.FULL)) for root in self.config.append
        )
        writer.commit()
        logger.info("append: %d new root(s), %d row(s) re-promoted into scope",
                    len(self.config.append), len(repromoted))

    def _seed_inventory(self, writer: ArchiveWriter) -> None:
        """``--inventory``: its URLs marked ``in_inventory`` and the in-scope ones queued, with
        the roots (a root listed keeps depth 0), and its audit record."""
        from nitpicker.crawl.inventory import plan_inventory

        config = self.config
        if not config.inventory_urls:
            return
        seed = plan_inventory(config.inventory_urls, roots=config.roots,
                              policy_url=self.policy_url, scope_scheme=self._scope_scheme,
                              excluded=self.excludes.excludes_url)
        for depth, entries in seed.by_depth.items():
            if entries:  # a group's own excluded URLs: the rows it has ids for
                writer.pages.record_inventory(
                    entries, depth, seed.excluded.intersection(url for url, _ in entries))
        writer.runs.record_inventory_run(config.inventory, config.inventory_label,
                                         config.inventory_sha256, config.inventory_lines, seed)
        logger.info("inventory: %d URL(s) listed, %d new page(s), %d new resource(s), %d out of "
                    "scope", seed.urls, seed.new_pages, seed.new_resources, seed.scope_skipped)

    def _scope_scheme(self, url: ParsedUrl) -> str | None:
        """The scheme of the root whose scope ``url`` is in; ``None`` out of scope."""
        if not self.in_scope(url):
            return None
        entry = self.scope.find(url)
        return entry.url.split(":", 1)[0] if entry is not None else url.scheme

    def _prepare_retry(self, writer: ArchiveWriter) -> None:
        """``--retry-failed``: the failed URLs (not those of a capped trap) queued again."""
        from nitpicker.crawl.retry import retry_plan

        plan = retry_plan(writer.conn)
        writer.frontier.requeue(plan.frontier_entries())
        writer.commit()
        logger.info("retry: %d failed URL(s) queued again, %d left under capped traps",
                    len(plan.retry), len(plan.capped))

    def _prepare_recrawl(self, writer: ArchiveWriter) -> None:
        """``nitpicker recrawl``: the URLs listed queued again (:mod:`nitpicker.crawl.recrawl`)."""
        from nitpicker.crawl.recrawl import recrawl_plan

        plan = recrawl_plan(writer.conn, self.config.recrawl)
        writer.frontier.requeue(plan.frontier_entries())
        writer.commit()
        logger.info("recrawl: %d URL(s) queued again", len(plan.targets))

    def _check_new_roots(self, writer: ArchiveWriter) -> None:
        """``--append`` whose every new root was fetched with no HTTP answer failed
        (``network``), whatever else the run fetched: the append is then undone."""
        roots = self.config.append
        if not roots:
            return
        unreachable = writer.pages.unreachable(roots)
        if len(unreachable) == len(roots):
            shown = "; ".join(f"{url} ({error})" for url, error in unreachable.items())
            self.failure = RunFailure("network", f"every new root failed to fetch: {shown}")
            logger.error("append failed (network): %s", self.failure.detail)

    def add_root(self, url: str) -> None:
        """A new scope entry found while crawling (a redirecting root's destination)."""
        logger.info("root redirected: %s is now a root too", url)
        self.scope.add(url)
        self.scope_version += 1
        if self.writer is not None:
            roots = tuple(dict.fromkeys([*self.writer.stored_roots(), url]))
            self.writer.update_roots(roots)

    @property
    def budget_left(self) -> int | None:
        """URLs this run may still lease under ``--max-pages``; ``None`` when unlimited."""
        if self.config.max_pages is None:
            return None
        if self.role is not None and self.role.budget is not None:
            return self.role.budget.left
        return max(self.config.max_pages - self.counters.leased, 0)

    def halt(self, reason: str) -> None:
        """Take no more URLs from the frontier; in-flight ones finish, then the run stops."""
        if self.halted is None:
            logger.info("stopping: %s", reason)
            self.halted = reason

    def fail(self, failure: RunFailure) -> None:
        """Record why the run failed and close the spider."""
        if self.failure is None:
            logger.error("crawl failed (%s): %s", failure.code, failure.detail)
            self.failure = failure
            self.halt("failed")
            self.request_close("failed")

    def close(self, reason: str) -> None:
        """Finish the run: order column, run row, one self-contained file."""
        writer = self.writer
        if writer is None:
            return
        self.writer = None
        self.closed_reason = reason
        if self.role is not None:
            self._detach(writer)
            return
        self._stop_worker()
        counters = self.counters
        errors = counters.internal_errors + counters.external_errors
        try:
            if self.failure is None:
                writer.commit()
                writer.frontier.release_leases()
                self._check_new_roots(writer)
                if reason != "shutdown":  # Ctrl-C stops now; analyze --sample computes them
                    record_templates_after_crawl(writer.conn, writer.templates)
            else:
                writer.rollback()
            reader = self._start_close_reader(writer)
            try:
                writer.finish(order=self.failure is None, click_depths=reader is None)
                if self.failure is None and self.site_checks:
                    self._check_site(writer, reader.link_scores() if reader is not None else None)
                if reader is not None:
                    writer.store_click_depths(reader.click_depths())
            finally:
                if reader is not None:
                    reader.cancel()
        except (sqlite3.Error, OSError) as exc:  # what was committed stays; the run fails
            failure = classify_exception(exc, "close")
            logger.error("closing the archive failed (%s): %s", failure.code, failure.detail)
            self.failure = self.failure or failure
            with contextlib.suppress(sqlite3.Error):
                writer.rollback()
        try:
            status, code, detail = outcome_of_close(
                self.halted if self.halted and self.halted != "failed" else reason,
                pending=writer.frontier.pending_count(), failure=self.failure,
                fetched=counters.done - counters.skipped, fetch_errors=errors,
                too_large=counters.too_large,
            )
            if status == "failed" and self.failure is None:
                self.failure = RunFailure(code or "unknown", detail or "", "crawl")
            phase = self.failure.phase if self.failure else None
            writer.runs.end(status, reason, counters.done, errors, code, detail, phase)
            writer.close()
        except Exception as exc:  # the archive cannot be written: keep what was committed
            logger.error("could not close the archive cleanly: %s", exc)
            self.failure = self.failure or classify_exception(exc, "close")
            writer.abandon()
            raise
        logger.info("archive closed: %s (%s)", writer.path, status)

    def read_settings(self, settings: BaseSettings) -> None:
        """The settings the session keeps (read once, by the spider's ``from_crawler``)."""
        budget_mb = settings.getfloat("NITPICKER_ARCHIVE_MAX_MB")
        self.max_archive_bytes = int(budget_mb * 1024 * 1024) or None
        self.site_checks = settings.getbool("NITPICKER_SITE_CHECKS")
        try:
            self.near_duplicate_threshold = check_threshold(
                settings.getfloat("NITPICKER_NEAR_DUPLICATE_THRESHOLD"),
                "NITPICKER_NEAR_DUPLICATE_THRESHOLD")
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.content_facts = settings.getbool("NITPICKER_CONTENT_FACTS")
        self.close_reader_pages = settings.getint("NITPICKER_CLOSE_READER_PAGES")

    def _start_close_reader(self, writer: ArchiveWriter) -> CloseReader | None:
        """The link scores and click depths read by a process of their own while the close
        writes (:mod:`~nitpicker.archive.close_reader`), when the site checks run and this run
        recorded :attr:`close_reader_pages` pages or more; ``None``: computed here."""
        threshold = self.close_reader_pages
        if (self.failure is not None or not self.site_checks or threshold <= 0
                or self.counters.pages < threshold):
            return None
        from nitpicker.archive.close_reader import CloseReader

        writer.commit()
        return CloseReader.start(writer.path)

    def _check_site(self, writer: ArchiveWriter,
                    scores: ComputedLinkScores | None = None) -> None:
        """The site checks over the finished crawl (``nitpicker check`` runs them again): a
        failure of theirs is logged, and the crawl keeps what it recorded."""
        from nitpicker.archive.check_store import record_checks

        try:
            summary = record_checks(writer.conn, computed_scores=scores,
                                    near_duplicate_threshold=self.near_duplicate_threshold)
        except sqlite3.Error as exc:
            logger.error("the site checks failed (%s); run them again with: nitpicker check %s",
                         exc, writer.path)
            return
        logger.info("site checks: %d findings in %.2f s (link scores computed %s)",
                    summary.findings, summary.elapsed,
                    "here" if scores is None else "beside the close")

    def _detach(self, writer: ArchiveWriter) -> None:
        """A worker of ``--workers N`` stops: writes done, leases back; the coordinator closes."""
        from nitpicker.archive.shared_writer import SharedArchiveWriter

        self._stop_worker()
        assert isinstance(writer, SharedArchiveWriter)
        writer.detach(failed=self.failure is not None)
        self.known_skeletons = None if self.failure is not None else writer.templates

    def _stop_worker(self) -> None:
        """Stop the archive's thread once its writes are done; its error fails the run."""
        if self.worker is not None:
            self.worker.stop()
            if self.worker.error is not None and self.failure is None:
                self.failure = classify_exception(self.worker.error)
                logger.error("crawl failed (%s): %s", self.failure.code, self.failure.detail)
            self.worker = None


def crawl_session(crawler: Crawler) -> CrawlSession:
    """The crawl session of ``crawler``'s spider: the one way a component reaches it.

    Call it in ``from_crawler`` (Scrapy makes the spider first). ``NotConfigured`` when the
    spider is not nitpicker's (it has no session): the component is then disabled.
    """
    session = getattr(crawler.spider, "session", None)
    if not isinstance(session, CrawlSession):
        from scrapy.exceptions import NotConfigured

        raise NotConfigured("the spider has no nitpicker CrawlSession")
    return session
