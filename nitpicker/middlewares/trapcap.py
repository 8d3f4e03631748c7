"""TrapCapMiddleware: the crawl-time soft cap on crawler traps (``--dedupe-cap``, seed 003).

A spider middleware after :class:`~nitpicker.middlewares.follow.FollowMiddleware` (output runs
through spider middlewares in decreasing order: 500, then this one at 450), so it sees every
link's decided mode. Each in-scope page (``is_target`` and not external) is counted by a
:class:`~nitpicker.policy.trapcap.TrapCap` under its meta signature. Once a signature is capped, the
links of its pages that would be crawled (mode ``FULL``) become ``CAPPED``: the archive records
them as rows with ``skip_reason = 'dedupe cap'`` and never queues them. Pages already fetched
stay recorded, and links found on other pages are untouched. The page that makes a signature
reach its threshold already has its links capped.

Each firing is a row of the archive's audit table ``trap_events`` (signature, parent path,
count, first and last URL, and its score: the firing page's threshold and signals), written in the same transaction as the page, and one INFO line.
On ``--resume`` the signatures capped by earlier runs are capped again, from the archive's run
log (:meth:`~nitpicker.archive.run_log.RunLog.capped_signatures`).

Enabled by the setting ``NITPICKER_DEDUPE_CAP`` (default 100; ``--dedupe-cap N``, projected
into it by the spider when N is not 100; ``NotConfigured`` when it is 0 or ``None``:
``--dedupe-cap 0``), with ``NITPICKER_DEDUPE_AGE_WINDOW``
(``--dedupe-age-window``) and ``NITPICKER_DEDUPE_MAP_CAP`` (``--dedupe-map-cap``). Stats ``nitpicker/trapcap/fired``,
``nitpicker/trapcap/capped_links``, ``nitpicker/trapcap/entries`` (the most signatures counted
at once) and, at close, ``nitpicker/trapcap/sticky`` and ``nitpicker/trapcap/evicted_{age,
bucket,lru}``.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from nitpicker.crawl.run_failure import classify_exception
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode, PageItem
from nitpicker.policy.trapcap import TrapCap

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from nitpicker.crawl.session import CrawlSession
    from nitpicker.policy.trapcap import Verdict

__all__ = ["TrapCapMiddleware", "TrapCapSettings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrapCapSettings:
    """The ``NITPICKER_DEDUPE_*`` settings, parsed once."""

    dedupe_cap: int
    """``NITPICKER_DEDUPE_CAP``: same-signature pages after which their links are capped."""
    dedupe_age_window: int
    """``NITPICKER_DEDUPE_AGE_WINDOW``: links seen after which an uncapped signature goes."""
    dedupe_map_cap: int
    """``NITPICKER_DEDUPE_MAP_CAP``: most signatures held in memory."""

    def __post_init__(self) -> None:
        cap = self.dedupe_cap
        if cap < 1:
            raise ValueError(f"NITPICKER_DEDUPE_CAP must be at least 1, got {cap}")
        for name, value in (("AGE_WINDOW", self.dedupe_age_window),
                            ("MAP_CAP", self.dedupe_map_cap)):
            if value < cap:
                raise ValueError(f"NITPICKER_DEDUPE_{name} ({value}) must not be smaller than "
                                 f"NITPICKER_DEDUPE_CAP ({cap})")

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> TrapCapSettings | None:
        """The trap cap's settings; ``None`` when it is off (``NITPICKER_DEDUPE_CAP`` 0 or
        ``None``)."""
        cap = settings.get("NITPICKER_DEDUPE_CAP")
        if cap is None or int(cap) == 0:
            return None
        return cls(
            dedupe_cap=int(cap),
            dedupe_age_window=settings.getint("NITPICKER_DEDUPE_AGE_WINDOW"),
            dedupe_map_cap=settings.getint("NITPICKER_DEDUPE_MAP_CAP"),
        )


_LOOKED_EMPTY_CAP = 10_000
"""Prefixes remembered between two looks at most (forgetting them costs only another look)."""


class TrapCapMiddleware:
    """Caps the links of pages whose meta signature is a crawler trap."""

    def __init__(self, session: CrawlSession, stats: StatsCollector,
                 config: TrapCapSettings) -> None:
        self.session = session
        self.stats = stats
        self.config = config
        self.cap = self.build_cap(config)
        self._restored = False
        self._looked_empty: dict[str, int] = {}
        """Prefixes with nothing pending at a look while writes were queued: the archive
        worker's ``submitted`` count then."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapCapMiddleware:
        config = TrapCapSettings.from_settings(crawler.settings)
        if config is None:
            raise NotConfigured  # turned off (--dedupe-cap 0): no "Disabled" warning
        middleware = cls(crawl_session(crawler), crawler.stats, config)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def build_cap(self, config: TrapCapSettings) -> TrapCap:
        """The cap's state and policy. Override to use a :class:`TrapCap` subclass.

        One of ``--workers N`` counts with the other workers (:class:`SharedTrapCap`).
        """
        role = self.session.role
        if role is not None and role.trap_counts is not None:
            from nitpicker.archive.trap_counts import TrapCounts
            from nitpicker.policy.shared_trapcap import SharedTrapCap

            return SharedTrapCap(config.dedupe_cap, TrapCounts(role.trap_counts),
                                 age_window=config.dedupe_age_window,
                                 map_cap=config.dedupe_map_cap)
        return TrapCap(
            config.dedupe_cap,
            age_window=config.dedupe_age_window,
            map_cap=config.dedupe_map_cap,
            has_pending_under=self.has_pending_under,
        )

    # -- the policy -------------------------------------------------------------------------

    def counts(self, item: PageItem) -> bool:
        """Whether ``item`` is counted: an in-scope page (out-of-scope pages are never capped)."""
        return item.is_target and not item.is_external

    def links_seen(self) -> int:
        """The crawl's anchor index: the distinct links it has discovered so far.

        That is the frontier rows added (pending ones plus those this run leased), not every
        anchor on every page: a site-wide navigation repeated on each page would otherwise
        use up the age window long before a trap whose pages carry it reached the cap.
        """
        session = self.session
        writer = session.writer
        if writer is None:
            return self.cap.anchor_index
        return writer.frontier.pending + session.counters.leased

    def has_pending_under(self, prefix: str) -> bool:
        """Whether the frontier still has a URL to fetch whose key starts with ``prefix``,
        counting the links of pages still being written.

        Without waiting for them: a prefix with nothing pending while the archive's thread
        had writes queued is kept, and found empty only at a later look, once those writes
        have run (the reactor thread used to wait for the queue here: 16 % of its time)."""
        writer = self.session.writer
        if writer is None:
            return True  # cannot tell: keep the bucket
        if writer.frontier.has_pending_under(prefix):
            self._looked_empty.pop(prefix, None)
            return True
        worker = self.session.worker
        if worker is None or worker.finished >= worker.submitted:
            self._looked_empty.pop(prefix, None)
            return False  # every write submitted has run
        if len(self._looked_empty) > _LOOKED_EMPTY_CAP:  # buckets evicted before a second look
            self._looked_empty.clear()
        queued_then = self._looked_empty.setdefault(prefix, worker.submitted)
        if worker.finished >= queued_then:
            del self._looked_empty[prefix]
            return False
        return True

    # -- the middleware ---------------------------------------------------------------------

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for item in result:
            if isinstance(item, PageItem) and self.counts(item):
                self.check(item)
            yield item

    def check(self, item: PageItem) -> None:
        """Count ``item``; cap its links when its signature is capped."""
        if not self._restored:
            self.restore()
        cap = self.cap
        cap.advance_to(self.links_seen())
        verdict = cap.observe(item.url, item.meta)
        if verdict is None:
            return
        self.stats.max_value("nitpicker/trapcap/entries", cap.entries)
        if verdict.fired:
            self.record(item, verdict)
        if verdict.capped:
            capped = self.cap_links(item)
            if capped:
                self.stats.inc_value("nitpicker/trapcap/capped_links", capped)

    def cap_links(self, item: PageItem) -> int:
        """Turn the links of ``item`` that would be crawled into ``CAPPED``; how many."""
        capped = 0
        for link in item.links:
            if link.mode is FollowMode.FULL:
                link.mode = FollowMode.CAPPED
                capped += 1
        return capped

    def record(self, item: PageItem, verdict: Verdict) -> None:
        """A signature reached its threshold on ``item``: the audit row and one log line."""
        self.stats.inc_value("nitpicker/trapcap/fired")
        logger.info(
            "trap cap: %d pages under %s share one signature (title %r, threshold %s); links "
            "on its pages are no longer queued (first %s, now %s)",
            verdict.count, verdict.parent_path, item.meta.title, verdict.threshold,
            verdict.first_url, item.url,
        )
        session = self.session
        try:
            signals = verdict.signals
            session.archive.runs.record_trap_event(
                verdict.signature, verdict.parent_path, verdict.count or 0, verdict.first_url,
                item.url, threshold=verdict.threshold,
                trap_signals=signals.trap if signals else (),
                legit_signals=signals.legit if signals else (),
            )
        except (sqlite3.Error, OSError) as exc:
            session.fail(classify_exception(exc))

    def restore(self) -> None:
        """On ``--resume``, cap again the signatures earlier runs capped (the run log)."""
        self._restored = True
        if not self.session.config.resume:
            return
        self.session.settle()  # the worker is idle now, and stays so while this runs
        for signature in self.session.archive.runs.capped_signatures():
            self.cap.immunise(signature)
        if self.cap.sticky:
            logger.info("trap cap: %d signature(s) capped by earlier runs", len(self.cap.sticky))

    def spider_closed(self) -> None:
        cap = self.cap
        self.stats.set_value("nitpicker/trapcap/sticky", len(cap.sticky))
        self.stats.set_value("nitpicker/trapcap/evicted_age", cap.evicted_age)
        self.stats.set_value("nitpicker/trapcap/evicted_bucket", cap.evicted_bucket)
        self.stats.set_value("nitpicker/trapcap/evicted_lru", cap.evicted_lru)
