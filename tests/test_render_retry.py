"""The browser retry: once more through Scrapy's get_retry_request, in a fresh render."""

from __future__ import annotations

from pathlib import Path

from scrapy import Request
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.meta import (
    META_BROWSER_RETRY,
    META_MODE,
    META_RENDER,
    PLAYWRIGHT,
    PLAYWRIGHT_PAGE,
    PLAYWRIGHT_PAGE_EVENT_HANDLERS,
    PLAYWRIGHT_PAGE_INIT_CALLBACK,
    PLAYWRIGHT_PAGE_METHODS,
)
from nitpicker.items import FollowMode, PageItem
from nitpicker.render.page import PageUnresponsiveError, RenderOptions, RenderResult, page_meta
from nitpicker.spiders.site import SiteSpider

URL = "http://127.0.0.1:1/page"


def _spider(tmp_path: Path) -> SiteSpider:
    crawler = get_crawler(SiteSpider, {"RETRY_TIMES": 2})
    config = CrawlConfig(roots=("http://127.0.0.1:1/",), output=str(tmp_path / "x.nitpicker"),
                         render=False)
    spider = SiteSpider(config=config)
    spider._set_crawler(crawler)
    return spider


def _failed(request: Request, error: Exception) -> Failure:
    failure = Failure(error)
    failure.request = request  # type: ignore[attr-defined]
    return failure


def test_a_failed_render_is_tried_once_more_in_a_fresh_result(tmp_path: Path) -> None:
    spider = _spider(tmp_path)
    first = RenderResult(RenderOptions(lazy_wait_ms=10, images=False))
    # what the first try gathered before it failed (a preset's images, the snapshot)
    first.html = "<title>first</title>"
    first.images.append({"src": URL + ".png"})
    first.errors.append("images at mobile-small: navigated away")
    request = Request(URL, meta={META_MODE: FollowMode.FULL, PLAYWRIGHT: True,
                                 PLAYWRIGHT_PAGE: object(), "retry_times": 2, **page_meta(first)})

    retry = spider.errback(_failed(request, PageUnresponsiveError("page unresponsive")))

    assert isinstance(retry, Request)
    assert (retry.url, retry.dont_filter, retry.meta["retry_times"]) == (URL, True, 3)
    assert retry.meta[META_BROWSER_RETRY] is True
    assert PLAYWRIGHT_PAGE not in retry.meta
    second = retry.meta[META_RENDER]
    assert second is not first and second.options == first.options
    assert (second.html, second.images, second.errors) == (None, [], [])
    # the steps, handlers and init callback render into the new result
    assert retry.meta[PLAYWRIGHT_PAGE_METHODS][0].args == (second,)
    assert retry.meta[PLAYWRIGHT_PAGE_INIT_CALLBACK] == second.prepare
    assert retry.meta[PLAYWRIGHT_PAGE_EVENT_HANDLERS]["response"] == second.on_response
    assert first.images == [{"src": URL + ".png"}]  # the first try's result is left alone
    stats = spider.crawler.stats.get_stats()
    assert stats["retry/count"] == 1
    assert stats["retry/reason_count/nitpicker.render.page.PageUnresponsiveError"] == 1

    item = spider.errback(_failed(retry, PageUnresponsiveError("page unresponsive again")))

    assert isinstance(item, PageItem)
    assert (item.url, item.status) == (URL, -1)
    assert item.error == "browser: PageUnresponsiveError: page unresponsive again"
    assert spider.crawler.stats.get_value("retry/count") == 1


def test_an_http_failure_is_not_retried_by_the_browser_retry(tmp_path: Path) -> None:
    spider = _spider(tmp_path)
    request = Request(URL, meta={META_MODE: FollowMode.FULL})
    item = spider.errback(_failed(request, ConnectionRefusedError("refused")))
    assert isinstance(item, PageItem)
    assert (item.status, item.error) == (-1, "ConnectionRefusedError: refused")
    assert spider.crawler.stats.get_value("retry/count") is None
