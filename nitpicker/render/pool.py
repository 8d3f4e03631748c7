"""PagePool: browser pages kept open and navigated from URL to URL.

Used by the render choice middleware (:mod:`nitpicker.render.choice`): a new page per URL
costs a new renderer process. Each pooled page lives in a browser context of its own
(1280×800), so that each is the only page of its window: in headless Chromium only a window's
front tab renders frames, and a page in a background tab gets about one rendering update a
second — lazy images and IntersectionObserver callbacks stall with it. Imported only when the
crawl renders.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from nitpicker.crawl.meta import (
    PLAYWRIGHT_CONTEXT,
    PLAYWRIGHT_CONTEXT_KWARGS,
    PLAYWRIGHT_INCLUDE_PAGE,
    PLAYWRIGHT_PAGE,
)
from nitpicker.render.settings import context_name

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page
    from scrapy import Request

    from nitpicker.render.devtools import PageSession
    from nitpicker.render.page import RenderResult

__all__ = ["PagePool", "PageSlot"]

logger = logging.getLogger(__name__)

#: A page that takes longer to reset for the next URL (a DevTools command) is replaced: a
#: crashed renderer never answers.
_RESET_S = 3


@dataclass(eq=False)
class PageSlot:
    """One pooled page: its browser context, and the page once it exists."""

    index: int
    page: Page | None = None
    devtools: PageSession | None = None
    crashed: bool = False
    #: how many times the slot's browser context was given up for a new one
    renewed: int = 0

    @property
    def context(self) -> str:
        """The name of the slot's browser context (``playwright_context``)."""
        return context_name(self.index, self.renewed)

    def renew(self) -> None:
        """The next lease opens a new browser context (the browser handler gave this one up:
        a download past its bound, see :class:`nitpicker.render.browser.BrowserHandler`)."""
        self.renewed += 1
        self.page = self.devtools = None

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
    its next URL starts: :meth:`nitpicker.render.page.RenderResult.prepare`); a page that failed,
    crashed or reported a rendering error is closed and replaced on the slot's next lease.
    """

    def __init__(self, size: int, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.slots = [PageSlot(i) for i in range(size)]
        self._free: deque[PageSlot] = deque(self.slots)
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._returning: set[asyncio.Task[None]] = set()
        self.reused = 0
        self.replaced = 0

    async def lease(self, request: Request, result: RenderResult | None = None) -> PageSlot:
        """A free slot for ``request`` (waits for one), its meta filled in; a reused page's
        DevTools session goes to ``result``."""
        while not self._free:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
        slot = self._free.popleft()
        meta = request.meta
        meta[PLAYWRIGHT_CONTEXT] = slot.context
        meta[PLAYWRIGHT_CONTEXT_KWARGS] = self.kwargs
        meta[PLAYWRIGHT_INCLUDE_PAGE] = True
        page = slot.page
        if page is not None and not page.is_closed() and not slot.crashed:
            meta[PLAYWRIGHT_PAGE] = page
            if result is not None:
                result.devtools = slot.devtools
            self.reused += 1
            return slot
        meta.pop(PLAYWRIGHT_PAGE, None)
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
                if not await _close(page):
                    # Still open, it keeps its context's one page: the slot opens a new context
                    # (scrapy-playwright would wait for the page to close before opening another).
                    slot.renew()
                    await _close(page.context)
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


#: Longest wait for a page (or its browser context) to close.
_CLOSE_S = 10


async def _close(closable: Page | BrowserContext) -> bool:
    """Close a page or a browser context: ``False`` when it did not close in time."""
    try:
        await asyncio.wait_for(closable.close(), _CLOSE_S)
    except TimeoutError:
        logger.warning("a browser page or context did not close within %d s", _CLOSE_S)
        return False
    except PlaywrightError:
        pass  # closed already (its browser went away)
    return True
