"""Rendering a page in headless Chromium: the steps, the images per device, the resources.

The Playwright side of browser rendering, driven through scrapy-playwright: the steps run as
one ``PageMethod`` after navigation (DOM content loaded), each bounded by a timeout, and
fill a :class:`RenderResult` that the spider turns into the same ``PageItem`` as the HTTP
path (SPEC §3.6):

1. wait for the ``load`` event, then for the network to be quiet: no request of the page's
   own in flight for ``network_quiet_ms`` (bounded by ``network_idle_ms``);
2. take the rendered HTML (the snapshot, and the input of the same streaming extraction);
3. scroll to the end so lazy content loads (one rendering update at each viewport-high step, so
   an IntersectionObserver sees every element), wait for lazy images (bounded), and record the
   images at ``desktop-compact`` (1280 px), all in one call into the page;
4. re-lay the same page out at ``mobile-small`` (320 px at 2×, Chrome's device emulation —
   no second page load), wait for lazy images again (the ones loaded at 1280 px stay loaded;
   the page is scrolled again only when some are still missing) and record the images again;
   each preset on its own, so one that fails (a page that navigates away on resize) keeps
   the others' results;
5. stop the page's scripts, so nothing it runs later can hang the snapshot scrapy-playwright
   takes after the steps, or keep a pooled page busy between URLs.

A page whose scripts stop answering (a step gets no answer within 10 s; a preset's scroll and
images, within its lazy-image wait plus 15 s) fails the render with
:class:`PageUnresponsiveError`. Every response the page loads is recorded by
:meth:`RenderResult.on_response`, every console message and uncaught exception of its document
by :class:`nitpicker.render.console.ConsoleLog`; a request that got no response (refused, blocked by CORS,
aborted) by :meth:`RenderResult.on_request_failed` with status -1. Only the page's own
requests count: its navigation's, and those made once its document is committed (a page
reused from URL to URL may still finish requests of the previous one, whose timers and
``pagehide`` handlers can run until the new document replaces it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nitpicker.crawl.meta import (
    META_RENDER,
    PLAYWRIGHT_PAGE_EVENT_HANDLERS,
    PLAYWRIGHT_PAGE_INIT_CALLBACK,
    PLAYWRIGHT_PAGE_METHODS,
)
from nitpicker.policy.urls import parse_url
from nitpicker.render.console import ConsoleLog
from nitpicker.render.devtools import DESKTOP, DEVICE_PRESETS, DevicePreset, PageSession

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import Frame, Page, Request, Response

    from nitpicker.policy.request_headers import RequestHeaders

__all__ = [
    "DESKTOP",
    "DEVICE_PRESETS",
    "DevicePreset",
    "NetworkResource",
    "PageSession",
    "PageUnresponsiveError",
    "RenderOptions",
    "RenderResult",
    "download_bound_s",
    "page_meta",
    "render_page",
]

logger = logging.getLogger(__name__)

#: How long one step may wait for the page's scripts to answer before the page is given up.
RESPONSIVE_S = 10


class PageUnresponsiveError(Exception):
    """The page's scripts did not yield: a rendering step got no answer in time."""


@dataclass
class NetworkResource:
    """One response the page loaded."""

    url: str
    status: int
    status_text: str
    content_type: str | None
    content_length: int | None
    compress: str | None
    cdn: str | None
    headers: list[tuple[str, str]]


@dataclass(frozen=True)
class RenderOptions:
    network_idle_ms: int = 5000
    network_quiet_ms: int = 100
    lazy_wait_ms: int = 3000
    images: bool = True
    user_agent: str = ""


_CDN_HEADERS = (
    ("cf-ray", "cloudflare"),
    ("x-amz-cf-id", "cloudfront"),
    ("x-fastly-request-id", "fastly"),
    ("x-akamai-transformed", "akamai"),
    ("x-azure-ref", "azure"),
    ("x-vercel-id", "vercel"),
    ("x-nf-request-id", "netlify"),
)


def detect_cdn(headers: dict[str, str]) -> str | None:
    """The CDN a response came through, when its headers say so."""
    for name, cdn in _CDN_HEADERS:
        if name in headers:
            return cdn
    server = headers.get("server", "").lower()
    for cdn in ("cloudflare", "akamai", "fastly", "cloudfront"):
        if cdn in server:
            return cdn
    if "varnish" in headers.get("via", "").lower() or "x-served-by" in headers:
        return "fastly"
    return None


def _is_main_document(request: Request) -> bool:
    if request.resource_type != "document" or request.service_worker is not None:
        return False
    return request.frame.parent_frame is None


@dataclass
class RenderResult:
    """What rendering one page produced (filled in by the page method and the event handlers)."""

    options: RenderOptions = field(default_factory=RenderOptions)
    html: str | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, NetworkResource] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: the console messages and uncaught exceptions of the page's own document
    console: ConsoleLog = field(default_factory=ConsoleLog, repr=False, compare=False)
    #: the URL the page navigated to by itself once loaded (a script's ``location.href = …``,
    #: a ``<meta http-equiv=refresh>``): the page is then a redirect source, not a page
    navigated_to: str | None = None
    #: the page's DevTools session (set before navigation by :meth:`prepare`, or by a page pool
    #: reusing the page)
    devtools: PageSession | None = field(default=None, repr=False, compare=False)
    #: the crawl's scoped headers (root credentials, ``--header``), added by the page's DevTools
    #: session to its requests; ``None`` when the crawl has none
    request_headers: RequestHeaders | None = field(default=None, repr=False, compare=False)
    _navigated: bool = field(default=False, repr=False, compare=False)
    _committed: bool = field(default=False, repr=False, compare=False)
    _own: set[Request] = field(default_factory=set, repr=False, compare=False)
    _in_flight: set[Request] = field(default_factory=set, repr=False, compare=False)
    _changed: float = field(default_factory=time.monotonic, repr=False, compare=False)

    def event_handlers(self) -> dict[str, Callable[[Any], None]]:
        """The page event handlers to attach before navigation (``playwright_page_event_handlers``)."""
        return {
            "request": self.on_request,
            "requestfinished": self.on_request_finished,
            "requestfailed": self.on_request_failed,
            "response": self.on_response,
            "framenavigated": self.on_frame_navigated,
            "console": self.console.on_console,
            "pageerror": self.console.on_page_error,
        }

    async def prepare(self, page: Page, request: object) -> None:
        """scrapy-playwright's page init callback (``playwright_page_init_callback``), run
        before navigation: remove scrapy-playwright's request interception (a round trip to
        the crawler for every request the page makes) and open the page's DevTools session."""
        await page.unroute("**")
        if self.devtools is None:
            self.devtools = await PageSession.attach(page)
        else:
            await _answered(self.devtools.allow_scripts(), "allow scripts")
        if self.request_headers is not None:
            url = getattr(request, "url", None)
            await _answered(
                self.devtools.add_headers(self.request_headers,
                                          parse_url(url) if isinstance(url, str) else None),
                "request headers")

    def detach(self, page: Page) -> None:
        """Remove this result's handlers from ``page`` (before the page renders another URL)."""
        for event, handler in self.event_handlers().items():
            page.remove_listener(event, handler)
        self._in_flight.clear()

    def on_frame_navigated(self, frame: Frame) -> None:
        """``page.on("framenavigated")``: the page's document is committed once its main frame
        navigated after the navigation's request."""
        if self._navigated and frame.parent_frame is None:
            self._committed = True
            self.console.listening = True

    def on_request(self, request: Request) -> None:
        """``page.on("request")``: the page's own requests are its navigation's, then those
        made once its document is committed. Until then a pooled page still shows the URL
        before: its timers and ``pagehide``/``unload`` handlers (an analytics beacon) are not
        this page's."""
        if _is_main_document(request):
            if self._committed and request.redirected_from is None:
                # A new navigation of the loaded document (an HTTP redirect of the first one
                # has ``redirected_from``): the page sends the browser on by itself.
                self.navigated_to = request.url
            self._navigated = True
        elif not self._committed:
            return
        self._own.add(request)
        self._in_flight.add(request)
        self._changed = time.monotonic()

    def on_request_finished(self, request: Request) -> None:
        """``page.on("requestfinished")``."""
        if request in self._in_flight:
            self._in_flight.discard(request)
            self._changed = time.monotonic()

    def on_response(self, response: Response) -> None:
        """``page.on("response")`` handler: one row per URL the page loaded."""
        request = response.request
        if request not in self._own or _is_main_document(request):
            return  # the page itself (and its redirect hops) is the page row
        headers = response.headers
        length = headers.get("content-length")
        encoding = headers.get("content-encoding")
        self.resources[response.url.split("#", 1)[0]] = NetworkResource(
            url=response.url.split("#", 1)[0],
            status=response.status,
            status_text=response.status_text,
            content_type=(headers.get("content-type") or "").split(";", 1)[0].strip() or None,
            content_length=int(length) if length and length.isdigit() else None,
            compress=encoding or None,
            cdn=detect_cdn(headers),
            headers=list(headers.items()),
        )

    def on_request_failed(self, request: Request) -> None:
        """``page.on("requestfailed")`` handler: a sub-resource that got no response."""
        if request not in self._own:
            return
        if request in self._in_flight:
            self._in_flight.discard(request)
            self._changed = time.monotonic()
        url = request.url.split("#", 1)[0]
        if url in self.resources or url.startswith("data:") or _is_main_document(request):
            return
        self.resources[url] = NetworkResource(
            url=url, status=-1, status_text=request.failure or "failed", content_type=None,
            content_length=None, compress=None, cdn=None, headers=[],
        )

    async def network_quiet(self, quiet_ms: int) -> None:
        """Until none of the page's requests has been in flight for ``quiet_ms``."""
        window = quiet_ms / 1000
        while True:
            idle_for = time.monotonic() - self._changed
            if not self._in_flight and idle_for >= window:
                return
            await asyncio.sleep(0.02 if self._in_flight else window - idle_for)


# One device preset, in one call into the page (each call is a round trip through the driver,
# the browser and the page): scroll to the end when asked to ("always", or "missing": only while
# lazy images are still missing), one rendering update at each scroll position (IntersectionObserver
# entries are taken in it), one more at the end, then wait for the lazy images (bounded,
# checked every 50 ms) and read every image.
_PRESET_JS = """async ({viewportWidth, scroll, lazyWaitMs}) => {
    const frame = () => new Promise((resolve) => {
        const fallback = setTimeout(resolve, 100);
        requestAnimationFrame(() => setTimeout(() => { clearTimeout(fallback); resolve(); }, 0));
    });
    const lazyDone = () => Array.from(document.images).every((img) =>
        (img.complete || img.loading !== "lazy")
        && (!img.dataset.src || (img.getAttribute("src") && img.complete)));
    if (scroll === "always" || (scroll === "missing" && !lazyDone())) {
        const step = Math.max(window.innerHeight, 200);
        for (let y = 0, i = 0; y < document.documentElement.scrollHeight && i < 50; y += step, i++) {
            window.scrollTo({top: y, behavior: "instant"});
            await frame();
        }
        window.scrollTo({top: document.documentElement.scrollHeight, behavior: "instant"});
    }
    await frame();
    const deadline = performance.now() + lazyWaitMs;
    while (!lazyDone() && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return Array.from(document.images).map((img) => {
        const box = img.getBoundingClientRect();
        return {
            src: img.src,
            currentSrc: img.currentSrc,
            alt: img.getAttribute("alt"),
            width: box.width,
            height: box.height,
            naturalWidth: img.naturalWidth,
            naturalHeight: img.naturalHeight,
            isLazy: img.loading === "lazy" || img.hasAttribute("data-src")
                || img.hasAttribute("data-srcset"),
            viewportWidth: viewportWidth,
            sourceCode: img.outerHTML,
        };
    });
}"""
#: The most a preset's call may take on top of its lazy-image wait: 50 scroll positions of
#: at most 100 ms each, and the responsiveness bound.
_PRESET_EXTRA_S = 5 + RESPONSIVE_S


#: What :func:`download_bound_s` allows for the steps not bounded one by one: a new browser
#: context and page, the DevTools session, the request interception removed, scrapy-playwright's
#: snapshot and response details.
_SETUP_S = 30


def download_bound_s(navigation_timeout_ms: int, options: RenderOptions) -> float:
    """The longest one browser download may take, end to end: the navigation and
    scrapy-playwright's load-state wait after the steps (each bounded by the navigation
    timeout), the network wait, the steps that need the page's answer, each preset's scroll and
    images, and :data:`_SETUP_S` (171 s with the default settings)."""
    presets = len(DEVICE_PRESETS) if options.images else 0
    per_preset = RESPONSIVE_S + options.lazy_wait_ms / 1000 + _PRESET_EXTRA_S
    steps = options.network_idle_ms / 1000 + 2 * RESPONSIVE_S + presets * per_preset
    return 2 * navigation_timeout_ms / 1000 + steps + _SETUP_S


async def _answered(awaitable: Awaitable[Any], what: str, within_s: float = RESPONSIVE_S) -> Any:
    """A step that needs the page's main thread: :class:`PageUnresponsiveError` when the page
    does not answer within ``within_s`` (``RESPONSIVE_S`` by default)."""
    try:
        return await asyncio.wait_for(awaitable, within_s)
    except TimeoutError:
        raise PageUnresponsiveError(
            f"page unresponsive: its scripts did not yield within {within_s:g} s ({what})"
        ) from None


async def _bounded(awaitable: Awaitable[Any], timeout_ms: int) -> bool:
    """Await with a timeout; ``False`` (not an exception) when it ran out."""
    try:
        await asyncio.wait_for(awaitable, timeout_ms / 1000)
    except TimeoutError:
        return False
    return True


async def _settle_network(page: Page, result: RenderResult) -> None:
    await page.wait_for_load_state("load")
    await result.network_quiet(result.options.network_quiet_ms)


async def _preset_images(
    page: Page, preset: DevicePreset, devtools: PageSession, options: RenderOptions
) -> list[dict[str, Any]]:
    """Images at one device preset: the rendered page, laid out at the preset's size.

    The first preset is the page as loaded: scroll to the end so lazy content loads. The
    others re-lay the page out through the page's DevTools session, kept attached while the
    images are read; the page is scrolled again only if lazy images are still missing.
    """
    scroll = "always"
    if preset != devtools.preset:
        await _answered(devtools.emulate(preset), "emulate")
        scroll = "missing"
    arg = {"viewportWidth": preset.width, "scroll": scroll, "lazyWaitMs": options.lazy_wait_ms}
    images: list[dict[str, Any]] = await _answered(
        page.evaluate(_PRESET_JS, arg), "scroll and read images",
        options.lazy_wait_ms / 1000 + _PRESET_EXTRA_S)
    return images


async def render_page(page: Page, result: RenderResult) -> RenderResult:
    """The rendering steps, run by scrapy-playwright after the DOM content loaded."""
    options = result.options
    await _bounded(_settle_network(page, result), options.network_idle_ms)
    if result.devtools is None:
        result.devtools = await _answered(PageSession.attach(page), "DevTools session")
    devtools = result.devtools
    from playwright.async_api import Error as PlaywrightError

    try:
        result.html = await _answered(page.content(), "snapshot")
    except PlaywrightError:
        if result.navigated_to is None:
            raise
        # The page is navigating away by itself: it is recorded as a redirect, nothing more
        # is read from it.
    if options.images and result.navigated_to is None:
        for preset in DEVICE_PRESETS:
            try:
                found = await _preset_images(page, preset, devtools, options)
            except PageUnresponsiveError:
                raise
            except Exception as exc:  # noqa: BLE001 - each preset may fail on its own (SPEC §3.6)
                result.errors.append(f"images at {preset.name}: {exc}".splitlines()[0])
                logger.debug("images at %s failed on %s: %s", preset.name, page.url, exc)
                continue
            result.images.extend(found)
    await _answered(devtools.stop_scripts(), "stop scripts")
    return result


def page_meta(result: RenderResult) -> dict[str, Any]:
    """The meta keys that make scrapy-playwright render a page into ``result``: the result, the
    steps (:func:`render_page`, after the DOM content loaded), the event handlers and the init
    callback (:meth:`RenderResult.prepare`)."""
    # scrapy-playwright is imported only once a page renders (a crawl with --no-render never
    # loads it, nor Playwright).
    from scrapy_playwright.page import PageMethod

    return {
        META_RENDER: result,
        PLAYWRIGHT_PAGE_METHODS: [PageMethod(render_page, result)],
        PLAYWRIGHT_PAGE_EVENT_HANDLERS: result.event_handlers(),
        PLAYWRIGHT_PAGE_INIT_CALLBACK: result.prepare,
    }
