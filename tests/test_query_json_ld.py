"""nitpicker.query.json_ld (and ``nitpicker query FILE json-ld``) against crawls of the fixture
site's ``/json-ld/`` pages: over HTTP (``--no-render``) and in the browser."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from nitpicker.query import list_json_ld, open_archive
from nitpicker.render.chromium import find_chromium
from tests.helpers import crawl, run

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

    from fixtures.site import FixtureSite

MALFORMED_ERROR = "Expecting property name enclosed in double quotes (line 1, column 71)"


@pytest_twisted.async_fixture(scope="module")
async def archive_path(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("json-ld"), [site.url("/json-ld/")])
    archive.conn.close()
    return archive.path


@pytest.fixture
def conn(archive_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_archive(archive_path)
    yield connection
    connection.close()


def _pages(answer: Any) -> dict[str, Any]:
    return {item["url"]: item for item in answer["items"]}


def test_every_block_of_every_page_with_its_types(conn: sqlite3.Connection,
                                                   site: FixtureSite) -> None:
    answer = list_json_ld(conn)
    # /json-ld/ itself has a plain script only; /json-ld/scripted writes its block with
    # JavaScript: neither has a block over HTTP
    assert [item["url"] for item in answer["items"]] == [
        site.url(p) for p in ("/json-ld/graph", "/json-ld/malformed", "/json-ld/multiple",
                              "/json-ld/product")]
    assert answer["total"] == 4
    pages = _pages(answer)
    assert pages[site.url("/json-ld/product")] == {
        "url": site.url("/json-ld/product"), "types": ["Product"], "invalid_blocks": 0,
        "blocks": [{"position": 0, "types": ["Product"], "is_valid": True, "error": None}]}
    multiple = pages[site.url("/json-ld/multiple")]
    assert [block["types"] for block in multiple["blocks"]] == [
        ["Organization"], ["Article", "NewsArticle"], ["BreadcrumbList", "WebPage"]]
    assert multiple["types"] == ["Article", "BreadcrumbList", "NewsArticle", "Organization",
                                 "WebPage"]
    # @graph members count, an entity nested in one does not
    assert pages[site.url("/json-ld/graph")]["types"] == ["Person", "WebPage", "WebSite"]
    malformed = pages[site.url("/json-ld/malformed")]
    assert malformed["invalid_blocks"] == 2
    assert [(b["is_valid"], b["error"], b["types"]) for b in malformed["blocks"]] == [
        (False, MALFORMED_ERROR, []), (True, None, ["Product"]), (False, "empty block", [])]


def test_pages_by_type_and_with_invalid_blocks(conn: sqlite3.Connection,
                                               site: FixtureSite) -> None:
    products = list_json_ld(conn, type="Product")
    assert [item["url"] for item in products["items"]] == [
        site.url("/json-ld/malformed"), site.url("/json-ld/product")]
    assert [item["url"] for item in list_json_ld(conn, type="WebPage")["items"]] == [
        site.url("/json-ld/graph"), site.url("/json-ld/multiple")]
    assert list_json_ld(conn, type="Offer")["total"] == 0  # nested in the product
    assert list_json_ld(conn, type="product")["total"] == 0  # types are exact
    invalid = list_json_ld(conn, invalid=True)
    assert [item["url"] for item in invalid["items"]] == [site.url("/json-ld/malformed")]
    assert list_json_ld(conn, type="Product", invalid=True)["total"] == 1
    assert list_json_ld(conn, type="Organization", invalid=True)["total"] == 0
    second = list_json_ld(conn, limit=1, offset=1)
    assert (second["total"], [i["url"] for i in second["items"]]) == (
        4, [site.url("/json-ld/malformed")])
    assert list_json_ld(conn, offset=10) == {"items": [], "total": 4, "offset": 10, "limit": 100}
    with pytest.raises(ValueError, match="Invalid JSON-LD type: ''"):
        list_json_ld(conn, type="")


def test_query_json_ld_on_the_command_line(archive_path: Path, site: FixtureSite,
                                           tmp_path: Path) -> None:
    answer = run("query", str(archive_path), "json-ld", "--invalid", cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    (page,) = json.loads(answer.stdout)["items"]
    assert (page["url"], page["blocks"][0]["error"]) == (site.url("/json-ld/malformed"),
                                                         MALFORMED_ERROR)
    typed = run("query", "json-ld", str(archive_path), "--type", "NewsArticle", "-l", "1",
                cwd=tmp_path)
    assert json.loads(typed.stdout)["items"][0]["url"] == site.url("/json-ld/multiple")
    empty = run("query", str(archive_path), "json-ld", "--type", "", cwd=tmp_path)
    assert (empty.returncode, empty.stdout) == (1, "")
    assert empty.stderr.strip() == "Error: Invalid JSON-LD type: ''. Give a type, such as Product"


@pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                    reason="Chromium is not installed (make test installs it; CI requires it)")
@pytest_twisted.ensureDeferred
async def test_rendered_pages_have_their_json_ld_too(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/json-ld/")], render=True)
    archive.conn.close()
    conn = open_archive(archive.path)
    try:
        pages = _pages(list_json_ld(conn))
    finally:
        conn.close()
    # the same blocks as over HTTP, and the one the page's script writes
    assert {url: page["types"] for url, page in pages.items()} == {
        site.url("/json-ld/graph"): ["Person", "WebPage", "WebSite"],
        site.url("/json-ld/malformed"): ["Product"],
        site.url("/json-ld/multiple"): ["Article", "BreadcrumbList", "NewsArticle",
                                        "Organization", "WebPage"],
        site.url("/json-ld/product"): ["Product"],
        site.url("/json-ld/scripted"): ["FAQPage"],
    }
    assert pages[site.url("/json-ld/malformed")]["invalid_blocks"] == 2
