"""RenderSettings: whether a crawl renders, and how, parsed once from the settings and the crawl.

:meth:`RenderSettings.from_settings` is the one place that reads the render settings
(``NITPICKER_RENDER_PAGES``, ``NITPICKER_NETWORK_IDLE_MS``, ``NITPICKER_NETWORK_QUIET_MS``,
``NITPICKER_LAZY_WAIT_MS``, ``NITPICKER_NAVIGATION_TIMEOUT_MS``) with the crawl options they
depend on (``render``, ``image``, ``parallels``, ``user_agent``), finds Chromium, and refuses
rendering with ``NITPICKER_DENY_PRIVATE_NETWORKS``. The spider calls it to set
scrapy-playwright up (:meth:`RenderSettings.configure`), the render choice middleware to
render. Imports no Playwright: a crawl without rendering never loads it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.http import Headers

from nitpicker.crawl.config import ConfigError
from nitpicker.render.chromium import CHROMIUM_ARGS, require_chromium
from nitpicker.render.devtools import DESKTOP
from nitpicker.render.page import RenderOptions

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from nitpicker.crawl.config import CrawlConfig

__all__ = ["BROWSER_HANDLER", "RenderSettings", "context_name"]

#: The download handler for http and https when rendering (one for both schemes).
BROWSER_HANDLER = "nitpicker.render.browser.BrowserHandler"
_PLAYWRIGHT_LOGGER = "scrapy-playwright"
_DENY_PRIVATE_NETWORKS = "NITPICKER_DENY_PRIVATE_NETWORKS"
#: A language tag Chromium takes as a locale (``en``, ``de-DE``, ``zh-Hant-TW``).
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


def context_name(index: int, renewed: int = 0) -> str:
    """The browser context of the ``index``-th pooled page (its ``renewed``-th replacement:
    a context given up keeps its name until it is closed, so its successor needs another)."""
    return f"nitpicker-{index}" if not renewed else f"nitpicker-{index}.{renewed}"


@dataclass(frozen=True)
class RenderSettings:
    """How a crawl renders; ``enabled`` is false with ``--no-render`` (nothing else is set)."""

    enabled: bool
    #: the Chromium executable (found once, when rendering)
    executable: str | None = None
    #: pages rendering at once: ``NITPICKER_RENDER_PAGES``, capped by ``--parallels``
    pages: int = 1
    #: the browser context every page renders in (``PLAYWRIGHT_CONTEXTS``)
    context: dict[str, Any] = field(default_factory=dict)
    #: ``NITPICKER_NAVIGATION_TIMEOUT_MS``
    navigation_timeout_ms: int = 30000
    #: the rendering steps' bounds and switches
    options: RenderOptions = field(default_factory=RenderOptions)

    @classmethod
    def from_settings(cls, settings: BaseSettings, config: CrawlConfig) -> RenderSettings:
        """The crawl's render settings; ``ConfigError`` when rendering is asked for with the
        private-network guard on, ``BrowserMissingError`` when there is no Chromium."""
        if not config.render:
            return cls(enabled=False)
        if settings.getbool(_DENY_PRIVATE_NETWORKS):
            raise ConfigError(
                f"{_DENY_PRIVATE_NETWORKS} needs render=false: the browser resolves and "
                "fetches on its own, outside the guard"
            )
        return cls(
            enabled=True,
            executable=require_chromium(),
            pages=max(1, min(settings.getint("NITPICKER_RENDER_PAGES"), config.parallels)),
            context=_context_kwargs(settings, config),
            navigation_timeout_ms=settings.getint("NITPICKER_NAVIGATION_TIMEOUT_MS"),
            options=RenderOptions(
                network_idle_ms=settings.getint("NITPICKER_NETWORK_IDLE_MS"),
                network_quiet_ms=settings.getint("NITPICKER_NETWORK_QUIET_MS"),
                lazy_wait_ms=settings.getint("NITPICKER_LAZY_WAIT_MS"),
                images=config.image,
                user_agent=config.user_agent,
            ),
        )

    def configure(self, settings: BaseSettings) -> None:
        """Point Scrapy's http(s) download handlers at scrapy-playwright, Chromium launched
        once, one browser context per pooled page."""
        priority = "spider"
        settings.set("DOWNLOAD_HANDLERS", {"http": BROWSER_HANDLER, "https": BROWSER_HANDLER},
                     priority=priority)
        settings.set("PLAYWRIGHT_BROWSER_TYPE", "chromium", priority=priority)
        settings.set(
            "PLAYWRIGHT_LAUNCH_OPTIONS",
            {"executable_path": self.executable, "headless": True, "args": CHROMIUM_ARGS},
            priority=priority,
        )
        settings.set(
            "PLAYWRIGHT_CONTEXTS",
            {context_name(i): dict(self.context) for i in range(self.pages)},
            priority=priority,
        )
        settings.set("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", 1, priority=priority)
        # No PLAYWRIGHT_MAX_CONTEXTS: the pool has one context per page already, and a context
        # given up by the browser handler (a download past its bound) must not keep its
        # replacement waiting while it closes, or forever if it never does.
        settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", self.navigation_timeout_ms,
                     priority=priority)
        if _log_level(settings) > logging.DEBUG:
            # Below INFO, scrapy-playwright attaches two debug loggers to every page, each asking
            # the driver for a header of every request and response (Scrapy leaves the root
            # logger at NOTSET, so they are attached even when nothing is logged).
            logging.getLogger(_PLAYWRIGHT_LOGGER).setLevel(logging.INFO)


def _context_kwargs(settings: BaseSettings, config: CrawlConfig) -> dict[str, Any]:
    """The browser context every page renders in. It asks as the HTTP requests do: the same
    ``User-Agent`` and the ``Accept-Language`` of Scrapy's ``DEFAULT_REQUEST_HEADERS`` (``en``
    unless set), the page's ``navigator.language`` being its first language."""
    kwargs: dict[str, Any] = {"viewport": {"width": DESKTOP.width, "height": DESKTOP.height},
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
