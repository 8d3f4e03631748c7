"""RenderChoiceMiddleware (nitpicker/render/choice.py): which requests the browser renders,
on a real crawl session (``tests/components.py``) and real requests and responses; no browser."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response

from nitpicker.crawl.meta import (
    META_DEPTH,
    META_FRONTIER_ID,
    META_MODE,
    META_PREDICTED,
    META_PREFLIGHT,
    META_RENDER,
    response_time_ms,
)
from nitpicker.items import FollowMode
from nitpicker.render.choice import RenderChoiceMiddleware
from nitpicker.render.page import RenderResult
from tests.components import unit_crawler

if TYPE_CHECKING:
    from pathlib import Path

DOCS = "http://site.test/docs/"


def middleware(tmp_path: Path, **options: Any) -> RenderChoiceMiddleware:
    return RenderChoiceMiddleware.from_crawler(
        unit_crawler(tmp_path, (DOCS,), render=True, **options))


def preflight(url: str) -> Request:
    return Request(url, meta={META_FRONTIER_ID: 7, META_DEPTH: 1, META_MODE: FollowMode.FULL,
                              META_PREFLIGHT: True, "redirect_urls": [f"{url}?from"],
                              "redirect_reasons": [301]})


def test_off_with_no_render(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        RenderChoiceMiddleware.from_crawler(unit_crawler(tmp_path, render=False))


def test_the_render_settings(tmp_path: Path) -> None:
    choice = middleware(tmp_path)
    options = choice.render.options
    assert (options.network_idle_ms, options.network_quiet_ms, options.lazy_wait_ms,
            choice.render.navigation_timeout_ms) == (5000, 100, 3000, 30000)


@pytest.mark.parametrize(
    ("meta", "marked"),
    [
        ({META_MODE: FollowMode.FULL}, True),
        ({META_MODE: FollowMode.METADATA}, False),  # metadata-only: never the browser
        ({}, False),  # robots.txt, sitemaps
    ],
)
@pytest_twisted.ensureDeferred
async def test_full_crawl_requests_go_first_as_a_preflight(
    tmp_path: Path, meta: dict[str, Any], marked: bool
) -> None:
    request = Request(f"{DOCS}a", meta=dict(meta))
    await middleware(tmp_path).process_request(request)
    assert bool(request.meta.get(META_PREFLIGHT)) is marked


def test_an_html_preflight_in_scope_becomes_a_browser_request(tmp_path: Path) -> None:
    choice = middleware(tmp_path, image=False)
    request = preflight(f"{DOCS}a")
    response = HtmlResponse(f"{DOCS}a", body=b"", request=request,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    browser = choice.process_response(request, response)
    assert isinstance(browser, Request) and browser is not request
    meta = browser.meta
    assert meta["playwright"] is True and META_PREFLIGHT not in meta
    assert (meta[META_FRONTIER_ID], meta[META_DEPTH]) == (7, 1)
    assert meta["redirect_urls"] == [f"{DOCS}a?from"] and meta["redirect_reasons"] == [301]
    result = meta[META_RENDER]
    assert isinstance(result, RenderResult) and result.options.images is False
    assert meta["playwright_page_goto_kwargs"]["timeout"] == 30000
    assert choice.stats.get_value("nitpicker/render/rendered") == 1


def test_a_rendered_page_is_timed_by_its_preflight(tmp_path: Path) -> None:
    """The browser request's own download_latency is the whole render: the page's response
    time is the preflight's, the main document's answer over HTTP."""
    choice = middleware(tmp_path)
    request = preflight(f"{DOCS}a")
    request.meta["download_latency"] = 0.0424
    response = HtmlResponse(f"{DOCS}a", body=b"", request=request,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    browser = choice.process_response(request, response)
    assert isinstance(browser, Request)
    browser.meta["download_latency"] = 2.5  # what scrapy-playwright sets: navigation + render
    assert response_time_ms(browser.meta) == 42


@pytest.mark.parametrize(("meta", "expected"), [
    ({"download_latency": 0.1236}, 124),
    ({}, None),  # not downloaded (a fetch error, a stand-in)
    ({"nitpicker_document_latency": None, "download_latency": 3.0}, None),  # preflight untimed
])
def test_response_time_ms(meta: dict[str, Any], expected: int | None) -> None:
    assert response_time_ms(meta) == expected


@pytest.mark.parametrize(
    ("url", "content_type", "stat"),
    [
        (f"{DOCS}a.pdf", b"application/pdf", "nitpicker/render/not_html"),
        ("http://site.test/blog/", b"text/html", None),  # out of scope: recorded over HTTP
    ],
)
def test_other_preflights_are_recorded_over_http(
    tmp_path: Path, url: str, content_type: bytes, stat: str | None
) -> None:
    choice = middleware(tmp_path)
    request = preflight(url)
    response = Response(url, headers={"Content-Type": content_type}, request=request)
    assert choice.process_response(request, response) is response
    assert choice.stats.get_value("nitpicker/render/rendered") is None
    if stat is not None:
        assert choice.stats.get_value(stat) == 1


@pytest.mark.parametrize(
    ("status", "redirected", "rendered"),
    [
        (200, False, True),
        (404, False, False),  # a predicted page past a pager's end: a miss, not rendered
        (500, False, False),
        (200, True, False),  # redirected: a miss too
    ],
)
def test_a_predicted_page_is_rendered_only_if_it_answered(
    tmp_path: Path, status: int, redirected: bool, rendered: bool
) -> None:
    choice = middleware(tmp_path)
    meta: dict[str, Any] = {META_FRONTIER_ID: 7, META_DEPTH: 1, META_MODE: FollowMode.FULL,
                            META_PREFLIGHT: True, META_PREDICTED: True}
    if redirected:
        meta.update({"redirect_urls": [f"{DOCS}p/9"], "redirect_reasons": [302]})
    request = Request(f"{DOCS}p/10", meta=meta)
    response = HtmlResponse(f"{DOCS}p/10", status=status, body=b"", request=request,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    result = choice.process_response(request, response)
    assert (result is not response) is rendered
