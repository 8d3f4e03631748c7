"""The viewer's audit (``nitpicker/viewer/views.py``: the landing page's issues overview, the
``issue`` view, "Issues on this page" first in a page detail) over the ``/defects/`` crawl:
as JSON, and clicked through in headless Chromium from the overview to an issue's URLs, to a
page, and back to an issue."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
import pytest_twisted

from fixtures.defects import EXPECTED
from tests.viewer_process import Viewer, data, in_browser, needs_chromium, screenshot

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.async_api import Page

    from tests.helpers import Defects


@pytest.fixture(scope="module")
def viewer(defects: Defects) -> Iterator[Viewer]:
    server = Viewer(str(defects.archive), "--port", "0")
    yield server
    code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err


def test_the_landing_page_is_the_issues_overview(viewer: Viewer) -> None:
    landing = data(viewer, "/a/0/")
    assert {item["id"]: item["urls"] for item in landing["issues"]["items"]} == {
        rule: len(paths) for rule, paths in EXPECTED.items()}
    assert landing["issues"]["items"][0]["id"] == "status/server-error"
    assert "summary" in landing and "runs" in landing  # the summary below it
    html = viewer.get("/a/0/").text
    assert html.index('id="issues"') < html.index("<h2>Summary</h2>")


def test_the_issue_view_lists_its_findings_paged(viewer: Viewer, defects: Defects) -> None:
    issue = data(viewer, "/a/0/issue?id=links/broken-internal")
    assert issue["issue"]["title"] == "Broken internal links"
    assert [defects.path(item["url"]) for item in issue["findings"]["items"]] == EXPECTED[
        "links/broken-internal"]
    passed = data(viewer, "/a/0/issue?id=security/mixed-content")
    assert (passed["issue"]["urls"], passed["findings"]["total"]) == (0, 0)
    for path, message in (("/a/0/issue", "Missing id"), ("/a/0/issue?id=links/nope",
                                                         "Unknown issue id: 'links/nope'")):
        response = viewer.get(path, headers={"Accept": "application/json"})
        assert response.status_code == 400
        assert message in response.json()["error"]


def test_a_page_detail_lists_its_issues_first(viewer: Viewer, defects: Defects) -> None:
    url = f"{defects.base}/defects/images"
    detail = data(viewer, f"/a/0/page?url={quote(url, safe='')}")
    assert [issue["id"] for issue in detail["issues"]] == [
        "images/missing-alt", "images/oversized", "images/missing-dimensions"]
    html = viewer.get(f"/a/0/page?url={quote(url, safe='')}").text
    assert html.index('id="page-issues"') < html.index("<h2>HTTP</h2>")


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_from_the_overview_to_an_issue_its_page_and_back(viewer: Viewer,
                                                               defects: Defects) -> None:
    async def browse(page: Page) -> None:
        await page.goto(viewer.url)
        assert page.url == viewer.url + "a/0/"
        assert await page.locator("h1").first.inner_text() == "Issues"
        rows = page.locator("table.issues tr.issue")
        assert await rows.count() == len(EXPECTED)
        assert await rows.first.get_attribute("data-id") == "status/server-error"
        broken = page.locator('tr.issue[data-id="links/broken-internal"]')
        assert await broken.locator("td.urls").inner_text() == "5"
        await broken.locator("details summary").click()
        assert await broken.locator("details p").last.is_visible()
        shot = await screenshot(page, "issues.png")
        await broken.get_by_role("link", name="Broken internal links").click()
        assert await page.locator("h1").inner_text() == "Broken internal links"
        findings = page.locator("table.findings tbody tr")
        assert await findings.count() == 5
        missing = f"{defects.base}/defects/missing"
        await page.get_by_role("link", name=missing, exact=True).click()
        assert await page.locator(".page-url").inner_text() == missing
        own = page.locator("#page-issues tbody tr")
        assert await own.count() == 3  # broken, a 4xx, and listed in a sitemap
        await page.locator("#page-issues").get_by_role("link", name="Client errors (4xx)").click()
        assert await page.locator("h1").inner_text() == "Client errors (4xx)"
        await page.get_by_role("link", name="Issues", exact=True).first.click()
        assert page.url == viewer.url + "a/0/"
        assert shot.stat().st_size > 10_000

    await in_browser(browse)
