"""RenderChoiceMiddleware: which requests open the browser.

Only in-scope HTML pages are rendered. A full-crawl request is first sent over HTTP as a
*preflight* whose download stops after the headers (see BodyGuard); when the answer is
HTML in scope, the middleware replaces it with a browser request for the final URL, carrying
the redirect chain the preflight followed. Non-HTML answers are recorded from the preflight
headers; external and metadata-only URLs never open a browser. A downloader middleware,
enabled by the add-on, active when ``CrawlConfig.render`` is on (the default; ``--no-render``
turns it off). Stats: ``nitpicker/render/rendered``, ``nitpicker/render/not_html``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy_playwright.page import PageMethod

from nitpicker.frontier import META_MODE
from nitpicker.items import FollowMode
from nitpicker.render import RenderOptions, RenderResult, render_page

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["META_PREFLIGHT", "META_RENDER", "RenderChoiceMiddleware"]

META_PREFLIGHT = "nitpicker_preflight"
META_RENDER = "nitpicker_render"
_HTML_TYPES = (b"text/html", b"application/xhtml+xml")


class RenderChoiceMiddleware:
    """Turns in-scope HTML preflights into browser requests."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.network_idle_ms = crawler.settings.getint("NITPICKER_NETWORK_IDLE_MS", 5000)
        self.lazy_wait_ms = crawler.settings.getint("NITPICKER_LAZY_WAIT_MS", 3000)
        self.navigation_timeout_ms = crawler.settings.getint("NITPICKER_NAVIGATION_TIMEOUT_MS", 30000)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderChoiceMiddleware:
        return cls(crawler)

    @property
    def _session(self) -> Any:
        return self.crawler.spider.session  # type: ignore[union-attr]

    def process_request(self, request: Request) -> None:
        meta = request.meta
        if meta.get("playwright") or META_PREFLIGHT in meta or META_MODE not in meta:
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
        session = self._session
        target = session.policy_url(response.url)
        if target is None or session.policy.is_external(target):
            return response
        self.stats.inc_value("nitpicker/render/rendered")
        return self.browser_request(request, response)

    def browser_request(self, request: Request, preflight: Response) -> Request:
        """The browser request that replaces an HTML preflight."""
        config = self._session.config
        result = RenderResult(
            RenderOptions(
                network_idle_ms=self.network_idle_ms,
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
                "playwright_page_event_handlers": {
                    "response": result.on_response,
                    "requestfailed": result.on_request_failed,
                },
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
