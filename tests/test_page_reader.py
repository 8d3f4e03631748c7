"""The page reader (nitpicker/spiders/page_reader.py): an in-scope HTML page's facts read in a
real child process, the same as in the crawl's process; a child that dies leaves its pages to
the crawl's process; a real crawl reads its pages in the child and records what it would
record without it."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy.crawler import CrawlerRunner
from twisted.internet.defer import Deferred

from fixtures.graph_site import GraphSite
from nitpicker.crawl.config import CrawlConfig
from nitpicker.policy.links import LinkResolver
from nitpicker.policy.minhash import fingerprint
from nitpicker.query.snapshot_encoding import decode
from nitpicker.spiders import page_reader
from nitpicker.spiders.page_reader import PageFacts, PageReader, read_page
from nitpicker.spiders.site import SiteSpider
from tests.helpers import Archive, crawl_settings

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration  # each test starts a child process

PAGE = """<!doctype html><html lang="en"><head><title>A page</title>
<base href="/docs/"><link rel="canonical" href="page.html">
<meta name="description" content="What it is"></head>
<body><main id="top" itemscope itemtype="https://schema.org/Article"><h1>Heading</h1><p>Words of the main content.</p>
<a href="one.html">One</a> <a href="../two.html#part">Two <img alt="and a half"></a>
<a href="https://elsewhere.example/x?b=2&a=1">Away</a> <a href="mailto:someone@example.com">Mail</a>
</main></body></html>"""


def ask(child: subprocess.Popen[bytes], request_id: int, url: str, html: str) -> Any:
    payload = pickle.dumps((url, html, True))
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(page_reader._HEAD.pack(request_id, len(payload)) + payload)
    child.stdin.flush()
    answered, size = page_reader._HEAD.unpack(child.stdout.read(page_reader._HEAD.size))
    assert answered == request_id
    return pickle.loads(child.stdout.read(size))


def test_the_child_answers_what_this_process_reads() -> None:
    child = subprocess.Popen([sys.executable, "-m", "nitpicker.spiders.page_reader", "0"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        url = "http://site.test/start.html"
        got = [ask(child, number, url, PAGE) for number in (7, 8)]
        signed = None
        for number in range(100):  # numpy loads on a thread of the child's: pages wait for none
            signed = ask(child, 9 + number, url, PAGE).signed
            if signed is not None:
                break
            time.sleep(0.1)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        assert child.wait(timeout=20) == 0, "the child exits when its input ends"
    expected = read_page(LinkResolver(), url, PAGE, True)
    assert type(got[0]) is PageFacts, "pickled as this module's class, not the child's __main__"
    assert expected.snapshot is None, "read here, the archive's thread compresses the page"
    assert got[0].snapshot is not None and decode("zstd", got[0].snapshot).decode() == PAGE, (
        "the child compresses the snapshot, as the archive stores it")
    expected.snapshot = got[0].snapshot
    assert expected.signed is None, "read here, the archive's signer signs the text"
    assert expected.found.content is not None
    found = fingerprint(expected.found.content.text)
    assert found.minhash is not None
    assert signed == (found.words, found.content_hash, found.minhash), (
        "the child signs the main content, as the archive's signer would")
    assert [dataclasses.replace(facts, signed=None) for facts in got] == [expected, expected]
    assert expected.base == "http://site.test/docs/"
    assert expected.syntaxes == ("microdata",), "found where the page is read, not after"
    assert expected.found.meta.canonical == "http://site.test/docs/page.html"
    assert [link[0] for link in expected.links] == [
        "http://site.test/docs/one.html", "http://site.test/two.html",
        "https://elsewhere.example/x?a=1&b=2", "mailto:someone@example.com"]
    assert expected.links[1][2:] == ("part", "Two and a half")
    assert expected.found.content is not None and expected.found.content.ids == ["top"]


def await_reads(reader: PageReader, pages: list[tuple[str, str]]) -> Deferred[list[PageFacts]]:
    async def all_of_them() -> list[PageFacts]:
        return list(await asyncio.gather(*(reader.read(url, html, True) for url, html in pages)))

    return Deferred.fromFuture(asyncio.ensure_future(all_of_them()))


@pytest_twisted.ensureDeferred
async def test_pages_sent_to_a_child_that_dies_are_read_here() -> None:
    reader = PageReader(LinkResolver())
    pages = [(f"http://site.test/p{number}.html", PAGE.replace("One", f"One {number}"))
             for number in range(6)]
    first = await await_reads(reader, pages[:1])  # the child is up and answering
    assert reader.in_child == 1
    child = reader._child
    assert child is not None
    reading = await_reads(reader, pages[1:])
    child.transport.signalProcess("KILL")  # before it can have answered them all
    got = first + await reading
    resolver = LinkResolver()
    assert unpacked(got) == [read_page(resolver, url, html, True) for url, html in pages]
    assert reader.in_child + reader.here == 6 and reader.here >= 1
    assert not reader.enabled, "a child that died is not started again"
    assert unpacked(await await_reads(reader, pages[:1])) == unpacked(first)


def unpacked(answers: list[PageFacts]) -> list[PageFacts]:
    """The answers without the snapshot the child compresses and the signature it makes (read
    here, there are none)."""
    return [dataclasses.replace(facts, snapshot=None, signed=None) for facts in answers]


def crawl_with(settings: dict[str, Any], tmp_path: Path, root: str) -> Deferred[Any]:
    async def run() -> tuple[Archive, dict[str, Any]]:
        output = tmp_path / f"reader-{settings['NITPICKER_PAGE_READER']}.nitpicker"
        config = CrawlConfig(roots=(root,), output=str(output), retry=0, render=False)
        scrapy_settings = crawl_settings()
        scrapy_settings.update(settings, priority="cmdline")
        runner = CrawlerRunner(scrapy_settings)
        crawler = runner.create_crawler(SiteSpider)
        await runner.crawl(crawler, config=config)
        return Archive(output), crawler.stats.get_stats()

    return Deferred.fromCoroutine(run())


RECORDED = (
    "SELECT p.url, p.title, p.description, p.canonical, p.status, p.links_capped,"
    " (SELECT group_concat(t.url || '#' || a.hash || ':' || a.text, ' ')"
    "  FROM anchors a JOIN pages t ON t.id = a.href_id WHERE a.page_id = p.id) AS links,"
    " c.ids, c.main, c.words, c.content_hash, c.minhash, s.encoding, s.html AS snapshot"
    " FROM pages p LEFT JOIN page_content c ON c.page_id = p.id"
    " LEFT JOIN snapshots s ON s.page_id = p.id ORDER BY p.url"
)


@pytest_twisted.ensureDeferred
async def test_a_crawl_reads_its_pages_in_the_child_and_records_the_same(tmp_path: Path) -> None:
    pages = {"/": ["/a", "/b#part", "/c"], "/a": ["/b", "/"], "/b": ["/c", "/d"],
             "/c": ["/a"], "/d": []}
    with GraphSite(pages) as site:
        (with_child, child_stats) = await crawl_with({"NITPICKER_PAGE_READER": True},
                                                     tmp_path, site.url("/"))
        (without, here_stats) = await crawl_with({"NITPICKER_PAGE_READER": False},
                                                 tmp_path, site.url("/"))
    assert child_stats["nitpicker/page_reader/child"] == 5
    assert child_stats["nitpicker/page_reader/here"] == 0
    assert here_stats["nitpicker/page_reader/child"] == 0
    assert here_stats["nitpicker/page_reader/here"] == 5
    recorded = [tuple(row) for row in with_child.rows(RECORDED)]
    assert len(recorded) == 5
    assert sum(1 for row in recorded if row[6]) == 4, "each page but /d has links"
    assert all(row[-2] == "zstd" and b"<html" in decode("zstd", row[-1]) for row in recorded), (
        "each page's snapshot, compressed by the child (or by the archive's thread)")
    assert recorded == [tuple(row) for row in without.rows(RECORDED)]


def test_a_feed_exports_an_item_with_its_snapshot_compressed() -> None:
    """A Scrapyd job's feed (JSON lines) takes items whose snapshot the child compressed and
    whose content it signed: the HTML is in it, the compressed bytes and the signature's are
    not (JSON has no bytes)."""
    import io
    import json

    from scrapy.exporters import JsonLinesItemExporter

    from nitpicker.archive import snapshots
    from nitpicker.items import PageItem

    item = PageItem(url="http://site.test/", frontier_id=1, depth=0, is_external=False,
                    is_target=True, status=200, html=PAGE, snapshot=snapshots.compress(PAGE),
                    content_signature=(12, -5, b"\x01\x02" * 256))
    out = io.BytesIO()
    exporter = JsonLinesItemExporter(out)
    exporter.start_exporting()
    exporter.export_item(item)
    exporter.finish_exporting()
    line = json.loads(out.getvalue())
    assert line["html"] == PAGE
    assert line["snapshot"] is None
    assert line["content_signature"] is None
