"""Click depth (nitpicker/archive/click_depth.py, issue 27 item 3): a page's depth is its
shortest click path from a root over the ``anchors`` table, whichever path found it first;
predicted and sitemap-only pages have none. A real crawl of a
:class:`~fixtures.graph_site.GraphSite` and the function on a writer's archive."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from fixtures.graph_site import GraphSite
from nitpicker.archive.click_depth import set_click_depths
from tests.helpers import crawl, frontier_entry

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.archive.writer import ArchiveWriter

SLOW = 2.0
"""Seconds ``/c`` takes: ``/a`` → ``/b`` → ``/x`` is crawled meanwhile."""


def two_paths_site() -> GraphSite:
    """``/x`` is two clicks away through the slow ``/c``, three through ``/a`` and ``/b``
    (found first); ``/n/1`` and ``/n/2`` predict ``/n/3`` and ``/n/4``, which answer but
    nothing links; ``/listed`` is in the sitemap only."""
    pages = {
        "/": ["/a", "/c", "/n/1", "/n/2"],
        "/a": ["/b"], "/b": ["/x"], "/c": ["/x"], "/x": ["/y"], "/y": [],
        "/n/1": [], "/n/2": [], "/n/3": [], "/n/4": [], "/listed": ["/y"],
    }
    sitemap = ('<?xml version="1.0" encoding="UTF-8"?>\n'
               '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
               "<url><loc>{{BASE}}/listed</loc></url></urlset>\n")
    return GraphSite(pages, delays={"/c": SLOW}, files={"/sitemap.xml": ("application/xml", sitemap)})


@pytest.mark.integration
@pytest.mark.parametrize("close_reader", [False, True], ids=["here", "close-reader"])
@pytest_twisted.ensureDeferred
async def test_depth_is_the_shortest_click_path_not_the_first_found(
        tmp_path: Path, close_reader: bool, caplog: pytest.LogCaptureFixture) -> None:
    """Computed in the crawl's process, and read by the close's process of its own
    (``NITPICKER_CLOSE_READER_PAGES``: nitpicker/archive/close_reader.py) and stored after."""
    caplog.set_level(logging.INFO, logger="nitpicker.crawl.session")
    settings = {"NITPICKER_CLOSE_READER_PAGES": 1 if close_reader else 0}
    with two_paths_site() as site:
        archive = await crawl(tmp_path, [site.url("/")], settings, parallels=4)
    assert ("link scores computed beside the close" in caplog.text) is close_reader
    queued = archive.rows("SELECT depth FROM frontier WHERE url = ?", site.url("/x"))
    assert queued[0]["depth"] == 3, "/x was found through /b first (queued at depth 3)"
    depths = {row["url"].removeprefix(site.base_url): row["depth"]
              for row in archive.rows("SELECT url, depth FROM pages")}
    assert depths["/"] == 0
    assert depths["/a"] == depths["/c"] == depths["/n/1"] == 1
    assert depths["/b"] == 2
    assert depths["/x"] == 2, "through /c, though /b's link to it was found first"
    assert depths["/y"] == 3
    assert depths["/n/3"] is None and depths["/n/4"] is None, "predicted, linked by no page"
    assert depths["/listed"] is None, "in the sitemap only"


def test_redirects_keep_the_depth_and_unreached_pages_have_none(writer: ArchiveWriter) -> None:
    """On rows written directly: a root redirecting to its destination (depth 0 both), a link
    from the destination (1), a link to a page nothing reaches (none), in any id order."""
    conn = writer.conn
    writer.begin()
    rows = {"http://example.com/island": 7, "http://example.com/": 0,
            "http://example.com/home": 0, "http://example.com/a": 9,
            "http://example.com/island-link": 1}
    for url, depth in rows.items():
        conn.execute("INSERT INTO pages(url, depth) VALUES (?, ?)", (url, depth))
    ids = dict(conn.execute("SELECT url, id FROM pages"))
    conn.execute("UPDATE pages SET redirect_dest_id = ? WHERE url = ?",
                 (ids["http://example.com/home"], "http://example.com/"))
    conn.executemany("INSERT INTO anchors(page_id, href_id) VALUES (?, ?)", [
        (ids["http://example.com/home"], ids["http://example.com/a"]),
        (ids["http://example.com/a"], ids["http://example.com/home"]),
        (ids["http://example.com/island"], ids["http://example.com/island-link"]),
    ])
    writer.frontier.add([frontier_entry("http://example.com/", 0)])
    assert set_click_depths(conn) == 3
    depths = dict(conn.execute("SELECT url, depth FROM pages"))
    assert depths == {"http://example.com/": 0, "http://example.com/home": 0,
                      "http://example.com/a": 1, "http://example.com/island": None,
                      "http://example.com/island-link": None}
    assert set_click_depths(conn) == 0, "deterministic: a second walk changes nothing"
