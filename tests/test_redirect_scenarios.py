"""Integration: redirects crawled from the fixture site's ``/redirects/`` pages (issue 13).

A redirect source never changes what its destination's own crawl recorded, whatever the order
the two are fetched in; a final URL is fetched (and rendered) once however many sources lead
to it; a page that navigates away by script is recorded as a redirect of kind ``script``.
Rendered variants use the real Chromium.
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from nitpicker.query.pages import get_page_detail
from nitpicker.render.chromium import find_chromium
from tests.helpers import crawl

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite
    from tests.helpers import Archive

needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)",
)

#: (render, parallels): --no-render one at a time and in parallel, and rendered.
CRAWL_MODES = [
    pytest.param(False, 1, id="http-P1"),
    pytest.param(False, 4, id="http-P4"),
    pytest.param(True, 4, id="rendered-P4", marks=needs_chromium),
]


def _served(site: FixtureSite, path: str) -> int:
    """How many requests the fixture server answered for ``path`` (either host)."""
    return sum(1 for _, _, target in site.request_log if target == path)


def _redirect_row(archive: Archive, url: str) -> sqlite3.Row:
    row = archive.page(url)
    assert row is not None, url
    return row


@pytest.mark.parametrize(("render", "parallels"), CRAWL_MODES)
@pytest.mark.parametrize(
    "scenario",
    [
        # the destination is crawled (depth 1) before the page linking the source (depth 2)
        pytest.param("before", id="dest-first"),
        # the source (depth 1) is recorded before the destination is found (depth 2, on a
        # slow page)
        pytest.param("after", id="source-first"),
        # both at depth 1; the destination answers slowly, so the source's redirect to it
        # arrives while the destination's own request is in flight
        pytest.param("concurrent", id="concurrent"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_an_out_of_scope_redirect_never_overwrites_its_in_scope_destination(
    site: FixtureSite, tmp_path: Path, scenario: str, render: bool, parallels: int
) -> None:
    section = f"/redirects/{scenario}/"
    dest, source = f"{section}dest", f"{section}away"
    archive = await crawl(tmp_path, [site.url(section)], render=render, parallels=parallels)
    page = _redirect_row(archive, site.url(dest))
    assert (page["is_target"], page["is_external"], page["status"]) == (1, 0, 200)
    assert page["redirect_dest_id"] is None
    # the destination's own crawl kept its links, and they were followed
    assert archive.anchors_of(site.url(dest)) == [site.url(f"{section}dest-child")]
    assert _redirect_row(archive, site.url(f"{section}dest-child"))["is_target"] == 1
    assert archive.rows("SELECT 1 FROM snapshots WHERE page_id = ?", page["id"])
    # the source is a redirect row pointing at it, out of scope
    moved = _redirect_row(archive, f"{site.external_url}{source}")
    assert (moved["status"], moved["is_external"], moved["is_target"]) == (302, 1, 0)
    assert moved["redirect_dest_id"] == page["id"]
    assert moved["redirect_kind"] == "http"


@pytest.mark.parametrize(("render", "parallels"), CRAWL_MODES)
@pytest_twisted.ensureDeferred
async def test_a_final_page_reached_through_three_redirects_is_fetched_once(
    site: FixtureSite, tmp_path: Path, render: bool, parallels: int
) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/redirects/many/")], render=render,
                          parallels=parallels)
    # one HTTP fetch of the final page; rendered: one preflight and one browser navigation
    assert _served(site, "/redirects/many/final") == (2 if render else 1)
    # each source was asked for once
    assert [_served(site, f"/redirects/many/{name}") for name in "abc"] == [1, 1, 1]
    final = _redirect_row(archive, site.url("/redirects/many/final"))
    assert (final["is_target"], final["title"], final["status"]) == (1, "Final Page", 200)
    sources = archive.rows("SELECT url, status, redirect_kind FROM pages"
                           " WHERE redirect_dest_id = ? ORDER BY url", final["id"])
    assert [tuple(r) for r in sources] == [
        (site.url(f"/redirects/many/{name}"), 301, "http") for name in "abc"]


@pytest_twisted.ensureDeferred
async def test_a_failed_redirect_chain_leaves_its_target_to_its_own_fetch(
    site: FixtureSite, tmp_path: Path
) -> None:
    """The chain took the target's frontier row; failing, it gives it back: the target gets a
    row of its own and nothing is left leased."""
    archive = await crawl(tmp_path, [site.url("/redirects/broken/")])
    source = _redirect_row(archive, site.url("/redirects/broken/to-reset"))
    assert source["status"] == -1
    target = _redirect_row(archive, site.url("/redirects/broken/reset"))
    assert (target["scraped"], target["status"]) == (1, -1)
    assert archive.rows("SELECT url FROM frontier WHERE state != 2") == []


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_a_page_that_navigates_away_by_script_is_a_script_redirect(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/redirects/script/")], render=True)
    dest = _redirect_row(archive, site.url("/redirects/script/dest"))
    assert (dest["is_target"], dest["title"], dest["status"]) == (1, "Reached By Script", 200)
    source = _redirect_row(archive, site.url("/redirects/script/source"))
    assert (source["scraped"], source["status"], source["is_target"]) == (1, 200, 0)
    assert source["redirect_dest_id"] == dest["id"]
    assert source["redirect_kind"] == "script"
    detail = get_page_detail(archive.conn, site.url("/redirects/script/dest"))
    assert detail is not None
    assert detail["redirect_from"] == [site.url("/redirects/script/source")]
    source_detail = get_page_detail(archive.conn, site.url("/redirects/script/source"))
    assert source_detail is not None
    assert (source_detail["redirect_to"], source_detail["redirect_kind"]) == (
        site.url("/redirects/script/dest"), "script")


@pytest_twisted.ensureDeferred
async def test_without_a_browser_the_script_page_is_a_plain_page(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/redirects/script/")], render=False)
    source = _redirect_row(archive, site.url("/redirects/script/source"))
    assert (source["is_target"], source["title"], source["redirect_dest_id"]) == (
        1, "Leaving By Script", None)
    assert source["redirect_kind"] is None
    assert archive.page(site.url("/redirects/script/dest")) is None
