"""Browser settings and the page pool: scrapy-playwright driving one headless Chromium.

Applied by the ``site`` spider when ``CrawlConfig.render`` is on. Chromium is found by
:func:`nitpicker.render.find_chromium` (Debian's ``chromium`` package, or Playwright's own
download). One browser for the whole crawl; a browser that disconnects is relaunched by
scrapy-playwright on the next page.

Pages are kept open and navigated from URL to URL (:class:`PagePool`, used by the render
middleware): a new page per URL costs a new renderer process. Each pooled page lives in a
browser context of its own (1280×800), so that each is the only page of its window: in
headless Chromium only a window's front tab renders frames, and a page in a background tab
gets about one rendering update a second — lazy images and IntersectionObserver callbacks
stall with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import weakref
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from playwright.async_api import Error as PlaywrightError
from scrapy.http import Headers
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from nitpicker.middlewares.stop import META_DOWNLOAD_TASK
from nitpicker.render import CHROMIUM_ARGS, find_chromium

if TYPE_CHECKING:
    from playwright.async_api import Page
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from nitpicker.config import CrawlConfig
    from nitpicker.render import PageSession, RenderResult

__all__ = [
    "BrowserHandler",
    "BrowserMissingError",
    "PagePool",
    "PageSlot",
    "configure_browser",
    "render_pages",
    "require_chromium",
]

logger = logging.getLogger(__name__)

_HANDLER = "nitpicker.browser.BrowserHandler"
_PLAYWRIGHT_LOGGER = "scrapy-playwright"
#: A page that takes longer to reset for the next URL (a DevTools command) is replaced: a
#: crashed renderer never answers.
_RESET_S = 3
#: Longest wait for the browser to close at the end of a crawl.
_CLOSE_S = 60
#: A language tag Chromium takes as a locale (``en``, ``de-DE``, ``zh-Hant-TW``).
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


class BrowserMissingError(Exception):
    """No Chromium to render with."""


def require_chromium() -> str:
    """The Chromium executable, or ``BrowserMissingError`` saying how to get one."""
    found = find_chromium()
    if found is None:
        raise BrowserMissingError(
            "Chromium not found: install it (apt-get install chromium, or "
            "playwright install chromium) or crawl without a browser with --no-render"
        )
    return found


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


def render_pages(settings: BaseSettings, config: CrawlConfig) -> int:
    """Pages rendering at once: ``NITPICKER_RENDER_PAGES``, capped by ``--parallels``."""
    return max(1, min(settings.getint("NITPICKER_RENDER_PAGES"), config.parallels))


def context_kwargs(settings: BaseSettings, config: CrawlConfig) -> dict[str, Any]:
    """The browser context every page renders in. It asks as the HTTP requests do: the same
    ``User-Agent`` and the ``Accept-Language`` of Scrapy's ``DEFAULT_REQUEST_HEADERS`` (``en``
    unless set), the page's ``navigator.language`` being its first language."""
    kwargs: dict[str, Any] = {"viewport": {"width": 1280, "height": 800},
                              "user_agent": config.user_agent, "ignore_https_errors": True}
    raw = Headers(settings.getdict("DEFAULT_REQUEST_HEADERS")).get("Accept-Language")
    if raw:
        language = raw.decode("latin-1")
        kwargs["extra_http_headers"] = {"Accept-Language": language}
        first = language.split(",", 1)[0].split(";", 1)[0].strip()
        if _LANGUAGE_TAG.fullmatch(first):
            kwargs["locale"] = first
    return kwargs


def _log_level(settings: BaseSettings) -> int:
    level = settings.get("LOG_LEVEL", "DEBUG")
    if isinstance(level, int):
        return level
    named = logging.getLevelName(str(level).upper())
    return named if isinstance(named, int) else logging.DEBUG


def configure_browser(settings: BaseSettings, config: CrawlConfig) -> None:
    """Point Scrapy's http(s) download handlers at scrapy-playwright, Chromium launched once,
    one browser context per pooled page."""
    executable = require_chromium()
    priority = "spider"
    settings.set("DOWNLOAD_HANDLERS", {"http": _HANDLER, "https": _HANDLER}, priority=priority)
    settings.set("PLAYWRIGHT_BROWSER_TYPE", "chromium", priority=priority)
    settings.set(
        "PLAYWRIGHT_LAUNCH_OPTIONS",
        {"executable_path": executable, "headless": True, "args": CHROMIUM_ARGS},
        priority=priority,
    )
    pages = render_pages(settings, config)
    settings.set(
        "PLAYWRIGHT_CONTEXTS",
        {PagePool.context_name(i): context_kwargs(settings, config) for i in range(pages)},
        priority=priority,
    )
    settings.set("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", 1, priority=priority)
    settings.set("PLAYWRIGHT_MAX_CONTEXTS", pages, priority=priority)
    settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
                 settings.getint("NITPICKER_NAVIGATION_TIMEOUT_MS"), priority=priority)
    if _log_level(settings) > logging.DEBUG:
        # Below INFO, scrapy-playwright attaches two debug loggers to every page, each asking
        # the driver for a header of every request and response (Scrapy leaves the root
        # logger at NOTSET, so they are attached even when nothing is logged).
        logging.getLogger(_PLAYWRIGHT_LOGGER).setLevel(logging.INFO)


@dataclass(eq=False)
class PageSlot:
    """One pooled page: its browser context, and the page once it exists."""

    context: str
    page: Page | None = None
    devtools: PageSession | None = None
    crashed: bool = False

    def on_crash(self, page: Page) -> None:
        """``page.on("crash")``: the renderer of a pooled page died."""
        if page is self.page:
            self.crashed = True


class PagePool:
    """Browser pages kept open, one per browser context, handed from request to request.

    :meth:`lease` waits for a free slot and fills the request's meta: ``playwright_page``
    (the slot's page; absent the first time or after a crash, and scrapy-playwright opens one
    in the slot's context), ``playwright_include_page`` (scrapy-playwright gives the page
    back instead of closing it), ``playwright_context`` and its kwargs. :meth:`give_back`
    takes the page back once the download is over: the result's event handlers are removed
    and the page is reset to 1280×800, its scripts still stopped (they are allowed again when
    its next URL starts: :meth:`nitpicker.render.RenderResult.prepare`); a page that failed,
    crashed or reported a rendering error is closed and replaced on the slot's next lease.
    """

    def __init__(self, size: int, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.slots = [PageSlot(self.context_name(i)) for i in range(size)]
        self._free: deque[PageSlot] = deque(self.slots)
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._returning: set[asyncio.Task[None]] = set()
        self.reused = 0
        self.replaced = 0

    @staticmethod
    def context_name(index: int) -> str:
        return f"nitpicker-{index}"

    async def lease(self, request: Request, result: RenderResult | None = None) -> PageSlot:
        """A free slot for ``request`` (waits for one), its meta filled in; a reused page's
        DevTools session goes to ``result``."""
        while not self._free:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
        slot = self._free.popleft()
        meta = request.meta
        meta["playwright_context"] = slot.context
        meta["playwright_context_kwargs"] = self.kwargs
        meta["playwright_include_page"] = True
        page = slot.page
        if page is not None and not page.is_closed() and not slot.crashed:
            meta["playwright_page"] = page
            if result is not None:
                result.devtools = slot.devtools
            self.reused += 1
            return slot
        meta.pop("playwright_page", None)
        slot.page = slot.devtools = None
        slot.crashed = False
        if page is not None:  # crashed while it waited: replaced by a new page
            self.replaced += 1
            await _close(page)
        return slot

    def give_back(self, slot: PageSlot, page: Page | None, result: RenderResult | None,
                  *, healthy: bool) -> None:
        """The slot's page after a download (``healthy`` when it succeeded)."""
        if page is not None and result is not None:
            result.detach(page)
        devtools = result.devtools if result is not None else None
        if result is not None:
            result.devtools = None
            healthy = healthy and not result.errors
        task = asyncio.ensure_future(self._recycle(slot, page, devtools, healthy=healthy))
        self._returning.add(task)
        task.add_done_callback(self._returning.discard)

    async def _recycle(self, slot: PageSlot, page: Page | None,
                       devtools: PageSession | None, *, healthy: bool) -> None:
        try:
            crashed = slot.crashed and page is slot.page
            if page is not None and healthy and not page.is_closed() and not crashed:
                try:
                    if devtools is not None:
                        await asyncio.wait_for(devtools.reset(), _RESET_S)
                except (PlaywrightError, TimeoutError) as exc:
                    logger.debug("could not reset page %s: %s", page.url, exc)
                else:
                    if page is not slot.page:
                        page.on("crash", slot.on_crash)
                        slot.crashed = False
                    slot.page, slot.devtools = page, devtools
                    return
            slot.page = slot.devtools = None
            slot.crashed = False
            if page is not None:
                self.replaced += 1
                await _close(page)
        finally:
            self._free.append(slot)
            while self._waiting:
                waiter = self._waiting.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    break

    async def close(self) -> None:
        """Close every pooled page (at the end of the crawl)."""
        if self._returning:
            await asyncio.gather(*self._returning, return_exceptions=True)
        for slot in self.slots:
            page, slot.page, slot.devtools = slot.page, None, None
            if page is not None:
                await _close(page)


async def _close(page: Page) -> None:
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await asyncio.wait_for(page.close(), 10)
