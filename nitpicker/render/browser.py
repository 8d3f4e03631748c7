"""BrowserHandler: scrapy-playwright's download handler, one Chromium for the whole crawl.

Set as the http and https download handler by
:meth:`nitpicker.render.settings.RenderSettings.configure` when the crawl renders (so this
module, and Playwright with it, is imported only then). Chromium is found by
:func:`nitpicker.render.chromium.find_chromium` (Debian's ``chromium`` package, or
Playwright's own download); a browser that disconnects is relaunched by scrapy-playwright on
the next page.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING, ClassVar

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from nitpicker.meta import META_DOWNLOAD_TASK

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["BrowserHandler"]

logger = logging.getLogger(__name__)

#: Longest wait for the browser to close at the end of a crawl.
_CLOSE_S = 60


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

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BrowserHandler:
        handler = cls._shared.get(crawler)
        if handler is None:
            handler = cls._shared[crawler] = cls(crawler)
        handler._schemes += 1
        return handler

    async def download_request(self, request: Request) -> Response:
        """scrapy-playwright's download; a stopping crawl can cancel it (its page is then given
        back to the pool, see :mod:`nitpicker.middlewares.stop`)."""
        request.meta[META_DOWNLOAD_TASK] = asyncio.current_task()
        try:
            response: Response = await super().download_request(request)
        finally:
            request.meta.pop(META_DOWNLOAD_TASK, None)
        return response

    async def close(self) -> None:
        self._schemes -= 1
        if self._schemes > 0:
            return
        try:
            await asyncio.wait_for(super().close(), _CLOSE_S)
        except TimeoutError:
            # A renderer that never answers can keep a context from closing: the browser is
            # left to end with Playwright's driver when this process exits.
            logger.warning("the browser did not close within %d s", _CLOSE_S)
