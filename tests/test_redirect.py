"""nitpicker.middlewares.redirect: Scrapy's redirect middlewares, quiet without RefererMiddleware."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, Spider, signals
from scrapy.http import HtmlResponse, Response
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from nitpicker.addon import Addon
from nitpicker.middlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware

PAGE = "http://example.com/a"
SCRAPYS = "scrapy.downloadermiddlewares.redirect"


class _Idle(Spider):
    name = "idle"

    async def start(self) -> AsyncIterator[Any]:
        return
        yield


def test_the_add_on_replaces_scrapys_two() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    middlewares = settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    assert middlewares["nitpicker.middlewares.redirect.RedirectMiddleware"] == 600
    assert middlewares["nitpicker.middlewares.redirect.MetaRefreshMiddleware"] == 580
    assert middlewares[f"{SCRAPYS}.RedirectMiddleware"] is None
    assert middlewares[f"{SCRAPYS}.MetaRefreshMiddleware"] is None


@pytest.mark.parametrize(
    ("middleware", "response"),
    [
        (RedirectMiddleware, Response(PAGE, status=301, headers={"Location": "/b"})),
        (MetaRefreshMiddleware, HtmlResponse(
            PAGE, body=b'<meta http-equiv="refresh" content="0; url=/b">', encoding="utf-8")),
    ],
)
def test_redirects_as_scrapys_do_and_drop_the_referer(
        middleware: type[RedirectMiddleware], response: Response) -> None:
    mw = middleware.from_crawler(get_crawler(_Idle))
    request = Request(PAGE, headers={"Referer": "http://example.com/"})
    redirected = mw.process_response(request, response.replace(request=request))
    assert isinstance(redirected, Request)
    assert redirected.url == "http://example.com/b"
    assert redirected.meta["redirect_urls"] == [PAGE]
    assert "Referer" not in redirected.headers


@pytest.mark.parametrize("referer", [False, True])
@pytest_twisted.ensureDeferred
async def test_no_warning_at_engine_start(referer: bool, caplog: pytest.LogCaptureFixture
                                          ) -> None:
    """Without RefererMiddleware nothing is logged; with it (a user enabled it again) the
    middlewares use it."""
    crawler = get_crawler(_Idle, {
        "SPIDER_MIDDLEWARES": {} if referer else {
            "scrapy.spidermiddlewares.referer.RefererMiddleware": None},
        "DOWNLOADER_MIDDLEWARES": {
            f"{SCRAPYS}.MetaRefreshMiddleware": None, f"{SCRAPYS}.RedirectMiddleware": None,
            "nitpicker.middlewares.redirect.MetaRefreshMiddleware": 580,
            "nitpicker.middlewares.redirect.RedirectMiddleware": 600,
        },
    })
    found: list[Any] = []

    def closed(spider: Spider) -> None:
        found.extend(crawler.get_downloader_middleware(cls)
                     for cls in (RedirectMiddleware, MetaRefreshMiddleware))

    crawler.signals.connect(closed, signal=signals.spider_closed)
    with caplog.at_level(logging.WARNING, logger=SCRAPYS):
        await crawler.crawl()
    assert [r.getMessage() for r in caplog.records if r.name == SCRAPYS] == []
    assert len(found) == 2
    for mw in found:
        assert mw is not None and (mw._referer_spider_middleware is not None) == referer
