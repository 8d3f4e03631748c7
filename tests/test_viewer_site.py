"""``nitpicker view``'s Tree, Link graph and Technologies views, in Chromium: a real viewer
process over a crawl of the fixture site (through the CLI) and over a generated archive of
1,000 pages in ten folders (a folder-level graph)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_twisted
import requests

from fixtures.snapshot_archive import FOLDERS, build_snapshot_archive
from nitpicker.viewer import APP_CSP
from tests.viewer_process import ENV, Viewer, in_browser, needs_chromium
from tests.viewer_process import screenshot as keep_screenshot

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.async_api import Page

    from fixtures.site import FixtureSite

ROOT = Path(__file__).resolve().parent.parent
ROOTS = ("/tech/", "/scope/blog/", "/recursive/", "/error-status/")
FOLDERS_CRAWLED = ("error-status/", "recursive/", "scope/", "tech/")


def nitpicker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=170, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def archives(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("viewer-site")
    crawled = folder / "site.nitpicker"
    result = nitpicker("crawl", *(site.url(root) for root in ROOTS), "--no-render", "--silent",
                       "--retry", "0", "-o", str(crawled))
    assert result.returncode == 0, result.stderr
    assert nitpicker("technologies", str(crawled), "--silent").returncode == 0
    big = folder / "big.nitpicker"
    build_snapshot_archive(big, 1000)
    return crawled, big


@pytest.fixture(scope="module")
def viewer(archives: tuple[Path, Path]) -> Iterator[Viewer]:
    server = Viewer(*map(str, archives), "--port", "0")
    yield server
    code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err


async def screenshot(page: Page, name: str) -> Path:
    path = await keep_screenshot(page, name)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank image
    return path


@pytest.mark.parametrize("view", ["tree", "graph", "technologies", "tree?folder=/tech/",
                                  "graph?folder=/tech/"])
def test_the_views_keep_the_strict_csp(viewer: Viewer, view: str) -> None:
    response = requests.get(f"{viewer.url}a/0/{view}", timeout=30)
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == APP_CSP
    assert "<script" not in response.text


def test_the_tree_as_json(viewer: Viewer, site: FixtureSite) -> None:
    tree = requests.get(f"{viewer.url}a/0/tree?format=json", timeout=30).json()["tree"]
    assert [folder["name"] for folder in tree["folders"]] == list(FOLDERS_CRAWLED)
    errors = next(f for f in tree["folders"] if f["name"] == "error-status/")
    assert (errors["status"]["client_error"], errors["status"]["server_error"]) == (2, 1)
    bad = requests.get(f"{viewer.url}a/0/tree?origin=https://elsewhere.example", timeout=30)
    assert bad.status_code == 400 and "Invalid origin" in bad.text


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_tree_and_graph_show_the_folders_in_chromium(viewer: Viewer,
                                                           site: FixtureSite) -> None:
    messages: list[str] = []

    async def browse(page: Page) -> None:
        page.on("console", lambda message: messages.append(message.text))
        await page.goto(f"{viewer.url}a/0/")
        await page.get_by_role("link", name="Tree", exact=True).click()
        assert await page.locator("h1").inner_text() == "Directory tree"
        rows = page.locator("table.folders tbody tr")
        assert await rows.locator("td:first-child").all_inner_texts() == list(FOLDERS_CRAWLED)
        errors = rows.filter(has_text="error-status/")
        assert await errors.locator("svg.mix rect title").all_text_contents() == [
            "ok: 2", "client error: 2", "server error: 1"]
        await screenshot(page, "tree.png")
        await page.get_by_role("link", name="tech/", exact=True).click()
        assert await page.locator("table.files tbody td:nth-child(2)").all_inner_texts() == [
            "(the folder's own URL)", "generator", "scripts"]
        await page.get_by_role("link", name="Link graph of this folder").click()
        graph = page.locator("svg#link-graph")
        assert await graph.get_attribute("data-kind") == "page"
        assert await graph.locator("circle").count() == 3
        assert await graph.locator("line").count() == 2  # /tech/ links to its two pages
        assert await graph.locator("text").all_text_contents() == [
            "Technologies", "Generator", "Scripts"]
        await graph.locator("a", has_text="Generator").locator("circle").click()
        assert await page.locator(".page-url").inner_text() == site.url("/tech/generator")
        assert "WordPress" in await page.locator("#technologies").inner_text()
        # the whole site: a page graph still (fewer than 150 pages)
        await page.get_by_role("link", name="Link graph", exact=True).click()
        assert await graph.get_attribute("data-kind") == "page"
        titles = await graph.locator("circle title").all_text_contents()
        for folder in FOLDERS_CRAWLED:
            assert any(f"/{folder}" in title for title in titles), folder
        await screenshot(page, "graph-pages.png")
        # a big archive: a graph of its folders, each a link to its own graph
        await page.goto(f"{viewer.url}a/1/graph")
        assert await graph.get_attribute("data-kind") == "folder"
        assert sorted(await graph.locator("text").all_text_contents()) == sorted(
            f"{folder}/" for folder in FOLDERS)
        assert await graph.locator("line").count() == len(FOLDERS)
        await screenshot(page, "graph-folders.png")
        await graph.locator("a", has_text="news/").locator("circle").click()
        assert await graph.get_attribute("data-kind") == "page"
        assert await graph.locator("circle").count() == 100

    await in_browser(browse)
    assert not [m for m in messages if "Content Security Policy" in m], messages


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_technologies_per_site_in_chromium(viewer: Viewer, site: FixtureSite) -> None:
    async def browse(page: Page) -> None:
        await page.goto(f"{viewer.url}a/0/technologies")
        rows = page.locator("table.technologies tbody tr")
        names = await rows.locator("td:first-child").all_inner_texts()
        assert {"WordPress", "jQuery", "PHP"} <= set(names)
        assert "6.4.2" in await rows.filter(has_text="WordPress").inner_text()
        await page.get_by_role("link", name="jQuery", exact=True).click()
        assert await page.locator("table.technology-pages tbody td:first-child").all_inner_texts(
            ) == [site.url("/tech/scripts")]
        await screenshot(page, "technologies.png")

    await in_browser(browse)
