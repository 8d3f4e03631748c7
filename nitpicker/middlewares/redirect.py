"""RedirectMiddleware and MetaRefreshMiddleware: Scrapy's, with hand-over and without the
Referer warning.

**Hand-over.** Scrapy follows every redirect within the request that met it, so a URL is
fetched again by each chain that ends at it, and recorded by it: an out-of-scope link (checked
metadata-only) that redirects to a page the crawl fetched in full overwrote that page's row
(``is_target = 0``, its anchors gone), and three URLs redirecting to one page rendered it three
times. Here a redirect to an in-scope URL is followed only by a full-crawl request that can
*claim* the target's frontier row (no other request has it:
:meth:`~nitpicker.archive.frontier_store.FrontierStore.claim`). Otherwise — the target is
being fetched, was recorded, or the request is metadata-only — the redirect is *handed
over*: the 3xx answer goes to the spider with ``nitpicker_redirect_to`` set, the source is
recorded as a redirect row pointing at the target, and the target is a frontier URL like any
link, fetched once, by its own row. A target in the chain already (a loop) is followed, for
``REDIRECT_MAX_TIMES`` to end it; out-of-scope targets are followed as before (they are
checked, not crawled). Requests not leased from the frontier (robots.txt, sitemaps) are
followed as Scrapy does. Stat ``nitpicker/redirect/handed_over``.

**The warning.** The add-on disables Scrapy's ``RefererMiddleware`` on purpose: the spider
yields items, never requests (the scheduler builds them from the frontier), so it would only
wrap every callback's output in one more asynchronous layer. Scrapy 2.19's redirect
middlewares look it up when the engine starts and log a WARNING when it is missing, even from
a subclass that overrides ``handle_referer()`` as that warning advises; so every ``scrapy crawl
site`` printed two warnings the user did not cause. Here the lookup is the same, without the
warning: a redirected request still loses its Referer header, and a ``RefererMiddleware`` a
user enables again still sets it.

Replace Scrapy's two in the add-on (same priorities, same settings: ``REDIRECT_ENABLED``,
``METAREFRESH_ENABLED``, ``REDIRECT_MAX_TIMES`` and friends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import BaseRedirectMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as ScrapyMetaRefresh
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware as ScrapyRedirect
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.spidermiddlewares.referer import RefererMiddleware

from nitpicker.crawl.meta import (
    META_DEPTH,
    META_FRONTIER_ID,
    META_MODE,
    META_REDIRECT_REASON,
    META_REDIRECT_TO,
)
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from nitpicker.crawl.session import CrawlSession

__all__ = ["MetaRefreshMiddleware", "RedirectMiddleware", "hands_over"]


def hands_over(session: CrawlSession, request: Request, target_url: str) -> bool:
    """Whether ``request``'s redirect to ``target_url`` is handed over to the frontier rather
    than followed (see the module's docstring); claims the target's row when it is followed
    into scope. Override the middlewares' :meth:`hands_over` to change the rule."""
    target = session.policy_url(target_url)
    if target is None or not session.in_scope(target):
        return False
    meta = request.meta
    chain = [*meta.get("redirect_urls", ()), request.url]
    for hop in chain:
        parsed = session.policy_url(hop)
        if parsed is not None and parsed.key == target.key:
            return False  # a loop: followed until REDIRECT_MAX_TIMES ends it
    if meta.get(META_MODE) != FollowMode.FULL:
        return True
    return not session.archive.frontier.claim(target.key, target.url, meta.get(META_DEPTH, 0))


class _HandOver(BaseRedirectMiddleware):
    """What both redirect middlewares add to Scrapy's: the hand-over and the quiet start."""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        self._session: CrawlSession | None = None
        self._looked_up = False

    def _engine_started(self) -> None:
        self._referer_spider_middleware = self.crawler.get_spider_middleware(RefererMiddleware)

    @property
    def session(self) -> CrawlSession | None:
        """The crawl session, or ``None`` for a spider that is not nitpicker's."""
        if not self._looked_up:
            self._looked_up = True
            try:
                self._session = crawl_session(self.crawler)
            except NotConfigured:
                self._session = None
        return self._session

    def hands_over(self, request: Request, redirected: Request) -> bool:
        session = self.session
        if session is None or META_FRONTIER_ID not in request.meta:
            return False
        return hands_over(session, request, redirected.url)

    def _handed_over(self, request: Request, response: Response,
                     result: Request | Response) -> Request | Response:
        if not isinstance(result, Request) or result is request:
            return result
        if not self.hands_over(request, result):
            return result
        request.meta[META_REDIRECT_TO] = result.url
        request.meta[META_REDIRECT_REASON] = result.meta["redirect_reasons"][-1]
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("nitpicker/redirect/handed_over")
        return response


class RedirectMiddleware(_HandOver, ScrapyRedirect):
    """Scrapy's 3xx redirect middleware, with the hand-over; quiet when no
    ``RefererMiddleware`` runs."""

    def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        return self._handed_over(request, response, super().process_response(request, response))


class MetaRefreshMiddleware(_HandOver, ScrapyMetaRefresh):
    """Scrapy's ``<meta http-equiv=refresh>`` middleware, with the hand-over; quiet when no
    ``RefererMiddleware`` runs.

    A page whose first :data:`REFRESH_SCAN` characters do not hold the word ``refresh`` (in
    any case) is passed on at once: Scrapy would scan them twice (the base URL, then the meta
    tags) to find what w3lib finds only in a tag whose attributes hold that word. Most pages
    have none; the two scans were ~2 % of the crawl's reactor thread."""

    def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        if isinstance(response, HtmlResponse) and not may_refresh(response.text):
            return response
        return self._handed_over(request, response, super().process_response(request, response))


REFRESH_SCAN = 4096
"""Characters of a page Scrapy scans for a meta refresh (``scrapy.utils.response``)."""


def may_refresh(text: str) -> bool:
    """Whether the start of ``text`` may declare a meta refresh: it holds the word, in the
    sense of w3lib's own test (``"refresh" in attrs.lower()``; a case-insensitive regular
    expression would also match other letters that fold to it, and is several times
    slower)."""
    return "refresh" in text[:REFRESH_SCAN].lower()
