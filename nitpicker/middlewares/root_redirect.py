"""RootRedirectMiddleware: a root that redirects elsewhere brings its destination into scope.

A start URL often redirects — apex → www, http → https, another TLD. The destination is
then added as a root (a scope entry), before the page is read, so the crawl does not
dead-end after one page. Both URLs are recorded: the root as a redirect source, the
destination as the page. A downloader middleware just inside RedirectMiddleware (it sees
the final response of the chain), always enabled by the add-on (``NotConfigured`` for a
spider without a crawl session); stat ``nitpicker/root_redirect/added``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.crawl.meta import META_DEPTH, META_MODE, is_browser_request
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from nitpicker.crawl.session import CrawlSession

__all__ = ["RootRedirectMiddleware"]


class RootRedirectMiddleware:
    """Adds the destination of a redirecting root to the crawl's roots."""

    def __init__(self, session: CrawlSession, stats: StatsCollector) -> None:
        self.session = session
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RootRedirectMiddleware:
        return cls(crawl_session(crawler), crawler.stats)

    def process_response(self, request: Request, response: Response) -> Response:
        meta = request.meta
        if (
            meta.get(META_DEPTH) == 0
            and meta.get(META_MODE) == FollowMode.FULL
            and meta.get("redirect_urls")
            and not is_browser_request(meta)
        ):
            session = self.session
            final = session.policy_url(response.url)
            if final is not None and final.is_http and not session.in_scope(final):
                session.add_root(final.url)
                self.stats.inc_value("nitpicker/root_redirect/added")
        return response
