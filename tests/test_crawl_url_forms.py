"""Integration: a URL with characters Scrapy percent-encodes (``[ ] { } | ^``) has one row.

Pages link to ``page[1].html``, ``list?filter[tag]=x``, ``missing[1].html`` (a 404) and more,
raw or already encoded; a redirect's ``Location`` has raw brackets; the fixture routes are
``/brackets/…`` (``fixtures/site.py``). Whatever form a link or Scrapy writes a URL in, the
archive holds it once, under the form Scrapy requests (w3lib's ``safe_url_string``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pytest
import pytest_twisted
from w3lib.url import safe_url_string

from nitpicker.query import list_broken_links, list_orphaned_pages
from nitpicker.render.chromium import find_chromium
from tests.helpers import crawl

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite
    from tests.helpers import Archive

#: The rows a crawl of ``/brackets/`` makes under ``/brackets/``, in the encoded form.
BRACKET_PAGES = {
    "/brackets/": 200,
    "/brackets/page%5B1%5D.html": 200,
    "/brackets/list?filter%5Btag%5D=x": 200,
    "/brackets/missing%5B1%5D.html": 404,
    "/brackets/odd%7B1%7D%7Cx%5Ey.html": 200,
    "/brackets/old%5B1%5D.html": 301,
    "/brackets/new%5B1%5D.html": 200,
}
STYLESHEET = "/brackets/style%5B1%5D.css"


def _check_one_row_per_url(site: FixtureSite, archive: Archive) -> None:
    rows = archive.rows("SELECT url, status FROM pages WHERE url LIKE ?", site.url("/brackets/%"))
    assert {r["url"]: r["status"] for r in rows} == {
        site.url(path): status for path, status in BRACKET_PAGES.items()
    }
    assert all(safe_url_string(r["url"]) == r["url"] for r in rows)

    broken = list_broken_links(archive.conn)["items"]
    assert [(b["source_url"], b["dest_url"], b["status"]) for b in broken] == [
        (site.url("/brackets/"), site.url("/brackets/missing%5B1%5D.html"), 404)
    ]
    assert list_orphaned_pages(archive.conn)["items"] == []

    old = archive.page(site.url("/brackets/old%5B1%5D.html"))
    new = archive.page(site.url("/brackets/new%5B1%5D.html"))
    assert old["redirect_dest_id"] == new["id"]
    assert new["is_target"] == 1
    # a link urljoin refuses (an unclosed IPv6 bracket) is no URL; its page is read
    assert archive.anchors_of(site.url("/brackets/odd%7B1%7D%7Cx%5Ey.html")) == [
        site.url("/brackets/")]
    # the raw and the encoded link to page[1].html name one row
    assert archive.anchors_of(site.url("/brackets/")).count(
        site.url("/brackets/page%5B1%5D.html")) == 2

    resources = archive.rows("SELECT url, status FROM resources WHERE url LIKE ?",
                             site.url("/brackets/%"))
    assert [r["url"] for r in resources] == [site.url(STYLESHEET)]


@pytest_twisted.ensureDeferred
async def test_encoded_characters_give_one_row_per_url(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/brackets/")])
    _check_one_row_per_url(site, archive)
    fetched = Counter(unquote(target) for method, _, target in site.request_log
                      if method == "GET" and target.startswith("/brackets/"))
    assert fetched == {unquote(path): 1 for path in BRACKET_PAGES}


@pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed")
@pytest_twisted.ensureDeferred
async def test_encoded_characters_give_one_row_per_url_when_rendering(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/brackets/")], render=True)
    _check_one_row_per_url(site, archive)
    # the browser's request for the stylesheet is the resource the markup names
    resource = archive.rows("SELECT status, content_type FROM resources WHERE url = ?",
                            site.url(STYLESHEET))
    assert [tuple(r) for r in resource] == [(200, "text/css")]


@pytest_twisted.ensureDeferred
async def test_root_with_brackets_is_crawled_in_its_own_scope(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/brackets/[root]/")])
    root = site.url("/brackets/%5Broot%5D/")
    child = site.url("/brackets/%5Broot%5D/child%5B2%5D.html")
    assert archive.internal_pages() == {root, child}
    assert archive.urls("url LIKE ?", site.url("/brackets/%")) == {root, child}
    assert archive.page(child)["is_target"] == 1
    assert archive.anchors_of(child) == [root]
    assert archive.rows("SELECT roots FROM info")[0]["roots"] == f'["{root}"]'
