"""The browser retry: a browser request that failed is tried once more, in a fresh render.

The browser crashed, or the page failed to render (it navigated away, its scripts stopped
answering): the spider's errback asks :func:`browser_retry` for a second try, marked
``nitpicker_browser_retry``. It goes through Scrapy's
:func:`~scrapy.downloadermiddlewares.retry.get_retry_request` (stats ``retry/count`` and
``retry/reason_count/<exception>``), one try on top of those ``RETRY_TIMES`` already allowed.
The second try renders into a new :class:`~nitpicker.render.page.RenderResult`: what the first
one had gathered (images of a preset, resources) is not carried over, nor is its page.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.retry import get_retry_request

from nitpicker.crawl.meta import (
    META_BROWSER_RETRY,
    META_RENDER,
    PLAYWRIGHT_PAGE,
    is_browser_request,
)
from nitpicker.render.page import RenderResult, page_meta

if TYPE_CHECKING:
    from scrapy import Request, Spider

__all__ = ["browser_retry"]

logger = logging.getLogger(__name__)


def browser_retry(request: Request, *, spider: Spider, reason: BaseException | None
                  ) -> Request | None:
    """The second try of a browser request that failed with ``reason``; ``None`` when
    ``request`` is not a browser request, or is already the second try."""
    meta = request.meta
    if not is_browser_request(meta) or meta.get(META_BROWSER_RETRY):
        return None
    logger.info("browser failure on %s, retrying once: %s", request.url, reason)
    retry = get_retry_request(
        request, spider=spider, reason=reason if isinstance(reason, Exception) else "unspecified",
        max_retry_times=meta.get("retry_times", 0) + 1)
    assert retry is not None  # one try more than the request has had is always allowed
    retry.meta[META_BROWSER_RETRY] = True
    retry.meta.pop(PLAYWRIGHT_PAGE, None)
    first = meta.get(META_RENDER)
    if isinstance(first, RenderResult):
        retry.meta.update(page_meta(RenderResult(first.options)))
    return retry
