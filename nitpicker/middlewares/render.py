"""RenderChoiceMiddleware: which requests open the browser, and on which pooled page.

Only in-scope HTML pages are rendered. A full-crawl request is first sent over HTTP as a
*preflight* whose download stops after the headers (see BodyGuard); when the answer is
HTML in scope, the middleware replaces it with a browser request for the final URL, carrying
the redirect chain the preflight followed. Non-HTML answers are recorded from the preflight
headers; external and metadata-only URLs never open a browser. A downloader middleware,
enabled by the add-on, active when ``CrawlConfig.render`` is on (the default; ``--no-render``
turns it off).

Browser requests render on pages kept open from URL to URL (:class:`nitpicker.browser.PagePool`,
``NITPICKER_RENDER_PAGES`` of them): a browser request leases a page when it enters the
downloader and gives it back as soon as the download is over (``response_downloaded``), or
closes it when the download failed (``request_left_downloader``); the pages are closed when
the spider closes. Stats: ``nitpicker/render/rendered``, ``nitpicker/render/not_html``,
``nitpicker/render/pages_reused``, ``nitpicker/render/pages_replaced``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy_playwright.page import PageMethod

from nitpicker.browser import PagePool, PageSlot, context_kwargs, render_pages
from nitpicker.frontier import META_MODE
from nitpicker.items import FollowMode
from nitpicker.render import RenderOptions, RenderResult, render_page
from nitpicker.session import crawl_session

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from nitpicker.session import CrawlSession

__all__ = ["META_PAGE", "META_PREFLIGHT", "META_RENDER", "RenderChoiceMiddleware"]

META_PREFLIGHT = "nitpicker_preflight"
META_RENDER = "nitpicker_render"
META_PAGE = "nitpicker_page"
_HTML_TYPES = (b"text/html", b"application/xhtml+xml")


class RenderChoiceMiddleware:
    """Turns in-scope HTML preflights into browser requests, and lends them pooled pages."""

    def __init__(self, crawler: Crawler, session: CrawlSession) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self._session = session
        settings = crawler.settings
        self.network_idle_ms = settings.getint("NITPICKER_NETWORK_IDLE_MS")
        self.network_quiet_ms = settings.getint("NITPICKER_NETWORK_QUIET_MS")
        self.lazy_wait_ms = settings.getint("NITPICKER_LAZY_WAIT_MS")
        self.navigation_timeout_ms = settings.getint("NITPICKER_NAVIGATION_TIMEOUT_MS")
        self._pool: PagePool | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderChoiceMiddleware:
        session = crawl_session(crawler)
        if not session.config.render:
            # --no-render: nothing to choose, and no layer on every request and response.
            raise NotConfigured  # (no message: Scrapy would log it as a warning)
        middleware = cls(crawler, session)
        crawler.signals.connect(middleware._downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(middleware._left_downloader, signal=signals.request_left_downloader)
        crawler.signals.connect(middleware._spider_closed, signal=signals.spider_closed)
        return middleware

    @property
    def pool(self) -> PagePool:
        """The pooled browser pages (made on the first browser request)."""
        if self._pool is None:
            config = self._session.config
            self._pool = PagePool(render_pages(self.crawler.settings, config),
                                  context_kwargs(self.crawler.settings, config))
        return self._pool

    async def process_request(self, request: Request) -> None:
        meta = request.meta
        if meta.get("playwright"):
            if isinstance(meta.get(META_RENDER), RenderResult) and META_PAGE not in meta:
                meta[META_PAGE] = await self.pool.lease(request, meta[META_RENDER])
            return
        if META_PREFLIGHT in meta or META_MODE not in meta:
            return
        if meta[META_MODE] == FollowMode.FULL and self._session.config.render:
            meta[META_PREFLIGHT] = True

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if not request.meta.get(META_PREFLIGHT) or request.meta.get("playwright"):
            return response
        content_type = (response.headers.get(b"Content-Type") or b"").split(b";", 1)[0].strip().lower()
        if content_type not in _HTML_TYPES:
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
        if not isinstance(slot, PageSlot):
            return
        page = request.meta.pop("playwright_page", None)
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
        config = self._session.config
        result = RenderResult(
            RenderOptions(
                network_idle_ms=self.network_idle_ms,
                network_quiet_ms=self.network_quiet_ms,
                lazy_wait_ms=self.lazy_wait_ms,
                images=config.image,
                user_agent=config.user_agent,
            )
        )
        meta = {
            key: value
            for key, value in request.meta.items()
            if key.startswith("nitpicker_") and key != META_PREFLIGHT
        }
        meta.update(
            {
                META_RENDER: result,
                "playwright": True,
                "playwright_page_goto_kwargs": {
                    "wait_until": "domcontentloaded",
                    "timeout": self.navigation_timeout_ms,
                },
                "playwright_page_methods": [PageMethod(render_page, result)],
                "playwright_page_event_handlers": result.event_handlers(),
                "playwright_page_init_callback": result.prepare,
                "redirect_urls": request.meta.get("redirect_urls", []),
                "redirect_reasons": request.meta.get("redirect_reasons", []),
                "download_slot": "browser",
            }
        )
        return Request(
            preflight.url,
            callback=request.callback,
            errback=request.errback,
            dont_filter=True,
            meta=meta,
        )
