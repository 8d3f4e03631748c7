"""RenderChoiceMiddleware: which requests open the browser, and on which pooled page.

Only in-scope HTML pages are rendered. A full-crawl request is first sent over HTTP as a
*preflight* whose download stops after the headers (see BodyGuard); when the answer is
HTML in scope, the middleware replaces it with a browser request for the final URL, carrying
the redirect chain the preflight followed (a predicted page whose preflight missed, see
:mod:`nitpicker.middlewares.pagination`, is not rendered: it is not recorded). Non-HTML answers are recorded from the preflight
headers; external and metadata-only URLs never open a browser. A downloader middleware,
enabled by the add-on, active when ``CrawlConfig.render`` is on (the default; ``--no-render``
turns it off, and then neither Playwright nor scrapy-playwright is imported).

Browser requests render on pages kept open from URL to URL
(:class:`nitpicker.render.pool.PagePool`, ``NITPICKER_RENDER_PAGES`` of them): a browser
request leases a page when it enters the downloader and gives it back as soon as the download
is over (``response_downloaded``), or closes it when the download failed
(``request_left_downloader``); the pages are closed when the spider closes. Stats:
``nitpicker/render/rendered``, ``nitpicker/render/not_html``,
``nitpicker/render/pages_reused``, ``nitpicker/render/pages_replaced``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured

from nitpicker.crawl.meta import (
    DOWNLOAD_LATENCY,
    META_DOCUMENT_LATENCY,
    META_MODE,
    META_PAGE,
    META_PREDICTED,
    META_PREFLIGHT,
    META_REDIRECT_TO,
    META_RENDER,
    PLAYWRIGHT,
    PLAYWRIGHT_PAGE,
    PLAYWRIGHT_PAGE_GOTO_KWARGS,
    is_browser_request,
    is_html,
    media_type,
)
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode
from nitpicker.policy.pagination import answered
from nitpicker.render.page import RenderResult, page_meta
from nitpicker.render.settings import RenderSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from nitpicker.crawl.session import CrawlSession
    from nitpicker.render.pool import PagePool

__all__ = ["RenderChoiceMiddleware"]


class RenderChoiceMiddleware:
    """Turns in-scope HTML preflights into browser requests, and lends them pooled pages."""

    def __init__(self, crawler: Crawler, render: RenderSettings, session: CrawlSession) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.render = render
        self._session = session
        self._pool: PagePool | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderChoiceMiddleware:
        session = crawl_session(crawler)
        render = RenderSettings.from_settings(crawler.settings, session.config)
        if not render.enabled:
            # --no-render: nothing to choose, and no layer on every request and response.
            raise NotConfigured  # (no message: Scrapy would log it as a warning)
        middleware = cls(crawler, render, session)
        crawler.signals.connect(middleware._downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(middleware._left_downloader, signal=signals.request_left_downloader)
        crawler.signals.connect(middleware._spider_closed, signal=signals.spider_closed)
        return middleware

    @property
    def pool(self) -> PagePool:
        """The pooled browser pages (made on the first browser request)."""
        if self._pool is None:
            # Imports Playwright: only a crawl that renders gets here.
            from nitpicker.render.pool import PagePool

            self._pool = PagePool(self.render.pages, self.render.context)
        return self._pool

    async def process_request(self, request: Request) -> None:
        meta = request.meta
        if is_browser_request(meta):
            if isinstance(meta.get(META_RENDER), RenderResult) and META_PAGE not in meta:
                meta[META_PAGE] = await self.pool.lease(request, meta[META_RENDER])
            return
        if META_PREFLIGHT in meta or META_MODE not in meta:
            return
        if meta[META_MODE] == FollowMode.FULL:
            meta[META_PREFLIGHT] = True

    def process_response(self, request: Request, response: Response) -> Request | Response:
        meta = request.meta
        if not meta.get(META_PREFLIGHT) or is_browser_request(meta) or META_REDIRECT_TO in meta:
            return response  # (a redirect handed over to the frontier is not a page)
        if meta.get(META_PREDICTED) and not answered(
            response.status, redirected=bool(meta.get("redirect_urls")), skipped=False
        ):
            return response  # a predicted page that missed: nothing to render, nothing recorded
        if not is_html(media_type(response.headers)):
            self.stats.inc_value("nitpicker/render/not_html")
            return response
        if not self._session.in_scope(response.url):
            return response
        self.stats.inc_value("nitpicker/render/rendered")
        return self.browser_request(request, response)

    def process_exception(self, request: Request, exception: Exception) -> None:
        # A request that leased a page but failed before reaching the download handler.
        self._give_back(request, healthy=False)

    # -- the page goes back to the pool ----------------------------------------------------------

    def _downloaded(self, response: Response, request: Request) -> None:
        self._give_back(request, healthy=True)

    def _left_downloader(self, request: Request) -> None:
        self._give_back(request, healthy=False)  # a no-op once the page was given back

    def _give_back(self, request: Request, *, healthy: bool) -> None:
        slot = request.meta.pop(META_PAGE, None)
        if slot is None:
            return
        page = request.meta.pop(PLAYWRIGHT_PAGE, None)
        result = request.meta.get(META_RENDER)
        self.pool.give_back(slot, page, result if isinstance(result, RenderResult) else None,
                            healthy=healthy)

    async def _spider_closed(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self.stats.set_value("nitpicker/render/pages_reused", self._pool.reused)
            self.stats.set_value("nitpicker/render/pages_replaced", self._pool.replaced)

    def browser_request(self, request: Request, preflight: Response) -> Request:
        """The browser request that replaces an HTML preflight."""
        meta = {
            key: value
            for key, value in request.meta.items()
            if key.startswith("nitpicker_") and key != META_PREFLIGHT
        }
        meta.update(page_meta(RenderResult(self.render.options,
                                           request_headers=self._session.request_headers)))
        meta.update(
            {
                PLAYWRIGHT: True,
                PLAYWRIGHT_PAGE_GOTO_KWARGS: {
                    "wait_until": "domcontentloaded",
                    "timeout": self.render.navigation_timeout_ms,
                },
                "redirect_urls": request.meta.get("redirect_urls", []),
                "redirect_reasons": request.meta.get("redirect_reasons", []),
                "download_slot": "browser",
                META_DOCUMENT_LATENCY: request.meta.get(DOWNLOAD_LATENCY),
            }
        )
        return Request(
            preflight.url,
            callback=request.callback,
            errback=request.errback,
            dont_filter=True,
            meta=meta,
        )
