"""The DevTools session nitpicker keeps open on a rendered page, and the device presets.

Through the session a page is laid out at each :data:`DEVICE_PRESETS` entry (Chrome's device
emulation, no reload), its scripts are stopped once it is rendered and allowed again for the
next URL, and the crawl's scoped request headers (root credentials, ``--header``) are added to
its requests through the DevTools ``Fetch`` domain (:meth:`PageSession.add_headers`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker.policy.urls import parse_url

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page

    from nitpicker.policy.request_headers import RequestHeaders
    from nitpicker.policy.urls import ParsedUrl

__all__ = ["DESKTOP", "DEVICE_PRESETS", "DevicePreset", "PageSession"]

logger = logging.getLogger(__name__)

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
#: The layout every page is loaded at (the browser context's viewport).
DESKTOP = DEVICE_PRESETS[0]


def _host_port(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port is not None else shown



class PageSession:
    """The DevTools session nitpicker keeps open on a page for the page's life.

    Through it: the device presets are emulated (Chromium drops a session's overrides when
    the session detaches — the page would go back to a 1280×713 desktop layout — so it stays
    attached while a preset's images are read); the page's scripts are stopped once it is
    rendered. A page reused for the next URL is reset through it. The browser's HTTP cache
    stays on, as in a visitor's browser (scrapy-playwright's request interception, which
    turned it off, is removed: it cost a round trip to the crawler for every request).
    """

    def __init__(self, session: CDPSession) -> None:
        self.session = session
        self.preset = DESKTOP
        self.scripts_stopped = False
        self._headers: RequestHeaders | None = None
        self._page_url: ParsedUrl | None = None
        self._patterns: list[dict[str, str]] | None = None
        self._continuing: set[asyncio.Task[None]] = set()

    @classmethod
    async def attach(cls, page: Page) -> PageSession:
        # No Network domain here: its events would be sent to this session too (a second copy
        # of every request's events through the driver).
        return cls(await page.context.new_cdp_session(page))

    async def emulate(self, preset: DevicePreset) -> None:
        """Lay the page out at ``preset`` (no reload)."""
        await self.session.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": preset.width, "height": preset.height,
             "deviceScaleFactor": preset.scale, "mobile": preset.scale != 1.0},
        )
        self.preset = preset

    async def stop_scripts(self) -> None:
        """No more of the page's scripts run (timers included); DevTools evaluation still works."""
        await self.session.send("Emulation.setScriptExecutionDisabled", {"value": True})
        self.scripts_stopped = True

    async def reset(self) -> None:
        """Back to the context's layout, for the next URL: desktop-compact (1280×800, set
        explicitly). The scripts stay stopped: the rendered document is still there while the
        page waits in the pool, and a timer of its own would run (a loop, a request) if they
        were allowed again; :meth:`allow_scripts` does it when the next URL starts."""
        if self.preset != DESKTOP:
            await self.emulate(DESKTOP)

    async def add_headers(self, headers: RequestHeaders, page_url: ParsedUrl | None) -> None:
        """From now on, the page's requests to the hosts of the crawl's roots carry the
        crawl's headers (:meth:`RequestHeaders.for_page` for a document,
        :meth:`RequestHeaders.for_resource` for a sub-resource of ``page_url``).

        Through the DevTools ``Fetch`` domain, paused at the request stage for those hosts
        only: a request elsewhere is never paused nor changed. Every redirect hop is paused
        (when on such a host) and decided on its own URL; Chromium does not carry headers set
        this way to the next hop, so a hop that leaves for another host goes without them.
        (Playwright's ``route.continue_(headers=…)`` would: it applies them to every hop.)
        """
        self._headers, self._page_url = headers, page_url
        patterns = [
            {"urlPattern": f"{scheme}://{_host_port(host, port)}/*", "requestStage": "Request"}
            for host, port in headers.origins()
            for scheme in ("http", "https")
        ]
        if patterns == self._patterns:
            return
        if self._patterns is None:
            self.session.on("Fetch.requestPaused", self._on_paused)
        await self.session.send("Fetch.enable", {"patterns": patterns})
        self._patterns = patterns

    def _on_paused(self, event: dict[str, Any]) -> None:
        task = asyncio.ensure_future(self._continue(event))
        self._continuing.add(task)
        task.add_done_callback(self._continuing.discard)

    async def _continue(self, event: dict[str, Any]) -> None:
        """Continue a paused request, with the crawl's headers when they go with it (and
        without them otherwise). Its headers are never logged."""
        from playwright.async_api import Error as PlaywrightError

        params: dict[str, Any] = {"requestId": event["requestId"]}
        policy = self._headers
        if policy is not None:
            request = event["request"]
            url = parse_url(request["url"])
            if event.get("resourceType") == "Document":
                found = policy.for_page(url)
            else:
                found = policy.for_resource(url, self._page_url)
            sent: dict[str, str] = request.get("headers") or {}
            names = policy.names
            if found or any(name.lower() in names for name in sent):
                params["headers"] = [
                    *({"name": name, "value": value} for name, value in sent.items()
                      if name.lower() not in names),
                    *({"name": name, "value": value} for name, value in found),
                ]
        try:
            await self.session.send("Fetch.continueRequest", params)
        except PlaywrightError as exc:  # the request went away (the page navigated, closed)
            logger.debug("could not continue a paused request: %s", str(exc).splitlines()[0])

    async def allow_scripts(self) -> None:
        """Scripts run again (the page is about to navigate to its next URL)."""
        if self.scripts_stopped:
            await self.session.send("Emulation.setScriptExecutionDisabled", {"value": False})
            self.scripts_stopped = False
