"""Rendering a page in headless Chromium: the steps, the images per device, the resources.

The Playwright side of browser rendering, driven through scrapy-playwright: the steps run as
one ``PageMethod`` after navigation (DOM content loaded), each bounded by a timeout, and
fill a :class:`RenderResult` that the spider turns into the same ``PageItem`` as the HTTP
path (SPEC §3.6):

1. wait for network idle (bounded);
2. take the rendered HTML (the snapshot, and the input of the same streaming extraction);
3. scroll to the end so lazy content loads, wait for lazy images (bounded);
4. record the images at ``desktop-compact`` (1280 px), then re-lay the same page out at
   ``mobile-small`` (320 px at 2×, Chrome's device emulation — no second page load) and
   record them again; each preset on its own, so one that fails (a page that navigates
   away on resize) keeps the others' results.

Every response the page loads is recorded by :meth:`RenderResult.on_response`; a request
that got no response (refused, blocked by CORS, aborted) by :meth:`RenderResult.on_request_failed`
with status -1.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page, Request, Response

__all__ = [
    "DEVICE_PRESETS",
    "DevicePreset",
    "NetworkResource",
    "RenderOptions",
    "RenderResult",
    "find_chromium",
    "render_page",
]

logger = logging.getLogger(__name__)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@dataclass(frozen=True)
class DevicePreset:
    name: str
    width: int
    height: int
    scale: float


DEVICE_PRESETS = (
    DevicePreset("desktop-compact", 1280, 800, 1.0),
    DevicePreset("mobile-small", 320, 640, 2.0),
)


def find_chromium() -> str | None:
    """The Chromium executable: ``NITPICKER_CHROMIUM``, then ``chromium`` on the PATH, then
    Playwright's own download (``playwright install chromium``); ``None`` when there is none."""
    configured = os.environ.get("NITPICKER_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache/ms-playwright"))
    for candidate in sorted(cache.glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        if candidate.is_file():
            return str(candidate)
    return None


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


@dataclass
class RenderResult:
    """What rendering one page produced (filled in by the page method and the event handler)."""

    options: RenderOptions = field(default_factory=RenderOptions)
    html: str | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, NetworkResource] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def on_response(self, response: Response) -> None:
        """``page.on("response")`` handler: one row per URL the page loaded."""
        if response.request.resource_type == "document" and response.frame.parent_frame is None:
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
        url = request.url.split("#", 1)[0]
        if url in self.resources or url.startswith("data:"):
            return
        if request.resource_type == "document" and request.frame.parent_frame is None:
            return
        self.resources[url] = NetworkResource(
            url=url, status=-1, status_text=request.failure or "failed", content_type=None,
            content_length=None, compress=None, cdn=None, headers=[],
        )


_IMAGES_JS = """(viewportWidth) => Array.from(document.images).map((img) => ({
    src: img.src,
    currentSrc: img.currentSrc,
    alt: img.getAttribute("alt"),
    width: img.getBoundingClientRect().width,
    height: img.getBoundingClientRect().height,
    naturalWidth: img.naturalWidth,
    naturalHeight: img.naturalHeight,
    isLazy: img.loading === "lazy" || img.hasAttribute("data-src") || img.hasAttribute("data-srcset"),
    viewportWidth: viewportWidth,
    sourceCode: img.outerHTML,
}))"""

_SCROLL_JS = """async () => {
    const step = Math.max(window.innerHeight, 200);
    for (let y = 0, i = 0; y < document.documentElement.scrollHeight && i < 50; y += step, i++) {
        window.scrollTo(0, y);
        await new Promise((resolve) => setTimeout(resolve, 30));
    }
    window.scrollTo(0, document.documentElement.scrollHeight);
}"""

_LAZY_DONE_JS = """() => Array.from(document.images).every((img) =>
    (img.complete || img.loading !== "lazy") && (!img.dataset.src || (img.getAttribute("src") && img.complete)))"""


async def _bounded(awaitable: Any, timeout_ms: int) -> bool:
    """Await with a timeout; ``False`` (not an exception) when it ran out."""
    try:
        await asyncio.wait_for(awaitable, timeout_ms / 1000)
    except TimeoutError:
        return False
    return True


async def _collect_images(page: Page, preset: DevicePreset, options: RenderOptions) -> list[dict[str, Any]]:
    await page.evaluate(_SCROLL_JS)
    await page.wait_for_timeout(100)  # let IntersectionObserver callbacks run
    await _bounded(page.wait_for_function(_LAZY_DONE_JS, polling=50), options.lazy_wait_ms)
    images: list[dict[str, Any]] = await page.evaluate(_IMAGES_JS, preset.width)
    return images


async def _preset_images(page: Page, preset: DevicePreset, options: RenderOptions) -> list[dict[str, Any]]:
    """Images at one device preset: the rendered page, re-laid out at the preset's size.

    The device metrics are overridden through a DevTools session that stays open while the
    images are read: Chromium drops the override when the session closes.
    """
    width = page.viewport_size["width"] if page.viewport_size else None
    if width == preset.width and preset.scale == 1.0:
        return await _collect_images(page, preset, options)
    session = await page.context.new_cdp_session(page)
    try:
        await session.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": preset.width, "height": preset.height,
             "deviceScaleFactor": preset.scale, "mobile": preset.scale != 1.0},
        )
        return await _collect_images(page, preset, options)
    finally:
        await session.detach()


async def render_page(page: Page, result: RenderResult) -> RenderResult:
    """The rendering steps, run by scrapy-playwright after the DOM content loaded."""
    options = result.options
    await _bounded(page.wait_for_load_state("networkidle"), options.network_idle_ms)
    try:
        result.html = await asyncio.wait_for(page.content(), 10)
    except TimeoutError:
        result.errors.append("page unresponsive: its scripts did not yield within 10 s")
        await page.close()
        return result
    if not options.images:
        return result
    for preset in DEVICE_PRESETS:
        try:
            found = await asyncio.wait_for(_preset_images(page, preset, options), 30)
        except Exception as exc:  # noqa: BLE001 - each preset may fail on its own (SPEC §3.6)
            result.errors.append(f"images at {preset.name}: {exc}".splitlines()[0])
            logger.debug("images at %s failed on %s: %s", preset.name, page.url, exc)
            continue
        result.images.extend(found)
    return result
