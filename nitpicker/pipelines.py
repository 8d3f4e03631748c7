"""ArchivePipeline: writes every PageItem into the archive, with its frontier acknowledgement.

A page's row, its anchors, images, snapshot, the frontier rows of the links it discovered and
the acknowledgement of its own frontier row are written in the same transaction, on the
archive worker's thread (:mod:`nitpicker.archive.worker`); the transaction is committed every
100 pages or 200 ms (and on close). Enabled by the add-on (``NotConfigured`` for a spider
without a crawl session); stats ``nitpicker/archive/pages``, ``nitpicker/archive/links_queued``.
A link to a resource the browser already loaded for its page is answered by that response
(recorded, not queued).

A page's predicted pages (:mod:`nitpicker.middlewares.pagination`) are queued with its links, as
``PREDICTED`` frontier rows. A :class:`~nitpicker.items.MissedPrediction` writes no page: its
frontier row goes (stat ``nitpicker/pagination/missed``), or is queued again as a normal row when
a real link or a sitemap reached the URL meanwhile (``nitpicker/pagination/requeued``).
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING, Any

from twisted.internet import task

from nitpicker.crawl.fetch_errors import TOO_LARGE
from nitpicker.crawl.run_failure import classify_exception
from nitpicker.crawl.session import crawl_session
from nitpicker.crawl.sitemaps import SitemapItem
from nitpicker.items import FollowMode, MissedPrediction, PageItem, answered_link

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from nitpicker.archive.writer import ArchiveWriter
    from nitpicker.crawl.session import CrawlSession

__all__ = ["ArchivePipeline"]

logger = logging.getLogger(__name__)

_FOLLOWED = (FollowMode.FULL, FollowMode.METADATA)


class ArchivePipeline:
    """The archive writer's adapter to Scrapy's item pipeline."""

    def __init__(self, session: CrawlSession, stats: StatsCollector) -> None:
        self.session = session
        self.stats = stats
        self._flusher: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchivePipeline:
        return cls(crawl_session(crawler), crawler.stats)

    def open_spider(self) -> None:
        self._flusher = task.LoopingCall(self._flush)
        self._flusher.start(0.5, now=False)

    def _flush(self) -> None:
        """Commit a batch that has waited long enough (pages may come slowly)."""
        session = self.session
        writer = session.writer
        if writer is not None and session.failure is None and not session.writing:
            session.write_behind(writer.maybe_commit, 1, 0.2)

    def close_spider(self) -> None:
        if self._flusher is not None and self._flusher.running:
            self._flusher.stop()
        session = self.session
        session.settle()
        writer = session.writer
        if writer is not None and session.failure is None:
            try:
                writer.commit()
            except (sqlite3.Error, OSError) as exc:
                session.fail(classify_exception(exc, "close"))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, SitemapItem):
            self._record_sitemap(item)
            return item
        if isinstance(item, MissedPrediction):
            self._drop_prediction(item)
            return item
        if not isinstance(item, PageItem):
            return item
        session = self.session
        if session.failure is not None:
            return item
        session.write_behind(self._write, session.archive, item, session)
        counters = session.counters
        counters.done += 1
        if item.is_target and item.content_type is not None:
            counters.pages += 1
        if item.is_skipped:
            counters.skipped += 1
        if item.is_external:
            counters.external += 1
        if item.error is not None:
            if item.is_external:
                counters.external_errors += 1
            else:
                counters.internal_errors += 1
            if item.error.startswith(TOO_LARGE):
                counters.too_large += 1
        self.stats.inc_value("nitpicker/archive/pages")
        return item

    @staticmethod
    def _write(writer: ArchiveWriter, item: PageItem, session: CrawlSession | None = None) -> None:
        """On the archive worker's thread: the page, its new frontier rows, its acknowledgement.

        A link to a resource the browser loaded for the page (``item.loaded``) is recorded from
        that response, first, and never queued: one request per resource.
        """
        depth = item.depth + 1
        new_links = []
        answered = []
        if item.links:
            loaded = item.loaded
            seen: set[str] = set()
            for link in item.links:
                if link.mode in _FOLLOWED and link.key not in seen:
                    seen.add(link.key)
                    resource = loaded.get(link.url) if loaded else None
                    if resource is not None:
                        answered.append(answered_link(link, resource, depth))
                    else:
                        new_links.append((link.key, link.url, depth, int(link.mode)))
        if answered:
            writer.pages.record_answered(answered)
        target = item.redirect_link
        if target is not None and target.mode in _FOLLOWED:
            # A redirect is not a link: its target is as deep as its source.
            new_links.append((target.key, target.url, item.depth, int(target.mode)))
        if item.predictions:
            predicted = int(FollowMode.PREDICTED)
            new_links.extend((key, url, depth, predicted) for key, url in item.predictions)
        page_id = writer.pages.record(item, new_links)
        writer.templates.note(page_id, frozenset(item.skeleton)
                              if item.html is not None and item.skeleton is not None else None)
        writer.maybe_commit()
        if session is not None and not item.is_external:
            session.site_written += 1

    def _drop_prediction(self, item: MissedPrediction) -> None:
        """A predicted URL that missed: nothing recorded (it counts as fetched for
        ``--max-pages``, as every fetched URL does)."""
        session = self.session
        logger.debug("predicted page missed (%s): %s", item.reason, item.url)
        if session.failure is not None or item.frontier_id is None:
            return
        session.write_behind(self._write_drop, session.archive, item.frontier_id, self.stats,
                             session)

    @staticmethod
    def _write_drop(writer: ArchiveWriter, frontier_id: int, stats: StatsCollector,
                    session: CrawlSession | None = None) -> None:
        """On the archive worker's thread: the missed prediction's frontier row."""
        requeued = writer.frontier.drop_prediction(frontier_id)
        stats.inc_value("nitpicker/pagination/requeued" if requeued else "nitpicker/pagination/missed")
        writer.maybe_commit()
        if session is not None:
            session.site_written += 1

    def _record_sitemap(self, item: SitemapItem) -> None:
        session = self.session
        entries = []
        for raw in dict.fromkeys(item.urls):  # a URL listed again and again is read once
            parsed = session.policy_url(raw)
            if parsed is not None and parsed.is_http:
                entries.append((parsed.url, not session.in_scope(parsed)))
        if entries or item.record is not None:
            try:
                if item.record is None:
                    session.archive.pages.record_sitemap(entries)
                else:
                    session.archive.site.record_sitemap(item.record, entries)
            except (sqlite3.Error, OSError) as exc:
                session.fail(classify_exception(exc))
