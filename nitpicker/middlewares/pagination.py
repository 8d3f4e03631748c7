"""PaginationMiddleware: predictive pagination (SPEC §3.9), the pages ahead of a pager.

A pager shows a few pages at a time: crawled link by link, a 200-page section is fetched one
page after another, each waiting for the one before. This spider middleware looks at each
in-scope page's links to be crawled (mode ``FULL``, as the follow middleware and the trap cap
left them) and, where the page and its links form a series of URLs differing in one integer
token (:func:`nitpicker.policy.pagination.predict`), predicts the next ``CONCURRENT_REQUESTS``
(``--parallels``) pages of the series. They go on the page's item (``PageItem.predictions``);
the archive pipeline queues them as ``PREDICTED`` frontier rows, never as page rows, and the
scheduler fetches them marked ``nitpicker_predicted``. A predicted URL that answers as a page
(2xx, not redirected, not skipped) is recorded like any other, once: its frontier row is done,
so a real link found later only adds its anchor. One that misses becomes a
:class:`~nitpicker.items.MissedPrediction` in the spider and leaves nothing in the archive
(:meth:`~nitpicker.archive.frontier_store.FrontierStore.drop_prediction`).

Registered by the add-on after the trap cap (output runs through spider middlewares in
decreasing order: follow 500, trap cap 450, this one 400): a capped page's links are no longer
``FULL``, so a trap is never predicted further; misses are not ``PageItem`` s, so they never
count towards a trap signature. A shape whose predictions keep missing is no longer predicted
(:class:`~nitpicker.policy.pagination.PredictionLedger`), nor one predicted
``MAX_PREDICTED_PER_SERIES`` numbers ahead already. Predictions are made only from pages that
answered 2xx; a page fetched because it was predicted extends its own series only when its
links continue it.

Enabled by the setting ``NITPICKER_PREDICT_PAGINATION`` (default ``True``; the spider sets it
``False`` for ``--no-predict-pagination`` and for a crawl that does not follow links).
Stats ``nitpicker/pagination/predicted`` (URLs queued as predictions, before the frontier
drops known ones), ``nitpicker/pagination/answered``, ``nitpicker/pagination/capped``
(predictions left out by the per-series cap) and, from the pipeline,
``nitpicker/pagination/missed`` and ``nitpicker/pagination/requeued``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from nitpicker.crawl.meta import META_PREDICTED
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode, MissedPrediction, PageItem
from nitpicker.policy.pagination import PredictionLedger, predict

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from nitpicker.crawl.session import CrawlSession

__all__ = ["PaginationMiddleware"]

logger = logging.getLogger(__name__)


class PaginationMiddleware:
    """Puts the pages predicted ahead of each page's pager links on its item."""

    def __init__(self, session: CrawlSession, stats: StatsCollector, count: int) -> None:
        self.session = session
        self.stats = stats
        self.count = count
        """Pages predicted ahead per series: the crawl's concurrency."""
        self.ledger = PredictionLedger(slack=count)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PaginationMiddleware:
        settings = crawler.settings
        if not settings.getbool("NITPICKER_PREDICT_PAGINATION"):
            raise NotConfigured("predictive pagination is off (NITPICKER_PREDICT_PAGINATION)")
        return cls(crawl_session(crawler), crawler.stats, settings.getint("CONCURRENT_REQUESTS"))

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        predicted = bool(response.meta.get(META_PREDICTED))
        async for item in result:
            if isinstance(item, PageItem):
                if predicted:
                    self.ledger.record(item.url, hit=True)
                    self.stats.inc_value("nitpicker/pagination/answered")
                if self.predicts_from(item):
                    self.predict(item, predicted=predicted)
            elif isinstance(item, MissedPrediction):
                self.ledger.record(item.url, hit=False)
            yield item

    def predicts_from(self, item: PageItem) -> bool:
        """Whether ``item``'s links are looked at: an in-scope page that answered 2xx."""
        status = item.status
        return (bool(item.links) and item.is_target and not item.is_external
                and status is not None and 200 <= status < 300)

    def predict(self, item: PageItem, *, predicted: bool = False) -> None:
        """Put on ``item`` the predicted pages the follow policy would crawl fully.

        ``predicted``: ``item`` was fetched because it was predicted."""
        full = FollowMode.FULL
        links = [link.url for link in item.links if link.mode is full]
        session = self.session
        ledger = self.ledger
        for prediction in predict(item.url, links, self.count, ledger.allows,
                                  predicted=predicted):
            parsed = session.policy_url(prediction.url)
            if parsed is None or session.policy.should_follow(parsed) != (full, False):
                continue
            if not ledger.admits(prediction):
                self.stats.inc_value("nitpicker/pagination/capped")
                continue
            item.predictions.append((parsed.key, parsed.url))
        if item.predictions:
            self.stats.inc_value("nitpicker/pagination/predicted", len(item.predictions))
