"""What a request carries and what a response is: the meta keys and the HTML content-type test.

Every request meta key nitpicker sets or reads is named here, so that a component needing
one imports this small module and not the component that sets it. nitpicker's own keys are
``nitpicker_*`` (listed in ``docs/operations/scrapy.md``); the ``playwright*`` keys are scrapy-playwright's,
named here because the render wing, the spider, the throttle and the root-redirect
middleware all test them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.http import Headers

__all__ = [
    "DOWNLOAD_LATENCY",
    "HTML_TYPES",
    "META_BROWSER_RETRY",
    "META_BYTES_RECEIVED",
    "META_DEPTH",
    "META_DOCUMENT_LATENCY",
    "META_DOWNLOAD_TASK",
    "META_FRONTIER_ID",
    "META_HOST_PROBE",
    "META_MODE",
    "META_OUTAGE_PROBE",
    "META_PAGE",
    "META_PREDICTED",
    "META_PREFLIGHT",
    "META_REDIRECT_REASON",
    "META_REDIRECT_TO",
    "META_RENDER",
    "META_SITEMAP",
    "META_STOPPED",
    "PLAYWRIGHT",
    "PLAYWRIGHT_CONTEXT",
    "PLAYWRIGHT_CONTEXT_KWARGS",
    "PLAYWRIGHT_INCLUDE_PAGE",
    "PLAYWRIGHT_PAGE",
    "PLAYWRIGHT_PAGE_EVENT_HANDLERS",
    "PLAYWRIGHT_PAGE_GOTO_KWARGS",
    "PLAYWRIGHT_PAGE_INIT_CALLBACK",
    "PLAYWRIGHT_PAGE_METHODS",
    "is_browser_request",
    "is_html",
    "media_type",
    "response_time_ms",
]

# -- nitpicker's own keys --------------------------------------------------------------------

#: The leased frontier row a request fetches (set by the frontier scheduler).
META_FRONTIER_ID = "nitpicker_frontier_id"
#: Link depth from a root.
META_DEPTH = "nitpicker_depth"
#: The :class:`~nitpicker.policy.follow.FollowMode` of the request (full or metadata-only).
META_MODE = "nitpicker_mode"
#: A URL predicted ahead of a page's pager links (:mod:`nitpicker.middlewares.pagination`):
#: recorded only when it answers as a page.
META_PREDICTED = "nitpicker_predicted"
#: The HTTP request sent before a render, to learn whether the URL is HTML in scope.
META_PREFLIGHT = "nitpicker_preflight"
#: The browser request's :class:`~nitpicker.render.page.RenderResult`.
META_RENDER = "nitpicker_render"
#: Set on a request whose redirect was not followed but handed over to the frontier
#: (:mod:`nitpicker.middlewares.redirect`): the target URL as the redirect gave it.
META_REDIRECT_TO = "nitpicker_redirect_to"
#: With ``nitpicker_redirect_to``: the redirect's reason (its status, or ``"meta refresh"``).
META_REDIRECT_REASON = "nitpicker_redirect_reason"
#: The pooled browser page a browser request holds while it downloads.
META_PAGE = "nitpicker_page"
#: Set on the second try of a browser request after a browser failure.
META_BROWSER_RETRY = "nitpicker_browser_retry"
#: A sitemap document request (made by the sitemap seeder).
META_SITEMAP = "nitpicker_sitemap"
#: Bytes of a metadata-only download received so far (the body guard's count).
META_BYTES_RECEIVED = "nitpicker_bytes_received"
#: Set on a request not downloaded, or not to the end, because the crawl stopped
#: (:mod:`nitpicker.middlewares.stop`): the spider records nothing for it.
META_STOPPED = "nitpicker_stopped"
#: The task running a download, set by a download handler while it runs: a stopping crawl
#: cancels it with the download.
META_DOWNLOAD_TASK = "nitpicker_download_task"
#: Seconds the HTML preflight of a browser request took to its response headers (its
#: ``download_latency``): the page's response time once the browser has rendered it.
META_DOCUMENT_LATENCY = "nitpicker_document_latency"
#: A probe of the outage guard (:mod:`nitpicker.middlewares.outage`): a request to a URL that
#: answered before, asking whether the site (or the network) is reachable again.
META_OUTAGE_PROBE = "nitpicker_outage_probe"
#: The request sent as the probe of a host the host breaker gave up on
#: (:mod:`nitpicker.middlewares.host_breaker`): its answer brings the host back.
META_HOST_PROBE = "nitpicker_host_probe"
DOWNLOAD_LATENCY = "download_latency"
"""Scrapy's: seconds from sending a request to its response headers, set by the handler."""

# -- scrapy-playwright's keys ----------------------------------------------------------------

#: A request downloaded by the browser.
PLAYWRIGHT = "playwright"
PLAYWRIGHT_PAGE = "playwright_page"
PLAYWRIGHT_INCLUDE_PAGE = "playwright_include_page"
PLAYWRIGHT_CONTEXT = "playwright_context"
PLAYWRIGHT_CONTEXT_KWARGS = "playwright_context_kwargs"
PLAYWRIGHT_PAGE_GOTO_KWARGS = "playwright_page_goto_kwargs"
PLAYWRIGHT_PAGE_METHODS = "playwright_page_methods"
PLAYWRIGHT_PAGE_EVENT_HANDLERS = "playwright_page_event_handlers"
PLAYWRIGHT_PAGE_INIT_CALLBACK = "playwright_page_init_callback"


def is_browser_request(meta: Mapping[str, Any]) -> bool:
    """Whether a request with this meta is downloaded by the browser."""
    return bool(meta.get(PLAYWRIGHT))


# -- the HTML content-type test --------------------------------------------------------------

#: The media types nitpicker reads as HTML pages.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def media_type(headers: Headers) -> str | None:
    """The media type of a response's ``Content-Type`` (lower case, parameters dropped);
    ``None`` when the header is missing or empty."""
    raw = headers.get(b"Content-Type")
    if not raw:
        return None
    return raw.decode("latin-1").split(";", 1)[0].strip().lower() or None


def is_html(media: str | None) -> bool:
    """Whether a media type (from :func:`media_type`) is an HTML page."""
    return media in HTML_TYPES


def response_time_ms(meta: Mapping[str, Any]) -> int | None:
    """A page's response time in milliseconds: its HTML preflight's when the browser rendered
    it, else its own request's ``download_latency``; ``None`` when the request was not timed."""
    seconds = meta.get(META_DOCUMENT_LATENCY, meta.get(DOWNLOAD_LATENCY))
    return round(seconds * 1000) if isinstance(seconds, (int, float)) else None
