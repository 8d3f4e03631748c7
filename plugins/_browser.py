"""One Chromium with a bounded set of reused pages, serving snapshots at their own URLs.

The axe plugin's engine. Playwright's asyncio API runs on one thread of its own; the host's
threads call :meth:`BrowserEngine.evaluate`, which loads a snapshot in a free page and runs a
function in it. How a snapshot is loaded:

- the page navigates to the snapshot's URL and the route handler answers that one request
  with the snapshot, served with ``Content-Security-Policy: script-src 'none'`` so none of
  its scripts (inline, external or event handlers) run; the ``init_script`` (axe) is injected
  through the DevTools protocol, which the policy does not govern;
- **offline** (the default), the browser fetches nothing but the page's own stylesheets: those
  among the URLs the crawl recorded as the page's resources on a host it crawled
  (:attr:`~nitpicker.analyze.plugin.Snapshot.resources`), when ``styles``, once per run, kept in
  a bounded cache (layout depends on them), without following a redirect. Every other request
  (scripts, images, fonts, frames, media, a stylesheet on another host or not recorded for
  the page, a second navigation such as a meta refresh) is aborted: a crawled page cannot make
  the analysis call a URL of its choosing;
- ``online``: stylesheets from any host, redirects followed (still nothing else);
- ``guard`` (the private-network guard): the browser, and Playwright's fetches for it, go
  through a :class:`~nitpicker.render.guard_proxy.GuardProxy`, which refuses loopback, private,
  link-local and metadata addresses; a stylesheet it refuses is not loaded.

A browser that died is launched again by the next call; a page that failed is closed and
replaced. Memory stays flat: at most ``pages`` pages, at most :data:`STYLESHEETS_KEPT`
stylesheets.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from nitpicker.render.chromium import CHROMIUM_ARGS
from nitpicker.render.guard_proxy import BLOCKED_HEADER, BROWSER_ARGS

if TYPE_CHECKING:
    from collections.abc import Collection, Coroutine

    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route

    from nitpicker.render.guard_proxy import GuardProxy

__all__ = ["STYLESHEETS_KEPT", "BrowserEngine", "BrowserEngineError"]

logger = logging.getLogger(__name__)

#: stylesheets kept for the pages that follow (least recently used go first)
STYLESHEETS_KEPT = 256

#: the snapshot's response headers: HTML in UTF-8 (the snapshot is text), and no scripts
_DOCUMENT_HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": "script-src 'none'",
}


class BrowserEngineError(RuntimeError):
    """A snapshot could not be loaded or evaluated (the browser died, or timed out)."""


@dataclass(slots=True)
class _Document:
    """The snapshot a page is loading: served once, to the page's first navigation (compared
    by order, not by URL, which Chromium may have re-encoded), and the URLs it may fetch
    offline (its own recorded resources, without fragments)."""

    html: str
    allowed: frozenset[str]
    served: bool = False


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


class BrowserEngine:
    """A Chromium on a thread of its own, with up to ``pages`` reused pages."""

    def __init__(self, *, chromium: str, init_script: str, pages: int, timeout: float,
                 styles: bool, online: bool = False, guard: GuardProxy | None = None) -> None:
        self.chromium = chromium
        self.init_script = init_script
        self.pages = pages
        self.timeout = timeout
        self.styles = styles
        #: stylesheets from any host, not only the page's own recorded ones
        self.online = online
        #: the private-network guard every request goes through (started with the browser)
        self.guard = guard
        #: requests aborted because the page may not make them (offline, or the guard)
        self.blocked = 0
        #: how many times a browser was launched (1 + restarts)
        self.launches = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # the loop thread's own state
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._idle: list[Page] = []
        self._created = 0
        self._freed: asyncio.Condition | None = None
        self._launching: asyncio.Lock | None = None
        self._documents: dict[Page, _Document] = {}
        self._stylesheets: collections.OrderedDict[str, tuple[int, str, bytes]] = (
            collections.OrderedDict())

    # -- the host's threads ---------------------------------------------------------------

    def start(self) -> None:
        """Start the loop thread and launch the browser (else the first call does)."""
        self._call(self._ensure_browser())

    def evaluate(self, url: str, html: str, function: str, arg: Any,
                 resources: Collection[str] = ()) -> Any:
        """Load ``html`` as the page at ``url`` in a free page, run ``function(arg)`` in it,
        and return its result. ``resources``: the URLs the page may fetch offline."""
        allowed = frozenset(_without_fragment(resource) for resource in resources)
        return self._call(self._evaluate(url, _Document(html, allowed), function, arg))

    def close(self) -> None:
        """Close the browser and stop the loop thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(30)
        except (PlaywrightError, TimeoutError) as error:
            logger.warning("browser did not close cleanly: %s", error)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
        if self.guard is not None:
            self.guard.close()

    def _call(self, work: Coroutine[Any, Any, Any]) -> Any:
        loop = self._running_loop()
        future = asyncio.run_coroutine_threadsafe(work, loop)
        try:
            return future.result(self.timeout * 2 + 30)
        except TimeoutError as error:
            future.cancel()
            raise BrowserEngineError(f"browser gave no answer in {self.timeout * 2 + 30:g}s") \
                from error
        except PlaywrightError as error:
            raise BrowserEngineError(str(error).splitlines()[0]) from error

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever,
                                                name="nitpicker-browser", daemon=True)
                self._thread.start()
            return self._loop

    # -- the loop thread ------------------------------------------------------------------

    async def _ensure_browser(self) -> BrowserContext:
        if self._launching is None:
            self._launching = asyncio.Lock()
            self._freed = asyncio.Condition()
        async with self._launching:
            if (self._browser is not None and self._context is not None
                    and self._browser.is_connected()):
                return self._context
            if self._browser is not None:
                logger.warning("browser died; launching it again")
                with contextlib.suppress(PlaywrightError):
                    await self._browser.close()
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            if self.guard is not None:  # never a browser without it: started here
                self._browser = await self._playwright.chromium.launch(
                    executable_path=self.chromium, args=[*CHROMIUM_ARGS, *BROWSER_ARGS],
                    proxy={"server": self.guard.start()})
            else:
                self._browser = await self._playwright.chromium.launch(
                    executable_path=self.chromium, args=CHROMIUM_ARGS)
            self.launches += 1
            context = await self._browser.new_context(service_workers="block")
            await context.add_init_script(script=self.init_script)
            await context.route("**/*", self._route)
            self._context = context
            self._idle = []
            self._created = 0
            async with self._freed:  # callers waiting for a page of the old browser
                self._freed.notify_all()
            return context

    async def _evaluate(self, url: str, document: _Document, function: str, arg: Any) -> Any:
        context = await self._ensure_browser()
        page = await self._take_page(context)
        reusable = False
        self._documents[page] = document
        try:
            if _without_fragment(page.url) == _without_fragment(url):
                # only the fragment would change: no request, the old document would stay
                await page.goto("about:blank")
            await page.goto(url, wait_until="load", timeout=self.timeout * 1000)
            result = await asyncio.wait_for(page.evaluate(function, arg), self.timeout)
            reusable = True
            return result
        finally:
            del self._documents[page]
            await self._give_back(context, page, reusable)

    async def _take_page(self, context: BrowserContext) -> Page:
        assert self._freed is not None
        async with self._freed:
            while not self._idle and self._created >= self.pages:
                await self._freed.wait()
            if self._idle:
                return self._idle.pop()
            self._created += 1
        try:
            return await context.new_page()
        except PlaywrightError:
            async with self._freed:
                self._created -= 1
                self._freed.notify()
            raise

    async def _give_back(self, context: BrowserContext, page: Page, reusable: bool) -> None:
        assert self._freed is not None
        if context is not self._context:  # the browser was replaced meanwhile
            return
        if not reusable or page.is_closed():
            with contextlib.suppress(PlaywrightError):
                await page.close()
        async with self._freed:
            if reusable and not page.is_closed():
                self._idle.append(page)
            else:
                self._created -= 1
            self._freed.notify()

    async def _route(self, route: Route) -> None:
        request = route.request
        try:
            frame = request.frame
            document = self._documents.get(frame.page)
            main = frame.parent_frame is None and request.is_navigation_request()
        except PlaywrightError:  # a service worker's request has no frame
            document, main = None, False
        if main and document is not None and not document.served:
            document.served = True
            await route.fulfill(status=200, headers=_DOCUMENT_HEADERS, body=document.html)
        elif document is not None and self._may_fetch(route, document):
            await self._stylesheet(route)
        else:
            if not main:
                self.blocked += 1
                logger.debug("not fetched (%s): %s", request.resource_type, request.url)
            await route.abort()

    def _may_fetch(self, route: Route, document: _Document) -> bool:
        """A stylesheet (or axe's own request for one) the page may load: its own, offline."""
        request = route.request
        if not self.styles or not (request.resource_type == "stylesheet" or (
                request.resource_type in ("xhr", "fetch") and request.url in self._stylesheets)):
            return False
        return self.online or _without_fragment(request.url) in document.allowed

    async def _stylesheet(self, route: Route) -> None:
        url = route.request.url
        kept = self._stylesheets.get(url)
        if kept is None:
            try:
                # offline, a redirect is not followed: it may lead anywhere
                response = await route.fetch(timeout=self.timeout * 500,
                                             max_redirects=20 if self.online else 0)
                refused = response.headers.get(BLOCKED_HEADER)
                if refused is not None or 300 <= response.status < 400:
                    self.blocked += 1
                    logger.debug("stylesheet %s not loaded: %s", url,
                                 refused or f"it redirects ({response.status})")
                    await route.abort()
                    return
                kept = (response.status, response.headers.get("content-type", "text/css"),
                        await response.body())
            except PlaywrightError as error:
                logger.debug("stylesheet %s not fetched: %s", url, error)
                await route.abort()
                return
            self._stylesheets[url] = kept
            while len(self._stylesheets) > STYLESHEETS_KEPT:
                self._stylesheets.popitem(last=False)
        else:
            self._stylesheets.move_to_end(url)
        status, content_type, body = kept
        await route.fulfill(status=status, headers={"content-type": content_type}, body=body)

    async def _shutdown(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError):
                await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()
        self._browser = self._context = self._playwright = None
        self._idle = []
        self._created = 0
