"""Sitemaps seed the crawl: robots.txt Sitemap lines, /sitemap.xml, indexes, gzip, byte cap."""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import NotConfigured

from fixtures.site import FixtureSite
from nitpicker.crawl.sitemaps import SIZE_COUNTED, SitemapSeeder, SitemapTooLarge, read_sitemap
from tests.components import unit_crawler
from tests.helpers import crawl

if TYPE_CHECKING:
    from pathlib import Path

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*urls: str) -> bytes:
    return f"<urlset {NS}>{''.join(f'<url><loc>{u}</loc></url>' for u in urls)}</urlset>".encode()


def test_read_a_urlset_an_index_and_gzip() -> None:
    doc = read_sitemap(urlset("https://a.com/1", " https://a.com/2 "), 10_000)
    assert (doc.is_index, doc.urls) == (False, ["https://a.com/1", "https://a.com/2"])
    index = read_sitemap(
        f"<sitemapindex {NS}><sitemap><loc>https://a.com/s1.xml</loc></sitemap></sitemapindex>"
        .encode(), 10_000)
    assert (index.is_index, index.urls) == (True, ["https://a.com/s1.xml"])
    assert read_sitemap(gzip.compress(urlset("https://a.com/z")), 10_000).urls == ["https://a.com/z"]


@pytest.mark.parametrize(
    "body",
    [
        urlset(*(f"https://a.com/{n}" for n in range(200))),  # too large as served
        gzip.compress(b" " * 50_000),  # small compressed, too large once decompressed
    ],
    ids=["too-large-served", "too-large-decompressed"],  # gzip's header holds the time
)
def test_documents_over_the_cap_are_skipped_whole(body: bytes) -> None:
    with pytest.raises(SitemapTooLarge):
        read_sitemap(body, 4_000)


def test_a_document_over_the_cap_is_measured_up_to_past_50_mb() -> None:
    """Its size, for ``sitemaps/too-large``: as served, or decompressed (and thrown away) up to
    one byte past the protocol's 50 MB."""
    body = urlset("https://a.com/1")
    assert read_sitemap(body, 10_000).size == len(body)
    assert read_sitemap(gzip.compress(body), 10_000).size == len(body)
    for served, cap, size in (
            (urlset(*(f"https://a.com/{n}" for n in range(200))), 4_000, None),
            (gzip.compress(b" " * 50_000), 4_000, 50_000),
            (gzip.compress(b" " * (SIZE_COUNTED + 5_000_000), 1), 1_000_000, SIZE_COUNTED)):
        with pytest.raises(SitemapTooLarge) as raised:
            read_sitemap(served, cap)
        assert raised.value.size == (len(served) if size is None else size)


def test_garbage_is_not_a_sitemap() -> None:
    with pytest.raises(ValueError, match="not a"):
        read_sitemap(b"\x1f\x8bnot gzip at all", 4_000)


@pytest.mark.integration  # the archive signs the pages' main contents in a child process
@pytest_twisted.ensureDeferred
async def test_sitemaps_seed_the_crawl_and_mark_pages(tmp_path: Path) -> None:
    with FixtureSite(sitemaps=True) as site:
        archive = await crawl(tmp_path, [site.url("/")],
                              settings={"NITPICKER_SITEMAP_MAX_BYTES": 8000})
        requested = {p for _, _, p in site.request_log}
    orphan = archive.page(site.url("/sitemap-only/orphan"))
    assert (orphan["is_target"], orphan["title"], orphan["in_sitemap"]) == (
        1, "Sitemap orphan", 1)
    inbound = archive.rows("SELECT count(*) AS n FROM anchors WHERE href_id = ?", orphan["id"])
    assert inbound[0]["n"] == 0  # an orphan: in the sitemap, linked from no page
    from_robots = archive.page(site.url("/sitemap-only/from-robots"))
    assert (from_robots["is_target"], from_robots["in_sitemap"]) == (1, 1)
    assert archive.page(site.url("/recursive/"))["in_sitemap"] == 1
    assert archive.page(site.url("/recursive/page-c"))["title"] == "Page C"
    # over the byte cap: skipped whole, none of its URLs queued
    assert "/sitemaps/huge.xml" in requested
    assert not archive.urls("url LIKE ?", "%/sitemap-only/never%")
    # out of scope: marked, not crawled
    external = archive.page(f"{site.external_url}/external-like")
    assert (external["in_sitemap"], external["is_external"]) == (1, 1)
    assert archive.page(site.url("/about"))["in_sitemap"] == 0


@pytest_twisted.ensureDeferred
async def test_no_sitemap_and_single_page_do_not_read_sitemaps(tmp_path: Path) -> None:
    with FixtureSite(sitemaps=True) as site:
        off = await crawl(tmp_path, [site.url("/")], sitemap=False)
        single = await crawl(tmp_path, [site.url("/")], single=True)
        requested = [p for _, _, p in site.request_log]
    assert off.page(site.url("/sitemap-only/orphan")) is None
    assert single.page(site.url("/sitemap-only/orphan")) is None
    assert "/sitemap.xml" not in requested


# -- the seeder's settings --------------------------------------------------------------------


class RecordingEngine:
    """Stands in for the engine: the requests the seeder schedules."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def crawl(self, request: Request) -> None:
        self.requests.append(request)


@pytest.mark.parametrize(
    ("options", "settings"),
    [
        ({"sitemap": False}, {}),
        ({"single": True}, {}),
        ({"list_mode": True}, {}),
        ({"recursive": False}, {}),
        ({"resume": True}, {}),
        ({}, {"NITPICKER_SITEMAP_ENABLED": False}),  # the operator's switch
    ],
)
def test_the_seeder_is_off_unless_a_new_crawl_follows_links(
    tmp_path: Path, options: dict[str, Any], settings: dict[str, Any]
) -> None:
    with pytest.raises(NotConfigured):
        SitemapSeeder.from_crawler(unit_crawler(tmp_path, settings=settings, **options))


def test_the_seeder_asks_each_origin_once(tmp_path: Path) -> None:
    crawler = unit_crawler(
        tmp_path, ("http://site.test/docs/", "http://site.test/blog/", "https://other.test/"),
        settings={"NITPICKER_SITEMAP_MAX_BYTES": 5000, "NITPICKER_SITEMAP_MAX_DOCUMENTS": 2})
    seeder = SitemapSeeder.from_crawler(crawler)
    assert (seeder.max_bytes, seeder.max_documents) == (5000, 2)
    engine = RecordingEngine()
    crawler.engine = engine  # type: ignore[assignment]
    seeder.spider_opened()
    seeder.request("http://site.test/more.xml")  # over NITPICKER_SITEMAP_MAX_DOCUMENTS
    assert [r.url for r in engine.requests] == [
        "http://site.test/sitemap.xml", "https://other.test/sitemap.xml"]
    assert engine.requests[0].meta["download_maxsize"] == 5000
