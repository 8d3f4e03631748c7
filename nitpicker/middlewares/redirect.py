"""RedirectMiddleware and MetaRefreshMiddleware: Scrapy's, without the Referer warning.

The add-on disables Scrapy's ``RefererMiddleware`` on purpose: the spider yields items, never
requests (the scheduler builds them from the frontier), so it would only wrap every callback's
output in one more asynchronous layer. Scrapy 2.19's redirect middlewares look it up when the
engine starts and log a WARNING when it is missing, even from a subclass that overrides
``handle_referer()`` as that warning advises; so every ``scrapy crawl site`` printed two
warnings the user did not cause. Here the lookup is the same, without the warning: a
redirected request still loses its Referer header, and a ``RefererMiddleware`` a user enables
again still sets it. Replace Scrapy's two in the add-on (same priorities, same settings:
``REDIRECT_ENABLED``, ``METAREFRESH_ENABLED``, ``REDIRECT_MAX_TIMES`` and friends).
"""

from __future__ import annotations

from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as ScrapyMetaRefresh
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware as ScrapyRedirect
from scrapy.spidermiddlewares.referer import RefererMiddleware

__all__ = ["MetaRefreshMiddleware", "RedirectMiddleware"]


class RedirectMiddleware(ScrapyRedirect):
    """Scrapy's 3xx redirect middleware; quiet when no ``RefererMiddleware`` runs."""

    def _engine_started(self) -> None:
        self._referer_spider_middleware = self.crawler.get_spider_middleware(RefererMiddleware)


class MetaRefreshMiddleware(ScrapyMetaRefresh):
    """Scrapy's ``<meta http-equiv=refresh>`` middleware; quiet when no ``RefererMiddleware``
    runs."""

    def _engine_started(self) -> None:
        self._referer_spider_middleware = self.crawler.get_spider_middleware(RefererMiddleware)
