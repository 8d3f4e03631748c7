"""The bound on a whole browser download: a wedged browser fails the page, never the crawl."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.utils.test import get_crawler
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
from twisted.internet.defer import Deferred

from nitpicker.crawl.meta import META_PAGE, PLAYWRIGHT, PLAYWRIGHT_CONTEXT
from nitpicker.render import browser
from nitpicker.render import pool as pool_module
from nitpicker.render.browser import BrowserHandler, BrowserTimeoutError
from nitpicker.render.page import RenderOptions, RenderResult, download_bound_s, page_meta
from nitpicker.render.pool import PagePool


class _Context:
    """A browser context that records being closed."""

    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class _Wrapper:
    def __init__(self, context: _Context) -> None:
        self.context = context


def _browser_request(url: str) -> Request:
    return Request(url, meta={PLAYWRIGHT: True, **page_meta(RenderResult(RenderOptions()))})


def test_the_bound_covers_every_step_of_a_download() -> None:
    assert download_bound_s(30000, RenderOptions()) == 171
    no_images = RenderOptions(images=False, network_idle_ms=1000)
    assert download_bound_s(1000, no_images) == 2 + 1 + 20 + 30


@pytest_twisted.ensureDeferred
async def test_a_wedged_download_fails_within_its_bound_and_its_context_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ScrapyPlaywrightDownloadHandler, "download_request", _never_returns)
    monkeypatch.setattr(browser, "download_bound_s", lambda *_: 0.3)
    # (in an asyncio task: the test itself runs as a Deferred)
    await Deferred.fromFuture(asyncio.ensure_future(_wedged_download()))


async def _never_returns(self: Any, request: Request) -> None:
    await asyncio.Event().wait()  # never set: the browser never answers (a new_page, wedged)


async def _wedged_download() -> None:
    handler = BrowserHandler(get_crawler())
    pool = PagePool(1, {})
    request = _browser_request("http://127.0.0.1:1/hang")
    slot = request.meta[META_PAGE] = await pool.lease(request)
    old = _Context()
    handler.context_wrappers[request.meta[PLAYWRIGHT_CONTEXT]] = _Wrapper(old)  # type: ignore[assignment]

    started = time.monotonic()
    with pytest.raises(BrowserTimeoutError, match="did not finish the page within 0.3 s"):
        # (without the bound the download never returns: this wait fails the test instead)
        await asyncio.wait_for(handler.download_request(request), 10)
    assert time.monotonic() - started < 5

    pool.give_back(slot, None, None, healthy=False)
    await asyncio.sleep(0)
    await asyncio.gather(*handler._closing, *pool._returning)
    assert old.closed
    assert "nitpicker-0" not in handler.context_wrappers
    following = _browser_request("http://127.0.0.1:1/static")
    assert await pool.lease(following) is slot
    assert following.meta[PLAYWRIGHT_CONTEXT] == "nitpicker-0.1"


class _StuckPage:
    """A page whose close never returns (its renderer does not answer)."""

    def __init__(self) -> None:
        self.context = _Context()

    def is_closed(self) -> bool:
        return False

    async def close(self) -> None:
        await asyncio.Event().wait()


@pytest_twisted.ensureDeferred
async def test_a_page_that_does_not_close_leaves_its_slot_a_new_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool_module, "_CLOSE_S", 0.1)
    await Deferred.fromFuture(asyncio.ensure_future(_stuck_page()))


async def _stuck_page() -> None:
    pool = PagePool(1, {})
    request = _browser_request("http://127.0.0.1:1/hang")
    slot = await pool.lease(request)
    page = _StuckPage()
    pool.give_back(slot, page, None, healthy=False)  # type: ignore[arg-type]
    await asyncio.gather(*pool._returning)
    assert page.context.closed
    following = _browser_request("http://127.0.0.1:1/static")
    assert await pool.lease(following) is slot
    assert following.meta[PLAYWRIGHT_CONTEXT] == "nitpicker-0.1"
