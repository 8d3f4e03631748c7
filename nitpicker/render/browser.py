"""BrowserHandler: scrapy-playwright's download handler, one Chromium for the whole crawl.

Set as the http and https download handler by
:meth:`nitpicker.render.settings.RenderSettings.configure` when the crawl renders (so this
module, and Playwright with it, is imported only then). Chromium is found by
:func:`nitpicker.render.chromium.find_chromium` (Debian's ``chromium`` package, or
Playwright's own download); a browser that disconnects is relaunched by scrapy-playwright on
the next page.

Every browser download is bounded end to end (:func:`nitpicker.render.page.download_bound_s`:
171 s with the default settings). The page steps have bounds of their own, but a wedged
browser can leave a call without any: ``BrowserContext.new_page`` was seen never to return on a
loaded machine, on the retry of a page whose script loops forever. A download past its bound
fails with :class:`BrowserTimeoutError` (tried once more by the browser retry, then recorded
with status -1), and its browser context is given up: closed in the background, and the pooled
page's slot opens a new one (:meth:`nitpicker.render.pool.PageSlot.renew`).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING, ClassVar

from playwright.async_api import Error as PlaywrightError
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from nitpicker.crawl.meta import (
    META_DOWNLOAD_TASK,
    META_PAGE,
    META_RENDER,
    PLAYWRIGHT,
    PLAYWRIGHT_CONTEXT,
)
from nitpicker.render.page import RenderOptions, RenderResult, download_bound_s
from nitpicker.render.pool import PageSlot

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["BrowserHandler", "BrowserTimeoutError"]

logger = logging.getLogger(__name__)

#: Longest wait for the browser to close at the end of a crawl.
_CLOSE_S = 60
#: Longest wait for a browser context given up to close.
_CONTEXT_CLOSE_S = 10


class BrowserTimeoutError(Exception):
    """A browser download did not finish within its bound (the browser stopped answering)."""


class BrowserHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]
    """scrapy-playwright's download handler, one instance for both ``http`` and ``https``.

    Scrapy builds one download handler per scheme, and each scrapy-playwright handler starts a
    Playwright driver and a Chromium of its own (with the pool's browser contexts): an idle
    second browser in every crawl, and a pooled page belonging to one browser while the other
    handles the URL. Here a crawler's schemes share one handler: one driver, one browser. It
    closes when the last scheme using it closes.
    """

    _shared: ClassVar[weakref.WeakKeyDictionary[Crawler, BrowserHandler]] = (
        weakref.WeakKeyDictionary())

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._schemes = 0
        self._closing: set[asyncio.Task[None]] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BrowserHandler:
        handler = cls._shared.get(crawler)
        if handler is None:
            handler = cls._shared[crawler] = cls(crawler)
        handler._schemes += 1
        return handler

    async def download_request(self, request: Request) -> Response:
        """scrapy-playwright's download, a browser one bounded (:class:`BrowserTimeoutError`);
        a stopping crawl can cancel it (its page is then given back to the pool, see
        :mod:`nitpicker.middlewares.stop`)."""
        meta = request.meta
        meta[META_DOWNLOAD_TASK] = asyncio.current_task()
        try:
            if not meta.get(PLAYWRIGHT):
                response: Response = await super().download_request(request)
                return response
            bound = self.bound_s(request)
            try:
                async with asyncio.timeout(bound) as deadline:
                    response = await super().download_request(request)
            except TimeoutError:
                if not deadline.expired():
                    raise  # a timeout of the download's own
                self._give_up_context(request)
                raise BrowserTimeoutError(
                    f"the browser did not finish the page within {bound:g} s") from None
            return response
        finally:
            meta.pop(META_DOWNLOAD_TASK, None)

    def bound_s(self, request: Request) -> float:
        """The longest ``request``'s browser download may take."""
        result = request.meta.get(META_RENDER)
        options = result.options if isinstance(result, RenderResult) else RenderOptions()
        return download_bound_s(int(self.config.navigation_timeout_ms or 30000), options)

    def _give_up_context(self, request: Request) -> None:
        """After a download past its bound: its pooled page's slot gets a new browser context,
        and the old one (a page stuck in it, a page it may still be opening) is closed."""
        name = request.meta.get(PLAYWRIGHT_CONTEXT)
        slot = request.meta.get(META_PAGE)
        if isinstance(slot, PageSlot):
            slot.renew()
        wrapper = self.context_wrappers.pop(name, None) if name is not None else None
        logger.warning("browser download of %s past its bound: browser context %s given up",
                       request.url, name)
        if wrapper is not None:
            task = asyncio.ensure_future(self._close_context(name, wrapper.context))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _close_context(name: str, context: BrowserContext) -> None:
        try:
            await asyncio.wait_for(context.close(), _CONTEXT_CLOSE_S)
        except (PlaywrightError, TimeoutError) as exc:
            logger.warning("browser context %s given up did not close: %s", name,
                           str(exc) or type(exc).__name__)

    async def close(self) -> None:
        self._schemes -= 1
        if self._schemes > 0:
            return
        if self._closing:  # contexts given up, each closing within _CONTEXT_CLOSE_S
            await asyncio.gather(*self._closing, return_exceptions=True)
        try:
            await asyncio.wait_for(super().close(), _CLOSE_S)
        except TimeoutError:
            # A renderer that never answers can keep a context from closing: the browser is
            # left to end with Playwright's driver when this process exits.
            logger.warning("the browser did not close within %d s", _CLOSE_S)
