"""FollowMiddleware: decides the follow mode of every link on a page (SPEC §3.3).

A spider middleware: for each ``PageItem`` the spider yields it sets each link's mode
(full crawl, metadata only, unfetched row, excluded) and whether it is out of scope, through
the session's :class:`~nitpicker.policy.follow.FollowPolicy`; the same for the target of a
handed-over redirect (``PageItem.redirect_link``: queued as a link to it would be). Later
middlewares (the trap cap) see the decided links. Always enabled by the add-on (``NotConfigured`` for a spider without a
crawl session).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode, PageItem
from nitpicker.policy.urls import parse_url

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from nitpicker.crawl.session import CrawlSession
    from nitpicker.items import LinkRecord

__all__ = ["FollowMiddleware"]

_CACHE_SIZE = 50_000


class FollowMiddleware:
    """Sets ``LinkRecord.mode`` and ``is_external`` on every page's links."""

    def __init__(self, session: CrawlSession) -> None:
        self.session = session
        self._decisions: OrderedDict[str, tuple[FollowMode, bool]] = OrderedDict()
        self._scope_version = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FollowMiddleware:
        return cls(crawl_session(crawler))

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for item in result:
            if isinstance(item, PageItem):
                if item.links:
                    self.decide(item)
                elif item.redirect_link is not None:
                    self._decide_redirect(item.redirect_link)
            yield item

    def _decide_redirect(self, link: LinkRecord) -> None:
        """The mode of a handed-over redirect's target, as a link to it would get."""
        session = self.session
        parsed = parse_url(link.url, disable_queries=session.config.disable_queries)
        if parsed is None:
            link.mode, link.is_external = FollowMode.STUB, True
        else:
            link.mode, link.is_external = session.policy.should_follow(parsed)

    def decide(self, item: PageItem) -> None:
        session = self.session
        policy = session.policy
        if session.scope_version != self._scope_version:
            self._decisions.clear()
            self._scope_version = session.scope_version
        disable_queries = session.config.disable_queries
        decisions = self._decisions
        invalid = FollowMode.INVALID
        for link in item.links:
            if link.mode is invalid:
                continue
            url = link.url
            decision = decisions.get(url)
            if decision is None:
                parsed = parse_url(url, disable_queries=disable_queries)
                if parsed is None:
                    decision = (FollowMode.STUB, True)
                else:
                    decision = policy.should_follow(parsed)
                decisions[url] = decision
                if len(decisions) > _CACHE_SIZE:
                    decisions.popitem(last=False)
            link.mode, link.is_external = decision
