"""ScopedHeadersMiddleware: the root URL's credentials and ``--header`` on in-scope requests.

A downloader middleware, enabled by the add-on, active when the crawl has credentials in a
root URL or a ``--header`` (``NotConfigured`` otherwise: no layer on every request). For each
request the crawler makes over HTTP it asks the crawl's
:class:`~nitpicker.policy.request_headers.RequestHeaders` what goes with the request's URL:
in scope, the headers are set (``Authorization: Basic …`` from the credentials of the root
the URL lies under); out of scope, every header name the crawl sets is removed — a redirect
hop copies its source's headers, and a hop that leaves scope must not carry them. Each hop
of a redirect comes back through this middleware, so each is decided on its own URL.

Why not Scrapy's ``HttpAuthMiddleware``: it has one user and password per spider and sends
them to a domain and all its subdomains, whatever the port, scheme or path. A crawl's scope
is host, port and path, a root each, and may hold roots with different credentials.
Browser requests are not touched here: the browser adds the same headers itself
(:class:`nitpicker.render.devtools.PageSession`). Stat ``nitpicker/request_headers/sent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from nitpicker.crawl.meta import is_browser_request
from nitpicker.crawl.session import crawl_session

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from nitpicker.crawl.session import CrawlSession
    from nitpicker.policy.request_headers import RequestHeaders

__all__ = ["ScopedHeadersMiddleware"]


class ScopedHeadersMiddleware:
    """Sets the crawl's extra headers on in-scope requests, removes them from the others."""

    def __init__(self, session: CrawlSession, headers: RequestHeaders,
                 stats: StatsCollector) -> None:
        self.session = session
        self.headers = headers
        self.stats = stats
        self._names = tuple(headers.names)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScopedHeadersMiddleware:
        session = crawl_session(crawler)
        if session.request_headers is None:
            raise NotConfigured  # (no message: Scrapy would log it as a warning)
        return cls(session, session.request_headers, crawler.stats)

    def process_request(self, request: Request) -> None:
        if is_browser_request(request.meta):
            return
        found = self.headers.for_page(self.session.policy_url(request.url))
        headers = request.headers
        for name in self._names:
            if name in headers:
                del headers[name]
        if found:
            for name, value in found:
                headers.appendlist(name, value)
            self.stats.inc_value("nitpicker/request_headers/sent")
