"""FollowMiddleware (nitpicker/middlewares/follow.py): the follow mode of each link on a page,
decided by the crawl session's policy, on a real session (``tests/components.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from nitpicker.items import FollowMode, LinkRecord, PageItem
from nitpicker.middlewares.follow import FollowMiddleware
from nitpicker.policy.urls import parse_url
from tests.components import ROOT, unit_crawler

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

FULL, METADATA, STUB, EXCLUDED = (FollowMode.FULL, FollowMode.METADATA, FollowMode.STUB,
                                  FollowMode.EXCLUDED)


def link(url: str) -> LinkRecord:
    parsed = parse_url(url)
    return LinkRecord(url, parsed.key if parsed else url, "", "", False, FULL)


def decided(middleware: FollowMiddleware, *urls: str) -> list[tuple[FollowMode, bool]]:
    item = PageItem(url=ROOT, frontier_id=1, depth=0, is_external=False, is_target=True,
                    links=[link(url) for url in urls])
    middleware.decide(item)
    return [(record.mode, record.is_external) for record in item.links]


@pytest.mark.parametrize(
    ("options", "url", "expected"),
    [
        ({}, "http://site.test/about", (FULL, False)),
        ({}, "https://site.test/about", (FULL, False)),  # http and https are one scope
        ({}, "https://elsewhere.test/", (METADATA, True)),
        ({"fetch_external": False}, "https://elsewhere.test/", (STUB, True)),
        ({}, "mailto:someone@site.test", (STUB, True)),
        ({"excludes": ("/admin/**",)}, "http://site.test/admin/users", (EXCLUDED, False)),
        ({"exclude_urls": ("https://elsewhere.test/share",)}, "https://elsewhere.test/share?u=1",
         (EXCLUDED, True)),
        ({"single": True}, "http://site.test/about", (METADATA, False)),
        ({"recursive": False}, "http://site.test/about", (METADATA, False)),
    ],
)
def test_the_mode_of_a_link(tmp_path: Path, options: dict[str, Any], url: str,
                            expected: tuple[FollowMode, bool]) -> None:
    middleware = FollowMiddleware.from_crawler(unit_crawler(tmp_path, **options))
    assert decided(middleware, url) == [expected]


def test_a_directory_root_scopes_its_subtree(tmp_path: Path) -> None:
    middleware = FollowMiddleware.from_crawler(unit_crawler(tmp_path, ("http://site.test/docs/",)))
    assert decided(middleware, "http://site.test/docs/a", "http://site.test/blog/") == [
        (FULL, False), (METADATA, True)]


def test_a_root_added_during_the_crawl_changes_cached_decisions(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path, ("http://site.test/docs/",))
    middleware = FollowMiddleware.from_crawler(crawler)
    assert decided(middleware, "http://site.test/blog/") == [(METADATA, True)]
    middleware.session.add_root("http://site.test/blog/")  # a redirecting root's destination
    assert decided(middleware, "http://site.test/blog/") == [(FULL, False)]


def test_an_invalid_link_keeps_its_mode(tmp_path: Path) -> None:
    middleware = FollowMiddleware.from_crawler(unit_crawler(tmp_path))
    item = PageItem(url=ROOT, frontier_id=1, depth=0, is_external=False, is_target=True,
                    links=[LinkRecord("x" * 20, "x" * 20, "", "", True, FollowMode.INVALID)])
    middleware.decide(item)
    assert item.links[0].mode is FollowMode.INVALID


@pytest_twisted.ensureDeferred
async def test_decides_the_pages_the_spider_yields(tmp_path: Path) -> None:
    middleware = FollowMiddleware.from_crawler(unit_crawler(tmp_path))
    page = PageItem(url=ROOT, frontier_id=1, depth=0, is_external=False, is_target=True,
                    links=[link("https://elsewhere.test/")])

    async def output() -> AsyncIterator[Any]:
        yield page
        yield {"not": "a page"}

    response = HtmlResponse(ROOT, body=b"<html></html>")
    seen = [item async for item in middleware.process_spider_output(response, output())]
    assert seen == [page, {"not": "a page"}]
    assert page.links[0].mode is METADATA and page.links[0].is_external


def test_not_configured_without_a_crawl_session() -> None:
    with pytest.raises(NotConfigured):
        FollowMiddleware.from_crawler(get_crawler())
