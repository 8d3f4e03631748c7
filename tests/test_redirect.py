"""nitpicker.middlewares.redirect: Scrapy's redirect middlewares, quiet without RefererMiddleware."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, Spider, signals
from scrapy.http import HtmlResponse, Response
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from nitpicker.addon import Addon
from nitpicker.crawl.meta import META_DEPTH, META_MODE
from nitpicker.items import FollowMode
from nitpicker.middlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware, hands_over
from nitpicker.policy.urls import ParsedUrl, parse_url

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


_FILLER = "<p>" + "words " * 800 + "</p>"  # past the 4,096 characters Scrapy scans


@pytest.mark.parametrize("body", [
    '<meta http-equiv="refresh" content="0; url=/b">',
    '<META HTTP-EQUIV="Refresh" CONTENT="2;URL=/b">',
    "<meta http-equiv=refresh content='0;url=/b'>",
    '<meta content="0; url=/b" http-equiv="REFRESH">',
    '<script>x = \'<meta http-equiv="refresh" content="0; url=/b">\'</script>',
    '<meta http-equiv="refresh" content="0">',
    '<meta name="description" content="a page about refresh rates">',
    '<title>Refreshments</title><p>plain</p>',
    '<p>no meta at all</p>',
    _FILLER + '<meta http-equiv="refresh" content="0; url=/b">',
])
def test_a_meta_refresh_is_followed_as_scrapy_decides(body: str) -> None:
    """The shortcut (no word "refresh" in the start of the page: passed on unscanned) gives
    what Scrapy's own middleware gives, for pages with and without a refresh."""
    from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as Scrapys

    request = Request(PAGE)
    response = HtmlResponse(PAGE, body=f"<html><head>{body}</head></html>".encode(),
                            encoding="utf-8", request=request)
    ours = MetaRefreshMiddleware.from_crawler(get_crawler(_Idle)).process_response(
        request, response)
    theirs = Scrapys.from_crawler(get_crawler(_Idle)).process_response(request, response)
    assert type(ours) is type(theirs)
    if isinstance(theirs, Request):
        assert isinstance(ours, Request) and ours.url == theirs.url == "http://example.com/b"
    else:
        assert ours is response


def test_a_page_without_the_word_is_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    import scrapy.downloadermiddlewares.redirect as scrapy_redirect

    def scanned(*args: object, **kwargs: object) -> object:
        raise AssertionError("Scrapy's scan ran")

    monkeypatch.setattr(scrapy_redirect, "get_meta_refresh", scanned)
    request = Request(PAGE)
    plain = HtmlResponse(PAGE, body=b"<html><title>A</title></html>", encoding="utf-8",
                         request=request)
    mw = MetaRefreshMiddleware.from_crawler(get_crawler(_Idle))
    assert mw.process_response(request, plain) is plain
    with pytest.raises(AssertionError, match="scan ran"):
        mw.process_response(request, plain.replace(
            body=b'<meta http-equiv="refresh" content="0; url=/b">'))


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


class _Session:
    """The parts of a crawl session the hand-over reads: scope ``http://site.test/``, and a
    frontier whose rows can (or cannot) be claimed."""

    def __init__(self, claimable: bool) -> None:
        self.claimable = claimable
        self.claimed: list[tuple[str, int]] = []
        self.archive = SimpleNamespace(frontier=self)

    def policy_url(self, url: str) -> ParsedUrl | None:
        return parse_url(url)

    def in_scope(self, url: ParsedUrl) -> bool:
        return url.url.startswith("http://site.test/")

    def claim(self, key: str, url: str, depth: int) -> bool:
        self.claimed.append((url, depth))
        return self.claimable


@pytest.mark.parametrize(
    ("mode", "chain", "target", "claimable", "handed_over", "claimed"),
    [
        # a full crawl follows into scope when it takes the target's row
        (FollowMode.FULL, [], "http://site.test/b", True, False, True),
        # another request has it (leased) or had it (done): the source is a redirect row only
        (FollowMode.FULL, [], "http://site.test/b", False, True, True),
        # a metadata-only check (an out-of-scope link) never follows into scope
        (FollowMode.METADATA, [], "http://site.test/b", True, True, False),
        # out of scope: followed within the request (checked, not crawled)
        (FollowMode.FULL, [], "http://other.test/b", False, False, False),
        (FollowMode.METADATA, [], "https://other.test/", False, False, False),
        # a loop is followed, for REDIRECT_MAX_TIMES to end it
        (FollowMode.FULL, ["http://site.test/b"], "https://site.test/b", False, False, False),
        (FollowMode.FULL, [], "http://site.test/a#top", False, False, False),
    ],
)
def test_hands_over_a_redirect_into_scope_unless_it_can_claim_the_target(
        mode: FollowMode, chain: list[str], target: str, claimable: bool, handed_over: bool,
        claimed: bool) -> None:
    session = _Session(claimable)
    request = Request("http://site.test/a", meta={
        META_MODE: mode, META_DEPTH: 2, "redirect_urls": chain})
    assert hands_over(session, request, target) is handed_over  # type: ignore[arg-type]
    assert session.claimed == ([(parse_url(target).url, 2)] if claimed else [])  # type: ignore[union-attr]
