"""The Scrapy add-on that wires every nitpicker component.

``ADDONS = {"nitpicker.addon.Addon": 0}`` (set by the ``site`` spider itself, so the same
wiring applies to ``scrapy crawl site``, ``nitpicker crawl`` and Scrapyd jobs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.default_settings import set_defaults

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

_ADDON = "addon"

_OFF_UNLESS: dict[str, tuple[str, str]] = {
    "scrapy.extensions.remote_control.RemoteControl": ("EXTENSIONS", "REMOTE_CONTROL_ENABLED"),
    "scrapy.extensions.telnet.TelnetConsole": ("EXTENSIONS", "TELNETCONSOLE_ENABLED"),
    "scrapy.extensions.memdebug.MemoryDebugger": ("EXTENSIONS", "MEMDEBUG_ENABLED"),
    "scrapy.extensions.throttle.AutoThrottle": ("EXTENSIONS", "AUTOTHROTTLE_ENABLED"),
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware": (
        "DOWNLOADER_MIDDLEWARES", "COOKIES_ENABLED"),
    "scrapy.downloadermiddlewares.httpcache.HttpCacheMiddleware": (
        "DOWNLOADER_MIDDLEWARES", "HTTPCACHE_ENABLED"),
}
"""Scrapy components that do nothing unless their setting is on: (the component list, the
setting). Scrapy imports a component's module before the component refuses itself
(``NotConfigured``): the remote control imports aiohttp (~8 MB, 80 ms), the cookies
middleware tldextract, requests and urllib3 (~3 MB, 50 ms). Left out of the ``*_BASE`` list
while their setting is off, they are never imported (a ``None`` in ``EXTENSIONS`` would not
do: Scrapy loads every key of it to compare it with the base's)."""


class Addon:
    """Registers the frontier scheduler, policies, predictive pagination, body guard, graceful
    stop, outage guard, end-of-run retry pass and archive pipeline, and sets the defaults of the ``NITPICKER_*`` settings
    (:mod:`nitpicker.default_settings`)."""

    def update_settings(self, settings: BaseSettings) -> None:
        set_defaults(settings, priority=_ADDON)
        settings.set("SCHEDULER", "nitpicker.crawl.scheduler.FrontierScheduler", priority=_ADDON)
        settings["SPIDER_MIDDLEWARES"].update(
            {
                "nitpicker.middlewares.follow.FollowMiddleware": 500,
                # Output runs through spider middlewares in decreasing order: after follow.
                "nitpicker.middlewares.trapcap.TrapCapMiddleware": 450,
                # After the trap cap: a capped page's links are predicted no further.
                "nitpicker.middlewares.pagination.PaginationMiddleware": 400,
                # The spider yields items, never requests: these would only wrap every output
                # in one more asynchronous layer (depth, referer and URL length are nitpicker's
                # own; every HTTP status is recorded, so HttpError has nothing to filter).
                "scrapy.spidermiddlewares.httperror.HttpErrorMiddleware": None,
                "scrapy.spidermiddlewares.referer.RefererMiddleware": None,
                "scrapy.spidermiddlewares.urllength.UrlLengthMiddleware": None,
                "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
                "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": None,
            },
            priority=_ADDON,
        )
        settings["ITEM_PIPELINES"].update(
            {"nitpicker.pipelines.ArchivePipeline": 300}, priority=_ADDON
        )
        settings["EXTENSIONS"].update(
            {
                "nitpicker.middlewares.body.BodyGuard": 0,
                "nitpicker.crawl.sitemaps.SitemapSeeder": 0,
                "nitpicker.crawl.tls_probe.TlsProbe": 0,
                "nitpicker.crawl.soft404.Soft404Probes": 0,
                "nitpicker.crawl.throttle.AdaptiveConcurrency": 0,
                # NotConfigured when NITPICKER_AUTO_RETRY_CONCURRENCY is 0.
                "nitpicker.crawl.auto_retry.AutoRetry": 0,
            },
            priority=_ADDON,
        )
        # Below RetryMiddleware (550) and RedirectMiddleware (600): sees final responses only.
        settings["DOWNLOADER_MIDDLEWARES"].update(
            {
                "nitpicker.render.choice.RenderChoiceMiddleware": 540,
                # Just inside RedirectMiddleware (600): sees the final response of a chain.
                "nitpicker.middlewares.root_redirect.RootRedirectMiddleware": 595,
                # Scrapy's robots.txt middleware, fixed for concurrent first requests.
                "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                "nitpicker.middlewares.robots.RobotsTxtMiddleware": 100,
                # Before robots.txt: a refused host's robots.txt is never fetched.
                # NotConfigured unless NITPICKER_DENY_PRIVATE_NETWORKS (--deny-private-networks).
                "nitpicker.middlewares.ssrf.PrivateNetworkGuard": 75,
                # The root URLs' credentials and --header, on in-scope requests only (each
                # redirect hop decided again). NotConfigured when the crawl has neither.
                "nitpicker.middlewares.request_headers.ScopedHeadersMiddleware": 350,
                # Scope is nitpicker's (out-of-scope URLs are checked, not dropped).
                "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
                # Just above RetryMiddleware (550): a connection failure is held until a probe
                # tells a network outage (pause, fetch again) from a failing URL (retried).
                # NotConfigured when NITPICKER_OUTAGE_ENABLED is false.
                "nitpicker.middlewares.outage.OutageGuard": 560,
                # Between the outage guard and the retry middleware: it counts the failures
                # the guard lets go (no outage) and each retry's.
                "nitpicker.middlewares.host_breaker.HostBreaker": 555,
                # The last before the downloader: once the crawl stops, nothing starts.
                "nitpicker.middlewares.stop.GracefulStop": 950,
                # Scrapy's redirects, without the warning about the RefererMiddleware above.
                "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
                "nitpicker.middlewares.redirect.MetaRefreshMiddleware": 580,
                "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
                "nitpicker.middlewares.redirect.RedirectMiddleware": 600,
            },
            priority=_ADDON,
        )
        for name, value in {
            # Scrapy starts CONCURRENT_ITEMS tasks for every callback's output: one is enough.
            "CONCURRENT_ITEMS": 1,
            "REMOTE_CONTROL_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "HTTPERROR_ALLOW_ALL": True,
            "RETRY_HTTP_CODES": [502, 503, 504, 408, 429],
            "DOWNLOAD_TIMEOUT": 30,
            "DOWNLOAD_MAXSIZE": 32 * 1024 * 1024,
            "DOWNLOAD_WARNSIZE": 8 * 1024 * 1024,
            "DOWNLOAD_DELAY_JITTER": 0,
            "COOKIES_ENABLED": False,
            "REDIRECT_MAX_TIMES": 10,
            "DEPTH_STATS_VERBOSE": False,
            "LOG_LEVEL": "INFO",
        }.items():
            settings.set(name, value, priority=_ADDON)
        for components in ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES"):
            base = settings.getdict(f"{components}_BASE")
            off = {component for component, (where, enabled) in _OFF_UNLESS.items()
                   if where == components and component in base
                   and not settings.getbool(enabled)}
            if off:
                settings.set(f"{components}_BASE",
                             {k: v for k, v in base.items() if k not in off}, priority=_ADDON)
