"""Browser settings: scrapy-playwright driving one headless Chromium for the whole crawl.

Applied by the ``site`` spider when ``CrawlConfig.render`` is on. Chromium is found by
:func:`nitpicker.render.find_chromium` (Debian's ``chromium`` package, or Playwright's own
download). One browser, one context at 1280×800 for the desktop preset; pages are closed
after use; a browser that disconnects is relaunched by scrapy-playwright on the next page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.render import CHROMIUM_ARGS, find_chromium

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from nitpicker.config import CrawlConfig

__all__ = ["BrowserMissingError", "configure_browser", "require_chromium"]

_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


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


def configure_browser(settings: BaseSettings, config: CrawlConfig) -> None:
    """Point Scrapy's http(s) download handlers at scrapy-playwright, Chromium launched once."""
    executable = require_chromium()
    priority = "spider"
    settings.set("DOWNLOAD_HANDLERS", {"http": _HANDLER, "https": _HANDLER}, priority=priority)
    settings.set("PLAYWRIGHT_BROWSER_TYPE", "chromium", priority=priority)
    settings.set(
        "PLAYWRIGHT_LAUNCH_OPTIONS",
        {"executable_path": executable, "headless": True, "args": CHROMIUM_ARGS},
        priority=priority,
    )
    settings.set(
        "PLAYWRIGHT_CONTEXTS",
        {"default": {"viewport": {"width": 1280, "height": 800}, "user_agent": config.user_agent,
                     "ignore_https_errors": True}},
        priority=priority,
    )
    pages = settings.getint("NITPICKER_RENDER_PAGES", 4)
    settings.set("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", max(1, min(pages, config.parallels)),
                 priority=priority)
    settings.set("PLAYWRIGHT_MAX_CONTEXTS", 2, priority=priority)
    settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
                 settings.getint("NITPICKER_NAVIGATION_TIMEOUT_MS", 30000), priority=priority)
