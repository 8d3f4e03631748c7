"""``nitpicker view``: a real server process over a crawled fixture archive, driven over plain
HTTP (JSON, errors, headers) and in headless Chromium (navigation, hostile content,
screenshots kept under the test artifacts directory)."""

from __future__ import annotations

import hashlib
import shutil
import socket
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus

import pytest
import pytest_twisted
from markupsafe import escape

from fixtures.traps import TrapSite
from nitpicker.archive.schema import migrate
from nitpicker.cli.view import is_loopback
from nitpicker.query import (
    get_duplicate_clusters,
    get_page_detail,
    get_summary,
    get_violations,
    list_cluster_pages,
    open_archive,
)
from nitpicker.query.page_links import has_page_snapshot
from nitpicker.viewer import APP_CSP, SNAPSHOT_CSP
from nitpicker.viewer.fragments import escape_html, query_value
from tests.helpers import crawl
from tests.viewer_process import (
    ENV,
    Viewer,
    command,
    data,
    in_browser,
    needs_chromium,
    screenshot,
)

if TYPE_CHECKING:
    from playwright.async_api import Page

    from fixtures.site import FixtureSite

ROOT = Path(__file__).resolve().parent.parent
ROOTS = ("/viewer/", "/error-status/", "/query/", "/json-ld/")

HOSTILE_TITLE = '<script>document.documentElement.dataset.pwned = "title"</script> Hostile'

def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest_twisted.async_fixture(scope="module")
async def archive(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    crawled = await crawl(tmp_path_factory.mktemp("viewer"),
                          [site.url(root) for root in ROOTS])
    crawled.conn.close()
    return crawled.path


@pytest.fixture(scope="module")
def viewer(archive: Path) -> Iterator[Viewer]:
    before = digest(archive)
    server = Viewer(str(archive), "--port", "0")
    yield server
    code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err
    assert digest(archive) == before  # the viewer never writes


def page_path(url: str) -> str:
    return f"/a/0/page?url={quote(url, safe='')}"


# -- plain HTTP ---------------------------------------------------------------------------------


def test_prints_its_url_on_loopback(viewer: Viewer) -> None:
    assert viewer.url.startswith("http://127.0.0.1:") and viewer.url.endswith("/")
    assert viewer.first_line.endswith("(Ctrl-C to stop)")


@pytest.mark.parametrize("path", ["/a/0/", "/a/0/pages?sort=status&order=desc",
                                  "/a/0/resources", "/a/0/images", "/a/0/violations",
                                  "/a/0/duplicates?field=description", "/a/0/headers?missing=1",
                                  "/a/0/mismatches?type=og:title",
                                  "/a/0/links?type=broken", "/a/0/links?type=orphaned",
                                  "/a/0/clusters?min=1", "/a/0/traps"])
def test_json_is_the_same_data_by_parameter_or_accept(viewer: Viewer, path: str) -> None:
    html = viewer.get(path)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    by_parameter = viewer.get(path + ("&" if "?" in path else "?") + "format=json")
    by_accept = viewer.get(path, headers={"Accept": "application/json"})
    assert by_parameter.status_code == by_accept.status_code == 200
    assert by_parameter.json() == by_accept.json()


@pytest.mark.smoke
def test_summary_json(viewer: Viewer, archive: Path, site: FixtureSite) -> None:
    data = viewer.get("/a/0/?format=json").json()
    conn = open_archive(archive)
    try:
        assert data["summary"] == get_summary(conn)  # the query library's answer, as it is
    finally:
        conn.close()
    assert data["summary"]["base_url"] == site.url("/viewer/")
    statuses = {row["status"]: row["count"] for row in data["summary"]["status_distribution"]}
    # /viewer/gone's 404 is text/plain: no page of the list; /query/'s own links 404 too
    assert (statuses[403], statuses[500]) == (1, 1)
    assert [run["status"] for run in data["runs"]["items"]] == ["finished"]
    labels = [bar["label"] for bar in data["status_chart"]["bars"]]
    assert labels == [str(row["status"]) for row in data["summary"]["status_distribution"]]


def test_summary_charts(viewer: Viewer) -> None:
    summary = data(viewer, "/a/0/")
    depth = summary["distributions"]["depth"]
    # the four roots, the pages they link, and the pages /query/list?page=4 predicts (page=5…),
    # which no link reaches: no click depth
    assert [row["label"] for row in depth] == ["0", "1", "unknown"]
    assert depth[0]["count"] == len(ROOTS)
    assert [bar["count"] for bar in summary["charts"]["depth"]["bars"]] == [
        row["count"] for row in depth]
    types = {row["label"]: row["count"] for row in summary["distributions"]["content_type"]}
    assert types["text/html"] > types["text/plain"] >= 1  # /viewer/gone's 404 page
    assert summary["distributions"]["validator"] == []
    html = viewer.get("/a/0/").text
    assert html.count('<svg class="chart"') == 3  # status, depth, content type; no findings


def test_pages_are_paged_filtered_and_sorted(viewer: Viewer, site: FixtureSite) -> None:
    data = viewer.get("/a/0/pages?status=404&format=json").json()
    assert [p["url"] for p in data["pages"]["items"]] == [site.url("/error-status/not-found")]
    found = viewer.get("/a/0/pages?q=hostile&format=json").json()["pages"]["items"]
    assert [p["url"] for p in found] == [site.url("/viewer/hostile")]
    titled = viewer.get("/a/0/pages?q=duplicate+title&format=json").json()["pages"]["items"]
    assert [p["url"] for p in titled] == [site.url(f"/query/dup-{c}") for c in "abc"]
    ordered = viewer.get("/a/0/pages?sort=status&order=desc&format=json").json()
    assert ordered["pages"]["items"][0]["status"] == 500
    assert ordered["pages"]["limit"] == 50


def test_page_detail_json(viewer: Viewer, site: FixtureSite) -> None:
    data = viewer.get(page_path(site.url("/viewer/")) + "&format=json").json()
    outbound = {link["url"]: link["status"] for link in data["links_out"]["items"]}
    assert outbound[site.url("/viewer/gone")] == 404
    assert data["has_snapshot"] is True


def test_resources_and_their_referrers(viewer: Viewer, site: FixtureSite) -> None:
    resources = data(viewer, "/a/0/resources")["resources"]
    assert site.url("/query/style.css") in [r["url"] for r in resources["items"]]
    assert data(viewer, "/a/0/resources?type=text/css")["resources"]["total"] == 0
    css = data(viewer, f"/a/0/resources?url={quote(site.url('/query/style.css'), safe='')}")
    assert css["referrers"]["page_urls"] == [site.url("/query/"), site.url("/query/images")]
    html = viewer.get(f"/a/0/resources?url={quote(site.url('/query/style.css'), safe='')}")
    assert html.text.count('href="/a/0/page?url=') == 2


def test_images_view(viewer: Viewer, site: FixtureSite) -> None:
    missing = data(viewer, "/a/0/images?show=missing-alt")["images"]["items"]
    assert [(i["src"].rsplit("/", 1)[1], i["alt"]) for i in missing] == [
        ("no-alt.png", None), ("empty-alt.png", "")]
    sizes = data(viewer, "/a/0/images?show=missing-dimensions")["images"]["items"]
    assert [i["src"].rsplit("/", 1)[1] for i in sizes] == [
        "no-size.png", "zero-width.png", "no-such-image.png"]  # the last on /viewer/hostile
    everything = data(viewer, "/a/0/images")
    assert everything["images"]["total"] == 6
    assert everything["filters"] == ["all", "missing-alt", "missing-dimensions"]  # no threshold
    detail = data(viewer, page_path(site.url("/query/images")))
    assert detail["images"]["total"] == 5
    assert detail["resources"]["total"] == len(detail["resources"]["items"]) > 0


def test_page_detail_json_ld(viewer: Viewer, site: FixtureSite) -> None:
    product = data(viewer, page_path(site.url("/json-ld/malformed")))["json_ld"]
    # a trailing comma, a valid Product, an empty block
    assert (product["types"], product["invalid_blocks"]) == (["Product"], 2)
    html = viewer.get(page_path(site.url("/json-ld/malformed"))).text
    assert 'id="json-ld"' in html and "column 71" in html
    assert data(viewer, page_path(site.url("/viewer/")))["json_ld"]["blocks"] == []


def test_duplicates_mismatches_headers_violations(viewer: Viewer, site: FixtureSite) -> None:
    titles = data(viewer, "/a/0/duplicates")
    assert titles["field"] == "title" and titles["duplicates"]["total"] > 0
    assert all(d["count"] >= 2 for d in titles["duplicates"]["items"])
    canonical = data(viewer, "/a/0/mismatches?type=canonical")["mismatches"]["items"]
    assert canonical == [{"url": site.url("/query/mismatch"), "type": "canonical",
                          "actual": site.url("/query/mismatch"),
                          "expected": site.url("/query/dup-a")}]
    every = data(viewer, "/a/0/headers")["headers"]
    missing = data(viewer, "/a/0/headers?missing=1")["headers"]
    assert every["total"] == missing["total"] > 0  # the fixture server sends none of them
    assert data(viewer, "/a/0/violations")["rules"]["total"] == 0  # no analyzer ran


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/a/0/page?url=http%3A%2F%2Fnowhere.test%2F", 404,
     "No page with URL 'http://nowhere.test/' in this archive"),
    ("/a/0/page", 400, "Missing url: name the page with ?url="),
    ("/a/1/", 404, "No archive number '1': this viewer serves 1 (0 to 0)"),
    ("/a/x/pages", 404, "No archive number 'x': this viewer serves 1 (0 to 0)"),
    ("/a/0/nothing", 404, "No view 'nothing'"),
    ("/nothing/at/all", 404, "No such page in the viewer"),
    ("/a/0/pages?page=0", 400, "Invalid page: 0. Must be between 1 and 184467440737095516"),
    ("/a/0/pages?page=two", 400, "Invalid page: 'two'. Must be an integer"),
    ("/a/0/pages?status=1000", 400, "Invalid status: 1000. Must be between -1 and 999"),
    ("/a/0/pages?sort=evil", 400, "Invalid sort: 'evil'. Must be one of: url, status, title, link_score"),
    ("/a/0/links?type=all", 400,
     "Invalid type: 'all'. Must be one of: broken, external, orphaned"),
    ("/a/0/clusters?min=0", 400, "Invalid min: 0. Must be between 1 and 9223372036854775807"),
    ("/a/0/cluster?signature=..%2F..%2Fetc", 400,
     "Invalid signature: '../../etc'. Must be 40 hex digits"),
    ("/a/0/cluster?signature=" + "0" * 40, 404,
     "No cluster with signature " + "0" * 40 + " in this archive"),
    ("/a/0/images?show=oversized", 400,
     ("Invalid show: 'oversized'. This archive's crawl set no image file size threshold "
      "(--image-file-size-threshold)")),
    ("/a/0/headers?missing=yes", 400, "Invalid missing: 'yes'. Must be one of: 0, 1"),
    ("/a/0/mismatches?type=og:url", 400,
     "Invalid type: 'og:url'. Must be one of: canonical, og:title, og:description"),
    ("/a/0/duplicates?field=h1", 400, "Invalid field: 'h1'. Must be one of: title, description"),
    ("/a/0/resources?url=http%3A%2F%2Fnowhere.test%2Fa.css", 404,
     "No resource with URL 'http://nowhere.test/a.css' in this archive"),
    ("/a/0/snapshot?url=http%3A%2F%2Fnowhere.test%2F", 404,
     "No snapshot of 'http://nowhere.test/' in this archive"),
])
def test_bad_requests_are_an_error_page_never_a_traceback(
        viewer: Viewer, path: str, status: int, message: str) -> None:
    page = viewer.get(path)
    assert page.status_code == status
    assert "Traceback" not in page.text
    assert page.headers["content-security-policy"] == APP_CSP
    as_json = viewer.get(path, headers={"Accept": "application/json"})
    assert (as_json.status_code, as_json.json()) == (status, {"error": message,
                                                              "status": status})


def test_security_headers(viewer: Viewer, site: FixtureSite) -> None:
    page = viewer.get(page_path(site.url("/viewer/hostile")))
    assert page.headers["content-security-policy"] == APP_CSP
    assert "script-src" not in APP_CSP and "default-src 'none'" in APP_CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<iframe class="snapshot" title="Snapshot of the page" sandbox src=' in page.text
    snapshot = viewer.get(f"/a/0/snapshot?url={quote(site.url('/viewer/hostile'), safe='')}")
    assert snapshot.headers["content-security-policy"] == SNAPSHOT_CSP
    assert SNAPSHOT_CSP.startswith("sandbox;")


def test_crawled_strings_are_escaped(viewer: Viewer, site: FixtureSite) -> None:
    page = viewer.get(page_path(site.url("/viewer/hostile"))).text
    assert "<script>" not in page.lower()
    assert "&lt;script&gt;document.documentElement.dataset.pwned" in page
    assert "onerror=" not in page.replace("onerror=&#34;", "")  # only as escaped text
    assert 'href="javascript:' not in page


@pytest.mark.parametrize(("host", "status"), [
    ("127.0.0.1:{port}", 200), ("localhost:{port}", 200), ("LOCALHOST:{port}", 200),
    ("[::1]:{port}", 200), ("rebound.example:{port}", 400), ("127.0.0.1.evil.test", 400),
    ("", 400),
])
def test_only_loopback_host_names_are_answered(viewer: Viewer, host: str, status: int) -> None:
    """A page that rebinds its DNS name to 127.0.0.1 reaches the viewer under its own name:
    refused, so it cannot read the archive through the visitor's browser."""
    port = viewer.url.rsplit(":", 1)[1].strip("/")
    answer = viewer.get("/a/0/", headers={"Host": host.format(port=port)})
    assert answer.status_code == status
    if status == 400:
        assert answer.text.startswith("Invalid Host header")


def test_one_archive_redirects_home_to_it(viewer: Viewer) -> None:
    home = viewer.get("/")
    assert (home.status_code, home.headers["location"]) == (302, "/a/0/")
    assert viewer.get("/", headers={"Accept": "application/json"}).json()["archives"][0][
        "url"] == "/a/0/"


def test_several_archives_get_a_picker(archive: Path, tmp_path: Path) -> None:
    other = tmp_path / "copy.nitpicker"
    shutil.copy(archive, other)
    server = Viewer(str(archive), str(other))
    try:
        assert server.first_line.startswith("Serving 2 archives at ")
        home = server.get("/")
        assert home.status_code == 200
        assert 'href="/a/0/"' in home.text and 'href="/a/1/"' in home.text
        assert str(other) in home.text
        assert server.get("/a/1/pages").status_code == 200
    finally:
        assert server.stop()[0] == 0


def test_open_starts_the_browser_on_the_url(archive: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n', encoding="utf-8")
    browser.chmod(0o755)
    server = Viewer(str(archive), "--open", env={"BROWSER": f"{browser} %s"})
    try:
        for _ in range(100):
            if opened.exists() and opened.read_text().strip():
                break
            threading.Event().wait(0.1)
        assert opened.read_text().strip() == server.url
        assert server.get("/").status_code == 302  # serving (Ctrl-C is now the server's)
    finally:
        assert server.stop()[0] == 0


# -- bad input at start ---------------------------------------------------------------------------


def start_error(*args: str) -> str:
    result = subprocess.run(command(*args), env=ENV, capture_output=True, text=True,
                            timeout=60, check=False)
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_no_file() -> None:
    assert start_error() == "Error: Missing argument 'FILE'."


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.nitpicker"
    assert start_error(str(missing)) == f"Error: Archive not found: {missing}"


def test_not_an_archive(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    assert start_error(str(text)) == f"Error: Not a nitpicker archive: {text}"


def test_newer_archive(archive: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer.nitpicker"
    shutil.copy(archive, newer)
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 'x')")
    conn.commit()
    conn.close()
    assert start_error(str(newer)) == (
        f"Error: {newer}: written by a newer nitpicker (schema 9999_from_the_future)")


def test_port_in_use(archive: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert start_error(str(archive), "--port", str(port)) == (
            f"Error: Cannot listen on 127.0.0.1:{port}: Address already in use")


def test_port_out_of_range(archive: Path) -> None:
    assert start_error(str(archive), "--port", "70000") == (
        "Error: Invalid value for '--port': '70000'. Input should be less than or equal to 65535")


CRAWLED_STRINGS = [
    "http://example.com/a/b.html", "https://example.com/search?q=a b&lang=ja#top",
    'http://evil.test/"><script>alert(1)</script>', "it's <b>bold</b> & \"quoted\"",
    "https://例え.jp/パス?ｑ=値", "javascript:alert('x')", "", "100% ~_.-:/", "&amp;&lt;",
]


@pytest.mark.parametrize("text", CRAWLED_STRINGS)
def test_row_escaping_is_markupsafes(text: str) -> None:
    """The link rows' own escaping and quoting (cheaper than markupsafe's, for hundreds of
    rows) write what markupsafe and ``quote`` write."""
    assert escape_html(text) == str(escape(text))
    assert query_value(text) == quote(text, safe=":/")


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.10", False), ("example.com", False),
])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# -- in the browser ---------------------------------------------------------------------------------


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_summary_to_a_broken_links_source(viewer: Viewer, site: FixtureSite) -> None:
    async def browse(page: Page) -> None:
        await page.goto(viewer.url)
        assert page.url == viewer.url + "a/0/"
        assert await page.locator("h1").first.inner_text() == "Issues"
        statuses = data(viewer, "/a/0/")["summary"]["status_distribution"]
        assert await page.locator("svg.chart").first.locator("rect").count() == len(statuses)
        # depths 0 and 1, and the predicted pages no link reaches
        assert await page.locator(".chart-depth svg rect").count() == 3
        shot = await screenshot(page, "summary.png")
        await page.get_by_role("link", name="Pages", exact=True).click()
        assert await page.locator("h1").inner_text() == "Pages"
        await page.get_by_role("link", name=site.url("/viewer/"), exact=True).click()
        assert await page.locator("h1").inner_text() == "Viewer Top"
        # its links out: the broken one, 404, then the page it is, then back to its source
        row = page.locator("#links-out tr", has_text=site.url("/viewer/gone"))
        assert await row.locator(".status").inner_text() == "404"
        await row.get_by_role("link").click()
        assert await page.locator(".page-url").inner_text() == site.url("/viewer/gone")
        await page.locator("#links-in").get_by_role("link", name=site.url("/viewer/")).click()
        assert await page.locator("h1").inner_text() == "Viewer Top"
        # the Links view: broken links, each naming its source page
        await page.get_by_role("link", name="Links", exact=True).click()
        broken = page.locator("table.links tbody tr", has_text=site.url("/viewer/gone"))
        await broken.locator("td.source a").click()
        assert await page.locator(".page-url").inner_text() == site.url("/viewer/")
        detail = await screenshot(page, "page-detail.png")
        for path in (shot, detail):
            assert path.stat().st_size > 10_000  # a rendered page, not a blank image

    await in_browser(browse)


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_hostile_title_and_snapshot_run_nothing(viewer: Viewer, site: FixtureSite
                                                      ) -> None:
    violations: list[str] = []

    async def browse(page: Page) -> None:
        page.on("console", lambda message: violations.append(message.text))
        await page.goto(viewer.url + page_path(site.url("/viewer/hostile")).lstrip("/"))
        # the title is shown as text, whole: escaped, not parsed as a script element
        assert await page.locator("h1.page-title").inner_text() == HOSTILE_TITLE
        frame = page.frame_locator("iframe.snapshot")
        assert await frame.locator("h1").inner_text() == "Hostile snapshot"
        await page.wait_for_load_state("load")
        snapshot = next(f for f in page.frames if f.url.startswith(viewer.url + "a/0/snapshot"))
        assert await page.evaluate("document.documentElement.dataset.pwned") is None
        assert await snapshot.evaluate("document.documentElement.dataset.pwned") is None
        # the snapshot opened on its own is sandboxed by its CSP: nothing runs there either
        await page.goto(snapshot.url)
        assert await page.locator("h1").inner_text() == "Hostile snapshot"
        assert await page.evaluate("document.documentElement.dataset.pwned") is None
        await screenshot(page, "hostile-snapshot.png")

    await in_browser(browse)
    assert any("Content Security Policy" in text or "sandboxed" in text
               for text in violations), violations


# -- Duplicate Clusters and the trap log, over a capped crawl of the trap site ---------------------


@pytest.fixture(scope="module")
def traps() -> Iterator[TrapSite]:
    with TrapSite() as server:
        yield server


@pytest_twisted.async_fixture(scope="module")
async def trap_archive(traps: TrapSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    crawled = await crawl(tmp_path_factory.mktemp("viewer-traps"), [traps.url("/trap/")],
                          dedupe_cap=20, max_pages=400, fetch_external=False,
                          excludes=("/trap/date/**", "/trap/session", "/trap/plain/**"))
    crawled.conn.close()
    return crawled.path


@pytest.fixture(scope="module")
def trap_viewer(trap_archive: Path) -> Iterator[Viewer]:
    server = Viewer(str(trap_archive))
    yield server
    assert server.stop()[0] == 0


def test_trap_log_and_its_cluster(trap_viewer: Viewer, traps: TrapSite) -> None:
    events = trap_viewer.get("/a/0/traps?format=json").json()["events"]
    assert events["total"] == 1
    event = events["items"][0]
    assert (event["parent_path"], event["run_id"]) == ("/trap", 1)
    clusters = trap_viewer.get("/a/0/clusters?min=2&format=json").json()["clusters"]["items"]
    assert clusters[0]["signature"] == event["signature"]
    assert clusters[0]["og_url_mismatch"] is True
    pages = trap_viewer.get(f"/a/0/cluster?signature={event['signature']}&format=json").json()
    assert pages["cluster"]["total"] == clusters[0]["count"]
    assert [p["url"] for p in pages["cluster"]["items"]][:5] == clusters[0]["sample_pages"]
    # the default threshold (10) and one above the largest cluster
    assert trap_viewer.get("/a/0/clusters?format=json").json()["min"] == 10
    above = clusters[0]["count"] + 1
    assert trap_viewer.get(f"/a/0/clusters?min={above}&format=json").json()[
        "clusters"]["total"] == 0


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_duplicate_clusters_drill_down(trap_viewer: Viewer) -> None:
    async def browse(page: Page) -> None:
        await page.goto(trap_viewer.url + "a/0/")
        await page.get_by_role("link", name="Duplicate Clusters").click()
        await page.locator("input[name=min]").fill("2")
        await page.get_by_role("button", name="Show").click()
        assert "min=2" in page.url
        first = page.locator("table.clusters tbody tr").first
        assert await first.get_attribute("class") == "mismatch"  # og:url elsewhere first
        count = int((await first.locator("td").first.inner_text()).split()[0])
        await first.locator("td").first.get_by_role("link").click()
        assert await page.locator("table tbody tr").count() == min(count, 50)
        representative = page.locator("p").get_by_role("link").nth(1)
        url = await representative.inner_text()
        await representative.click()
        assert await page.locator(".page-url").inner_text() == url
        # the trap log links each firing to its cluster
        await page.get_by_role("link", name="Trap log").click()
        await page.locator("table.traps tbody tr").first.get_by_role("link").first.click()
        assert await page.locator("h1").inner_text() != "404 Not found"
        assert page.url.startswith(trap_viewer.url + "a/0/cluster?signature=")

    await in_browser(browse)


# -- analyzer findings ----------------------------------------------------------------------------


def test_violations_on_the_page_detail_and_by_page(archive: Path, tmp_path: Path,
                                                   site: FixtureSite) -> None:
    analysed = tmp_path / "analysed.nitpicker"
    shutil.copy(archive, analysed)
    conn = sqlite3.connect(analysed)
    migrate(conn)  # the analysis tables, as `nitpicker analyze` creates them
    page_id = conn.execute("SELECT id FROM pages WHERE url = ?",
                           (site.url("/viewer/hostile"),)).fetchone()[0]
    conn.executemany(
        "INSERT INTO violations (page_id, plugin, phase, validator, severity, rule, message, url,"
        " location) VALUES (?, 'markuplint', 'page', 'markuplint', ?, ?, ?, ?, ?)",
        [(page_id, "error", "no-inline-handler", "<img onerror> is <b>bad</b>",
          site.url("/viewer/hostile"), "12:3"),
         (page_id, "warning", "require-alt", "alt missing", site.url("/viewer/hostile"), None)])
    conn.commit()
    conn.close()
    reader = open_archive(analysed)
    try:
        mine = get_violations(reader, url=site.url("/viewer/hostile"))
        assert [v["rule"] for v in mine["items"]] == ["no-inline-handler", "require-alt"]
        assert get_violations(reader, url=site.url("/viewer/"))["total"] == 0
        assert get_violations(reader, url=site.url("/nowhere"))["total"] == 0
    finally:
        reader.close()
    server = Viewer(str(analysed))
    try:
        detail = server.get(page_path(site.url("/viewer/hostile")))
        assert 'id="violations"' in detail.text
        assert "&lt;img onerror&gt; is &lt;b&gt;bad&lt;/b&gt;" in detail.text
        assert data(server, page_path(site.url("/viewer/hostile")))["violations"]["total"] == 2
        assert 'id="violations"' not in server.get(page_path(site.url("/viewer/"))).text
        by_rule = data(server, "/a/0/violations?rule=require-alt")["violations"]["items"]
        assert [v["message"] for v in by_rule] == ["alt missing"]
        by_page = data(server, f"/a/0/violations?url={quote(site.url('/viewer/'), safe='')}")
        assert by_page["violations"]["total"] == 0
        summary = data(server, "/a/0/")
        assert summary["distributions"]["validator"] == [{"label": "markuplint", "count": 2}]
    finally:
        assert server.stop()[0] == 0


# -- a larger archive: paged page-detail lists, analysis values, the violations drill-down,
# -- and two archives compared ------------------------------------------------------------------

MANY = 120
"""Pages linking to /viewer/ (and linked from it) in the enriched archive: over two pages of
rows of each list."""

SHARED = 30
SHARED_TITLE = "Shared & <title>"
"""The title of the last SHARED of those pages: a duplicate with more pages than the Duplicates
view lists in its row."""

HOSTILE_NOTE = '<script>document.documentElement.dataset.pwned = "note"</script>'
EVIL_URL = 'http://evil.test/"><script>document.documentElement.dataset.pwned = "url"</script>'
EVIL_TEXT = '<img src=x onerror="document.documentElement.dataset.pwned = \'text\'">'
EVIL_SRC = 'http://evil.test/x.png"><script>document.documentElement.dataset.pwned = "src"</script>'
EVIL_ALT = '<svg onload="document.documentElement.dataset.pwned = \'alt\'">'
EVIL_RESOURCE = 'http://evil.test/s.css"><b>bold</b>'


@pytest.fixture(scope="module")
def enriched(archive: Path, site: FixtureSite, tmp_path_factory: pytest.TempPathFactory
             ) -> Path:
    """A copy of the crawled archive with many links to and from /viewer/, many images on it,
    analysis values and violations (as ``nitpicker analyze`` writes them)."""
    path = tmp_path_factory.mktemp("viewer-enriched") / "enriched.nitpicker"
    shutil.copy(archive, path)
    conn = sqlite3.connect(path)
    migrate(conn)
    top = conn.execute("SELECT id FROM pages WHERE url = ?", (site.url("/viewer/"),)).fetchone()[0]
    hostile = conn.execute("SELECT id FROM pages WHERE url = ?",
                           (site.url("/viewer/hostile"),)).fetchone()[0]
    with conn:
        evil = conn.execute(  # an external page whose URL and link texts are markup
            "INSERT INTO pages (url, scraped, is_external, status, content_type, title)"
            " VALUES (?, 1, 1, 200, 'text/html', 'Evil')", (EVIL_URL,)).lastrowid
        conn.execute("INSERT INTO anchors (page_id, href_id, text, hash) VALUES (?, ?, ?, ?)",
                     (evil, top, EVIL_TEXT, ""))
        conn.execute("INSERT INTO anchors (page_id, href_id, text, hash) VALUES (?, ?, ?, ?)",
                     (top, evil, EVIL_TEXT, '"><i>hash</i>'))
        conn.executemany(  # before the many: on the first page of the images
            "INSERT INTO images (page_id, src, alt, width, is_lazy) VALUES (?, ?, ?, ?, ?)",
            [(top, EVIL_SRC, EVIL_ALT, 0, 0), (top, EVIL_SRC + "/" + "a" * 300, None, 320.0, 1)])
        resource = conn.execute(
            "INSERT INTO resources (url, kind, status, content_type, content_length)"
            " VALUES (?, '<i>stylesheet</i>', 404, '<u>text/css</u>', 0)",
            (EVIL_RESOURCE,)).lastrowid
        conn.execute("INSERT INTO resource_referrers (resource_id, page_id) VALUES (?, ?)",
                     (resource, top))
        for n in range(MANY):
            page = conn.execute(
                "INSERT INTO pages (url, scraped, is_target, status, content_type, title, depth)"
                " VALUES (?, 1, 1, 200, 'text/html', ?, 2)",
                (site.url(f"/many/{n:03d}"),
                 SHARED_TITLE if n >= MANY - SHARED else f"Many {n:03d}")).lastrowid
            conn.execute("INSERT INTO anchors (page_id, href_id, text) VALUES (?, ?, ?)",
                         (page, top, f"in {n:03d}"))
            conn.execute("INSERT INTO anchors (page_id, href_id, text) VALUES (?, ?, ?)",
                         (top, page, f"out {n:03d}"))
            conn.execute("INSERT INTO images (page_id, src, alt) VALUES (?, ?, '')",
                         (top, site.url(f"/many/{n:03d}.png")))
            conn.execute(
                "INSERT INTO violations (page_id, plugin, phase, validator, severity, rule,"
                " message, url) VALUES (?, 'markuplint', 'page', 'markuplint', 'warning',"
                " 'require-alt', 'alt missing', ?)", (page, site.url(f"/many/{n:03d}")))
        conn.execute(
            "INSERT INTO violations (page_id, plugin, phase, validator, severity, rule, message,"
            " url, location) VALUES (?, 'markuplint', 'page', 'markuplint', 'error',"
            " 'no-inline-handler', ?, ?, '12:3')",
            (hostile, "<img onerror> is <b>bad</b>", site.url("/viewer/hostile")))
        conn.execute(
            "INSERT INTO analysis_runs (plugin, version, settings_hash, settings, headers, pid,"
            " started_at, ended_at, outcome) VALUES ('search', '1', '', '{}', ?, 1, '', '',"
            " 'finished')", ('{"words": "Word <b>count</b>", "lang": "Language"}',))
        conn.executemany(
            "INSERT INTO page_values (plugin, page_id, key, phase, value, note)"
            " VALUES ('search', ?, ?, 'page', ?, ?)",
            [(hostile, "lang", '"en"', None), (hostile, "words", "42", HOSTILE_NOTE)])
    conn.close()
    return path


@pytest.fixture(scope="module")
def two(archive: Path, enriched: Path) -> Iterator[Viewer]:
    """A viewer of the crawled archive (#0, OLD) and the enriched copy (#1, NEW)."""
    server = Viewer(str(archive), str(enriched))
    yield server
    code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err


def enriched_page(url: str, **params: int) -> str:
    extra = "".join(f"&{name}={value}" for name, value in params.items())
    return f"/a/1/page?url={quote(url, safe='')}{extra}"


def test_page_detail_lists_are_paged(two: Viewer, site: FixtureSite) -> None:
    first = data(two, enriched_page(site.url("/viewer/")))
    links_in = first["links_in"]
    assert links_in["total"] >= MANY and len(links_in["items"]) == 50
    assert first["images"]["total"] >= MANY and len(first["images"]["items"]) == 50
    last = (links_in["total"] - 1) // 50 + 1
    every = list(links_in["items"])
    for number in range(2, last + 1):
        page = data(two, enriched_page(site.url("/viewer/"), links_in=number))
        assert page["links_in"]["offset"] == (number - 1) * 50
        every += page["links_in"]["items"]
        # the other lists stay on their first page
        assert page["links_out"]["offset"] == 0 and page["images"]["offset"] == 0
    assert len(every) == links_in["total"]
    assert len({(link["url"], link["text"]) for link in every}) == links_in["total"]
    sources = [link["url"] for link in every if link["text"].startswith("in ")]
    assert sources == sorted(sources)  # by linking page
    out = data(two, enriched_page(site.url("/viewer/"), links_out=3))["links_out"]
    assert out["offset"] == 100 and out["items"]
    html = two.get(enriched_page(site.url("/viewer/"))).text
    assert html.count('<tr><td><a class="url"') < 250  # one page of rows a list, not all
    assert f'rel="next" href="/a/1/page?url={quote(site.url("/viewer/"), safe="")}' \
           '&amp;links_in=2#links-in"' in html
    beyond = data(two, enriched_page(site.url("/viewer/"), images=99))  # past the end: empty
    assert beyond["images"]["items"] == [] and beyond["images"]["total"] >= MANY
    assert two.get(enriched_page(site.url("/viewer/"), images=0)).status_code == 400


def test_page_detail_response_time(two: Viewer, archive: Path, site: FixtureSite) -> None:
    conn = open_archive(archive)
    detail = get_page_detail(conn, site.url("/viewer/"), link_limit=0)
    conn.close()
    assert detail is not None
    recorded = detail["response_time_ms"]
    assert isinstance(recorded, int)  # the crawl timed the page
    page = data(two, page_path(site.url("/viewer/")))["page"]
    assert page["response_time_ms"] == recorded
    html = two.get(page_path(site.url("/viewer/"))).text
    assert f"<tr><th>Response time</th><td>{recorded} ms</td></tr>" in html
    # the external page the enriched copy gained by hand: never fetched, so never timed
    assert data(two, enriched_page(EVIL_URL))["page"]["response_time_ms"] is None
    untimed = two.get(enriched_page(EVIL_URL)).text
    assert "<tr><th>Response time</th><td>—</td></tr>" in untimed


def test_link_rows_escape_crawled_strings(two: Viewer, site: FixtureSite) -> None:
    detail = data(two, enriched_page(site.url("/viewer/")))
    assert EVIL_TEXT in [link["text"] for link in detail["links_out"]["items"]]
    assert EVIL_URL in [link["url"] for link in detail["links_in"]["items"]]
    html = two.get(enriched_page(site.url("/viewer/"))).text
    assert "<script>" not in html and "<img src=x" not in html and "<i>hash" not in html
    assert html.count("&lt;img src=x onerror=&#34;document") == 2  # out and in
    assert f'href="/a/1/page?url={quote(EVIL_URL, safe=":/")}"' in html
    assert "#&#34;&gt;&lt;i&gt;hash&lt;/i&gt;" in html
    links = two.get("/a/1/links?type=external").text
    assert "<script>" not in links and "<img src=x" not in links


def section_of(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}">')
    return html[start:html.index("</section>", start)]


def test_image_and_resource_rows_escape_crawled_strings(two: Viewer, site: FixtureSite
                                                        ) -> None:
    html = two.get(enriched_page(site.url("/viewer/"))).text
    assert "<script>" not in html and "<svg" not in html and "<b>bold" not in html
    images = section_of(html, "images")
    shown = escape(EVIL_SRC)
    assert (f'<td>markup</td><td class="url">{shown}</td>\n<td>{escape(EVIL_ALT)}</td>\n'
            "<td>×</td><td>×</td><td></td></tr>") in images  # width 0: no size
    # the long src cut at 200 characters, an absent alt, a lazy image 320 wide
    cut = escape((EVIL_SRC + "/" + "a" * 300)[:199] + "…")
    assert (f'<td>markup</td><td class="url">{cut}</td>\n<td><em>absent</em></td>\n'
            "<td>320.0×</td><td>×</td><td>yes</td></tr>") in images
    resources = section_of(html, "resources")
    assert ('<tr><td><span class="status s4">404</span></td><td>&lt;i&gt;stylesheet&lt;/i&gt;'
            f'</td><td class="url">{escape(EVIL_RESOURCE)}</td><td>&lt;u&gt;text/css&lt;/u&gt;'
            "</td><td>0</td></tr>") in resources


def test_duplicates_drill_down_to_every_page(two: Viewer, site: FixtureSite) -> None:
    entry = next(d for d in data(two, "/a/1/duplicates")["duplicates"]["items"]
                 if d["value"] == SHARED_TITLE)
    assert entry["count"] == SHARED and len(entry["urls"]) == 20
    html = two.get("/a/1/duplicates").text
    every = f"/a/1/duplicates?field=title&amp;value={quote_plus(SHARED_TITLE)}"
    assert f'<a class="all" href="{every}">all {SHARED} pages →</a>' in html
    pages = data(two, "/a/1/duplicates?field=title&value=" + quote_plus(SHARED_TITLE))["pages"]
    assert pages["total"] == SHARED
    assert pages["items"] == [site.url(f"/many/{n:03d}") for n in range(MANY - SHARED, MANY)]
    beyond = data(two, "/a/1/duplicates?field=title&page=2&value=" + quote_plus(SHARED_TITLE))
    assert beyond["pages"] == {"items": [], "total": SHARED, "offset": 50, "limit": 50}
    assert "Shared &amp; &lt;title&gt;" in two.get(
        "/a/1/duplicates?field=title&value=" + quote_plus(SHARED_TITLE)).text


def test_summary_runs_are_paged(two: Viewer) -> None:
    runs = data(two, "/a/1/")["runs"]
    assert runs["limit"] == 50 and runs["offset"] == 0
    assert data(two, "/a/1/?runs=2")["runs"]["offset"] == 50


def test_page_detail_analysis_values(two: Viewer, site: FixtureSite) -> None:
    detail = data(two, enriched_page(site.url("/viewer/hostile")))
    assert detail["analysis"] == [
        {"plugin": "search", "key": "words", "header": "Word <b>count</b>", "value": 42,
         "note": HOSTILE_NOTE},
        {"plugin": "search", "key": "lang", "header": "Language", "value": "en", "note": None},
    ]
    html = two.get(enriched_page(site.url("/viewer/hostile"))).text
    assert 'id="analysis"' in html and "Word &lt;b&gt;count&lt;/b&gt;" in html
    assert "<script>document.documentElement.dataset.pwned = &#34;note&#34;" not in html
    assert "&lt;script&gt;document.documentElement.dataset.pwned" in html
    # an archive no analyzer opened: no values, no section
    assert data(two, page_path(site.url("/viewer/hostile")))["analysis"] == []
    assert 'id="analysis"' not in two.get(page_path(site.url("/viewer/hostile"))).text


def test_violations_drill_down_json(two: Viewer, site: FixtureSite) -> None:
    rules = data(two, "/a/1/violations")["rules"]
    assert rules["items"][0] == {"validator": "markuplint", "severity": "warning",
                                 "rule": "require-alt", "findings": MANY, "pages": MANY}
    pages = data(two, "/a/1/violations?validator=markuplint&rule=require-alt")["rule_pages"]
    assert pages["total"] == MANY and len(pages["items"]) == 50
    assert pages["items"][0] == {"url": site.url("/many/000"), "findings": 1}
    last = data(two, "/a/1/violations?validator=markuplint&rule=require-alt&page=3")
    assert [p["url"] for p in last["rule_pages"]["items"]][-1] == site.url(f"/many/{MANY - 1}")
    finding = data(two, "/a/1/violations?validator=markuplint&rule=no-inline-handler&url="
                   + quote(site.url("/viewer/hostile"), safe=""))["violations"]["items"]
    assert [(v["message"], v["location"]) for v in finding] == [
        ("<img onerror> is <b>bad</b>", "12:3")]
    assert data(two, "/a/0/violations")["rules"]["total"] == 0


def test_trap_log_records_the_score(trap_viewer: Viewer) -> None:
    event = trap_viewer.get("/a/0/traps?format=json").json()["events"]["items"][0]
    # the trap site's pages name their parent list in og:url: a trap signal, no legit one,
    # so the cap (20) fired at ceil(30 % of 20) pages
    assert (event["threshold"], event["trap_signals"], event["legit_signals"]) == (
        6, ["og:url elsewhere"], [])
    html = trap_viewer.get("/a/0/traps").text
    assert "threshold 6<br>+ og:url elsewhere" in html


def test_trap_log_of_an_archive_before_the_score(trap_archive: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.nitpicker"
    shutil.copy(trap_archive, old)
    conn = sqlite3.connect(old)
    with conn:
        for column in ("threshold", "trap_signals", "legit_signals"):
            conn.execute(f"ALTER TABLE trap_events DROP COLUMN {column}")
        conn.execute("DELETE FROM migrations WHERE name = '0016_trap_score'")
    conn.close()
    server = Viewer(str(old))
    try:
        event = data(server, "/a/0/traps")["events"]["items"][0]
        assert (event["threshold"], event["trap_signals"]) == (None, None)
        assert server.get("/a/0/traps").status_code == 200
    finally:
        assert server.stop()[0] == 0


def test_cluster_drill_down_remembers_the_title(trap_viewer: Viewer) -> None:
    clusters = data(trap_viewer, "/a/0/clusters?min=2")["clusters"]["items"]
    signature = clusters[0]["signature"]
    pages = data(trap_viewer, f"/a/0/cluster?signature={signature}")["cluster"]
    assert pages["total"] == clusters[0]["count"]
    assert {p["title"] for p in pages["items"]} == {
        clusters[0]["meta_signature_fields"]["title"]}


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/compare?old=0&new=0", 400, "Invalid new: 0. OLD and NEW must be two different archives"),
    ("/compare?old=2", 400, "Invalid old: 2. Must be between 0 and 1"),
    ("/compare?category=evil", 400, "Invalid category: 'evil'. Must be one of: "),
    ("/a/1/violations?page=0", 400, "Invalid page: 0. Must be between 1 and 184467440737095516"),
    ("/a/1/page?url=x&links_in=-1", 400,
     "Invalid links_in: -1. Must be between 1 and 184467440737095516"),
])
def test_two_archives_bad_requests(two: Viewer, path: str, status: int, message: str) -> None:
    answer = two.get(path, headers={"Accept": "application/json"})
    assert answer.status_code == status
    assert answer.json()["error"].startswith(message)
    assert "Traceback" not in two.get(path).text


def test_compare_json(two: Viewer, site: FixtureSite, archive: Path, enriched: Path) -> None:
    home = data(two, "/")
    assert home["compare"] == "/compare"
    diff = data(two, "/compare?old=0&new=1")
    assert (diff["diff"]["old"]["path"], diff["diff"]["new"]["path"]) == (str(archive),
                                                                          str(enriched))
    added = diff["diff"]["categories"]["pages_added"]
    assert added["count"] == MANY and len(added["items"]) == 10
    one = data(two, "/compare?old=0&new=1&category=pages_added&page=3")["rows"]
    assert one["total"] == MANY and one["offset"] == 100
    assert [item["url"] for item in one["items"]] == [site.url(f"/many/{n:03d}")
                                                      for n in range(100, MANY)]
    backwards = data(two, "/compare?old=1&new=0")["diff"]["categories"]
    assert backwards["pages_removed"]["count"] == MANY
    assert backwards["pages_added"]["count"] == 0


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_compare_pages_and_drill_downs_in_the_browser(two: Viewer, site: FixtureSite
                                                           ) -> None:
    async def browse(page: Page) -> None:
        await page.goto(two.url)
        await page.get_by_role("link", name="Compare two archives").click()
        assert await page.locator("h1").inner_text() == "Compare"
        row = page.locator("table.diff-summary tr", has_text="pages_added")
        assert await row.locator("td.count").inner_text() == str(MANY)
        await page.locator("select[name=old]").select_option("1")
        await page.locator("select[name=new]").select_option("0")
        await page.get_by_role("button", name="Compare").click()
        assert "old=1" in page.url and "new=0" in page.url
        removed = page.locator("table.diff-summary tr", has_text="pages_removed")
        assert await removed.locator("td.count").inner_text() == str(MANY)
        await removed.get_by_role("link").click()
        assert await page.locator("table.diff tbody tr").count() == 50
        await page.get_by_role("link", name="next →").first.click()
        assert "page=2" in page.url
        # a removed page's URL opens its detail in OLD (#1 here)
        await page.locator("table.diff tbody tr").first.locator("a").first.click()
        assert page.url.startswith(two.url + "a/1/page?url=")
        assert (await page.locator("h1").inner_text()).startswith("Many 05")
        await screenshot(page, "many-page-detail.png")
        # its page detail: the violations drill-down from a rule to the pages to the finding
        await page.goto(two.url + "a/1/violations")
        await page.get_by_role("link", name="require-alt").click()
        assert await page.locator("table.rule-pages tbody tr").count() == 50
        await page.get_by_role("link", name="next →").first.click()
        await page.locator("table.rule-pages tbody tr").first.locator("a.finding").click()
        assert "url=" in page.url
        assert await page.locator("table.violations tbody tr").count() == 1
        assert await page.locator("table.violations td").nth(4).inner_text() == "alt missing"
        # the links in of /viewer/, paged
        await page.goto(two.url + enriched_page(site.url("/viewer/")).lstrip("/"))
        links_in = page.locator("#links-in")
        assert await links_in.locator("tbody tr").count() == 50
        await links_in.get_by_role("link", name="next →").click()
        assert "links_in=2" in page.url
        assert await page.locator("#links-in tbody tr").count() == 50
        assert await page.locator("#links-out tbody tr").count() == 50
        await page.goto(two.url + "compare")
        shot = await screenshot(page, "compare.png", full_page=False)  # the manual's, kept small
        assert shot.stat().st_size > 10_000
        await page.goto(two.url + enriched_page(site.url("/viewer/hostile")).lstrip("/"))
        assert await page.locator("#analysis td.note").first.inner_text() == HOSTILE_NOTE
        assert await page.evaluate("document.documentElement.dataset.pwned") is None

    await in_browser(browse)


def test_cluster_pages_through_the_title_and_snapshot_existence(
        trap_archive: Path, archive: Path, site: FixtureSite) -> None:
    conn = open_archive(trap_archive)
    try:
        cluster = get_duplicate_clusters(conn, min_count=2, limit=1)["items"][0]
        signature, title = cluster["signature"], cluster["meta_signature_fields"]["title"]
        signed = list_cluster_pages(conn, signature, limit=1000)
        titled = list_cluster_pages(conn, signature, title=title, limit=1000)
        assert titled == signed and signed["total"] == cluster["count"]
        # the title filters before signing: a title that is not the cluster's finds nothing
        assert list_cluster_pages(conn, signature, title=title + " other")["total"] == 0
    finally:
        conn.close()
    conn = open_archive(archive)
    try:
        assert has_page_snapshot(conn, site.url("/viewer/hostile"))
        assert not has_page_snapshot(conn, site.url("/viewer/gone"))  # a 404: no snapshot
        assert not has_page_snapshot(conn, "http://nowhere.test/")
    finally:
        conn.close()
