"""Integration: crawl the fixture site in-process and check the archive rows (SPEC §11.3)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from fixtures.site import LARGE_PNG_BYTES, PNG_BYTES
from nitpicker.query import list_images, open_archive
from nitpicker.query.snapshot_encoding import decode
from nitpicker.render.chromium import find_chromium
from tests.helpers import crawl, run

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite

needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)",
)


@pytest_twisted.ensureDeferred
async def test_single_page_records_links_metadata_only(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/")], single=True)
    targets = archive.urls("is_target = 1")
    assert targets == {site.url("/")}
    root = archive.page(site.url("/"))
    assert (root["title"], root["status"], root["content_type"]) == ("Test Top", 200, "text/html")
    about = archive.page(site.url("/about"))
    assert about["is_target"] == 0
    assert about["content_type"] == "text/html"
    assert about["title"] == "About"  # the title from the first bytes


@pytest_twisted.ensureDeferred
async def test_recursive_crawl_follows_in_scope_and_checks_external(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/recursive/")])
    assert archive.internal_pages() == {
        site.url("/recursive/"),
        site.url("/recursive/page-a"),
        site.url("/recursive/page-b"),
        site.url("/recursive/page-c"),
    }
    assert archive.anchors_of(site.url("/recursive/")) == [
        site.url("/recursive/page-a"),
        site.url("/recursive/page-b"),
        site.url("/recursive/page-c"),
    ]
    external = archive.page(f"{site.external_url}/external-like")
    assert external["is_external"] == 1
    assert external["is_target"] == 0
    assert external["content_type"] == "text/html"
    assert external["title"] == "External Page"
    # metadata only: its links are not followed and no snapshot is kept
    assert archive.rows("SELECT count(*) AS n FROM anchors WHERE page_id = ?", external["id"])[0]["n"] == 0
    assert not archive.rows("SELECT 1 FROM snapshots WHERE page_id = ?", external["id"])


@pytest_twisted.ensureDeferred
async def test_no_recursive_fetches_only_the_root_fully(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/recursive/")], recursive=False)
    assert archive.urls("is_target = 1") == {site.url("/recursive/")}
    child = archive.page(site.url("/recursive/page-a"))
    assert (child["is_target"], child["status"], child["title"]) == (0, 200, "Page A")
    assert archive.page(site.url("/recursive/page-c"))["scraped"] == 1


@pytest_twisted.ensureDeferred
async def test_redirect_chain_rows_point_at_destination(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/redirect/")])
    dest = archive.page(site.url("/redirect/dest"))
    assert (dest["title"], dest["status"], dest["is_target"]) == ("Redirect Destination", 200, 1)
    start = archive.page(site.url("/redirect/start"))
    middle = archive.page(site.url("/redirect/middle"))
    assert start["redirect_dest_id"] == dest["id"]
    assert middle["redirect_dest_id"] == dest["id"]
    assert (start["status"], middle["status"]) == (301, 302)
    assert start["is_target"] == 0
    assert site.url("/redirect/start") in archive.anchors_of(site.url("/redirect/dest"))
    # the destination was fetched once, through the chain
    assert len(archive.rows("SELECT 1 FROM pages WHERE url = ?", site.url("/redirect/dest"))) == 1


@pytest_twisted.ensureDeferred
async def test_every_meta_field_is_recorded(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/meta/")])
    full = archive.page(site.url("/meta/full"))
    expected = {
        "title": "Full Meta Page",
        "lang": "ja",
        "description": "Test description",
        "keywords": "test,meta,nitpicker",
        "og_type": "website",
        "og_title": "OG Title",
        "og_site_name": "Test Site",
        "og_description": "OG Description",
        "og_url": site.url("/meta/full"),
        "twitter_card": "summary_large_image",
        "canonical": site.url("/meta/full"),
        "alternate": site.url("/meta/full-en"),
        "noindex": 0,
        "nofollow": 0,
    }
    assert {k: full[k] for k in expected} == expected
    assert "og-image.png" in full["og_image"]
    noindex = archive.page(site.url("/meta/robots-noindex"))
    assert (noindex["noindex"], noindex["nofollow"], noindex["noarchive"]) == (1, 1, 1)
    minimal = archive.page(site.url("/meta/minimal"))
    assert minimal["title"] == "Minimal Page"
    assert (minimal["description"], minimal["og_title"]) == ("", "")


@pytest_twisted.ensureDeferred
async def test_exclude_glob_records_a_skipped_row(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/exclude/")], excludes=("/exclude/secret/*",))
    hidden = archive.page(site.url("/exclude/secret/hidden"))
    assert (hidden["is_skipped"], hidden["skip_reason"], hidden["status"]) == (1, "excluded", None)
    assert site.url("/exclude/secret/hidden") not in archive.urls("is_target = 1")
    assert {site.url("/exclude/page-a"), site.url("/exclude/page-b")} <= archive.internal_pages()
    assert not [p for _, _, p in site.request_log if p.startswith("/exclude/secret")]


@pytest_twisted.ensureDeferred
async def test_exclude_keyword_skips_the_page(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/exclude/")], exclude_keywords=("FORBIDDEN_KEYWORD",))
    page_b = archive.page(site.url("/exclude/page-b"))
    assert page_b["is_skipped"] == 1
    assert page_b["is_target"] == 0
    assert page_b["content_type"] is None
    reason = json.loads(page_b["skip_reason"])
    assert reason["matchedText"] == "FORBIDDEN_KEYWORD"
    assert site.url("/exclude/page-b") not in archive.internal_pages()
    assert archive.page(site.url("/exclude/page-a"))["is_target"] == 1


@pytest_twisted.ensureDeferred
async def test_exclude_keyword_regex(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/exclude/")], exclude_keywords=("/forbidden_\\w+/i",))
    assert archive.page(site.url("/exclude/page-b"))["is_skipped"] == 1
    assert archive.page(site.url("/exclude/page-a"))["is_skipped"] == 0


@pytest_twisted.ensureDeferred
async def test_exclude_url_prefix_skips_external(site: FixtureSite, tmp_path: Path) -> None:
    prefix = f"{site.external_url}/exclude/external-a"
    from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS

    archive = await crawl(
        tmp_path, [site.url("/exclude/")], exclude_urls=(*DEFAULT_EXCLUDED_URLS, prefix)
    )
    external_a = archive.page(prefix)
    assert (external_a["is_skipped"], external_a["status"]) == (1, None)
    external_b = archive.page(f"{site.external_url}/exclude/external-b")
    assert (external_b["status"], external_b["title"], external_b["is_external"]) == (200, "External B", 1)
    config = json.loads(archive.rows("SELECT config FROM info")[0]["config"])
    assert prefix in config["exclude_urls"]
    assert "https://twitter.com" in config["exclude_urls"]


@pytest_twisted.ensureDeferred
async def test_no_fetch_external_records_unfetched_rows(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/options/")], fetch_external=False)
    external = archive.page(f"{site.external_url}/options/external")
    assert (external["status"], external["title"], external["is_external"]) == (None, "", 1)
    assert external["content_type"] is None
    assert archive.page(site.url("/options/page-a?tab=1"))["is_target"] == 1
    assert not [h for _, h, _ in site.request_log if h.startswith("127.0.0.1")]


@pytest_twisted.ensureDeferred
async def test_non_html_rows_and_bodies_not_downloaded(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/options/"), site.url("/files/")])
    internal_json = archive.page(site.url("/options/data.json"))
    external_json = archive.page(f"{site.external_url}/options/data.json")
    assert (internal_json["is_external"], internal_json["content_type"]) == (0, "application/json")
    assert (external_json["is_external"], external_json["content_type"]) == (1, "application/json")
    big = archive.page(site.url("/files/big.bin"))
    assert (big["status"], big["content_type"], big["content_length"]) == (
        200, "application/octet-stream", 5 * 1024 * 1024
    )
    pdf = archive.page(site.url("/files/report.pdf"))
    assert pdf["content_type"] == "application/pdf"
    # The body of the 5 MiB file was not downloaded past its headers.
    assert site.bytes_sent.get("/files/big.bin", 0) < 1024 * 1024
    assert not archive.rows("SELECT 1 FROM snapshots WHERE page_id IN (?, ?)", big["id"], pdf["id"])


@pytest_twisted.ensureDeferred
async def test_disable_queries_drops_query_strings(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/options/")], disable_queries=True)
    assert archive.page(site.url("/options/page-a"))["is_target"] == 1
    assert archive.page(site.url("/options/page-a?tab=1")) is None


@pytest_twisted.ensureDeferred
async def test_normalised_variants_are_one_url(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/norm/")])
    targets = archive.urls("url LIKE ?", "%/norm/target%")
    assert targets == {site.url("/norm/target?a=1&b=2")}
    fetched = [p for m, _, p in site.request_log if m == "GET" and "target" in p]
    assert len(fetched) == 1
    assert len(archive.anchors_of(site.url("/norm/"))) == 3


@pytest.mark.smoke
@pytest_twisted.ensureDeferred
async def test_error_statuses_and_fetch_errors(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/error-status/"), site.url("/errors/")])
    statuses = {
        path: archive.page(site.url(path))["status"]
        for path in ("/error-status/not-found", "/error-status/server-error",
                     "/error-status/forbidden", "/error-status/normal")
    }
    assert statuses == {"/error-status/not-found": 404, "/error-status/server-error": 500,
                        "/error-status/forbidden": 403, "/error-status/normal": 200}
    assert archive.page(site.url("/error-status/not-found"))["is_target"] == 1
    refused = archive.page("http://127.0.0.1:1/refused")
    assert refused["status"] == -1
    assert refused["status_text"].startswith("Connection refused")
    assert refused["is_external"] == 1
    reset = archive.page(site.url("/errors/reset"))
    assert reset["status"] == -1
    assert reset["status_text"].startswith("Connection reset")
    assert reset["is_external"] == 0


@pytest_twisted.ensureDeferred
async def test_scope_out_of_path_is_external(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/scope/blog/")])
    assert archive.internal_pages() == {
        site.url("/scope/blog/"), site.url("/scope/blog/post-1"), site.url("/scope/blog/post-2")
    }
    docs = archive.page(site.url("/scope/docs/"))
    assert (docs["is_external"], docs["is_target"], docs["title"]) == (1, 0, "Docs Top")
    assert archive.page(site.url("/scope/docs/api")) is None


@pytest_twisted.ensureDeferred
async def test_multi_root_crawl(site: FixtureSite, tmp_path: Path) -> None:
    roots = [site.url("/scope/blog/"), site.url("/scope/docs/")]
    archive = await crawl(tmp_path, roots)
    assert {
        site.url("/scope/blog/"), site.url("/scope/blog/post-1"),
        site.url("/scope/docs/"), site.url("/scope/docs/api"),
    } <= archive.internal_pages()
    assert archive.page(site.url("/scope/admin/")) is None
    info = archive.rows("SELECT roots, base_url FROM info")[0]
    assert json.loads(info["roots"]) == roots
    assert info["base_url"] == roots[0]


@pytest_twisted.ensureDeferred
async def test_robots_txt_blocks_and_is_fetched_once(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/robots-test/"), site.url("/private/")])
    private = archive.page(site.url("/private/"))
    assert (private["is_skipped"], private["skip_reason"]) == (1, "blocked by robots.txt")
    assert private["status"] is None
    assert archive.page(site.url("/robots-test/allowed"))["status"] == 200
    assert [p for _, h, p in site.request_log if p == "/robots.txt" and h.startswith("localhost")] == ["/robots.txt"]
    assert not [p for _, _, p in site.request_log if p.startswith("/private")]


@pytest_twisted.ensureDeferred
async def test_ignore_robots_fetches_blocked_pages(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/robots-test/"), site.url("/private/")],
                          ignore_robots=True, user_agent="NitpickerTestBot/1.0")
    assert archive.page(site.url("/private/"))["title"] == "Private"
    config = json.loads(archive.rows("SELECT config FROM info")[0]["config"])
    assert (config["user_agent"], config["ignore_robots"]) == ("NitpickerTestBot/1.0", True)


@pytest_twisted.ensureDeferred
async def test_pagination_and_breadth_first_order(site: FixtureSite, tmp_path: Path) -> None:
    # Link depth: a predicted page is queued at the depth of its page's links (see
    # tests/test_pagination_crawl.py for the same crawl with prediction).
    archive = await crawl(tmp_path, [site.url("/pagination/")], parallels=5,
                          predict_pagination=False)
    pages = archive.internal_pages()
    assert {site.url(f"/pagination/page/{n}") for n in range(1, 11)} <= pages
    assert archive.page(site.url("/pagination/page/11")) is None
    depths = {r["url"]: r["depth"] for r in archive.rows("SELECT url, depth FROM pages")}
    assert depths[site.url("/pagination/page/3")] == 3
    order = [r["url"] for r in archive.rows('SELECT url FROM pages WHERE "order" IS NOT NULL ORDER BY "order"')]
    assert order.index(site.url("/pagination/page/2")) < order.index(site.url("/pagination/page/10"))


@pytest_twisted.ensureDeferred
async def test_list_mode_fetches_listed_urls_fully(site: FixtureSite, tmp_path: Path) -> None:
    listed = [site.url("/list/a"), site.url("/list/b")]
    archive = await crawl(tmp_path, listed, list_mode=True, recursive=False)
    assert archive.urls("is_target = 1") == set(listed)
    d = archive.page(site.url("/list/d"))
    assert (d["is_target"], d["title"]) == (0, "List D")
    assert archive.page(site.url("/list/c")) is None
    assert archive.rows("SELECT from_list FROM info")[0]["from_list"] == 1


@pytest_twisted.ensureDeferred
async def test_max_pages_stops_cleanly_and_leaves_frontier(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/deep/")], max_pages=5, parallels=1)
    assert len(archive.urls("scraped = 1 AND status IS NOT NULL")) == 5
    pending = archive.rows("SELECT count(*) AS n FROM frontier WHERE state < 2")[0]["n"]
    assert pending >= 1
    run = archive.rows("SELECT status, stop_reason, pages_done FROM runs")[0]
    assert (run["status"], run["pages_done"]) == ("stopped", 5)


def test_the_declared_charset_of_each_page_through_the_cli(site: FixtureSite,
                                                          tmp_path: Path) -> None:
    """pages.charset: the Content-Type header's (Shift_JIS on /charset/), else the markup's
    <meta charset> (/charset/meta, served as text/html alone); query pages and page-detail
    show it."""
    result = run("crawl", site.url("/charset/"), "-o", "cs", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pages = json.loads(run("query", "cs.nitpicker", "pages", cwd=tmp_path).stdout)
    assert {item["url"]: item["charset"] for item in pages["items"]} == {
        site.url("/charset/"): "shift_jis", site.url("/charset/meta"): "euc-jp"}
    detail = json.loads(run("query", "cs.nitpicker", "page-detail", "--url",
                            site.url("/charset/meta"), cwd=tmp_path).stdout)
    assert detail["charset"] == "euc-jp"


@pytest_twisted.ensureDeferred
async def test_charsets_are_decoded(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/charset/")])
    assert archive.page(site.url("/charset/"))["title"] == "日本語のページ"
    assert archive.page(site.url("/charset/meta"))["title"] == "メタ文字コード"


@pytest_twisted.ensureDeferred
async def test_snapshot_headers_and_resources(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/meta/")], parallels=3, interval=20)
    full = archive.page(site.url("/meta/full"))
    snap = archive.rows("SELECT encoding, html FROM snapshots WHERE page_id = ?", full["id"])[0]
    assert snap["encoding"] == "zstd"
    assert "<title>Full Meta Page</title>" in decode(snap["encoding"], snap["html"]).decode()
    headers = {r["name"]: r["value"] for r in archive.rows(
        "SELECT name, value FROM response_headers WHERE page_id = ?", full["id"])}
    assert headers["content-type"].startswith("text/html")
    run = archive.rows("SELECT status, stop_reason FROM runs")[0]
    assert (run["status"], run["stop_reason"]) == ("finished", "finished")
    assert archive.rows("PRAGMA journal_mode")[0][0] == "delete"


@pytest_twisted.ensureDeferred
async def test_timeout_and_tls_errors_are_recorded(site: FixtureSite, tmp_path: Path) -> None:
    site.delay = 3.0
    try:
        archive = await crawl(
            tmp_path,
            [site.url("/wide/p/1"), site.url("/meta/minimal").replace("http://", "https://")],
            list_mode=True, recursive=False, settings={"DOWNLOAD_TIMEOUT": 1},
        )
    finally:
        site.delay = 0.0
    slow = archive.page(site.url("/wide/p/1"))
    assert slow["status"] == -1
    assert slow["status_text"].startswith("Timeout")
    tls = archive.page(site.url("/meta/minimal").replace("http://", "https://"))
    assert tls["status"] == -1
    assert tls["status_text"].startswith("TLS error"), tls["status_text"]


@pytest_twisted.ensureDeferred
async def test_images_from_markup_and_no_image(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/")], single=True)
    images = archive.rows(
        "SELECT alt, width, height, is_lazy, viewport_width FROM images i"
        " JOIN pages p ON p.id = i.page_id WHERE p.url = ? ORDER BY i.id", site.url("/"))
    assert [tuple(r) for r in images] == [("test image", 100.0, 100.0, 0, None),
                                          ("lazy image", 200.0, 150.0, 1, None)]
    without = await crawl(tmp_path, [site.url("/")], single=True, image=False)
    assert without.rows("SELECT count(*) AS n FROM images")[0]["n"] == 0


@pytest_twisted.ensureDeferred
async def test_a_redirecting_root_brings_its_destination_into_scope(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/moved/")])
    ext = site.external_url
    moved = archive.page(site.url("/moved/"))
    dest = archive.page(f"{ext}/recursive/")
    assert moved["redirect_dest_id"] == dest["id"]
    assert (dest["is_external"], dest["is_target"], dest["title"]) == (0, 1, "Recursive Top")
    # the crawl did not dead-end: the destination's section was crawled
    assert archive.page(f"{ext}/recursive/page-c")["title"] == "Page C"
    roots = json.loads(archive.rows("SELECT roots FROM info")[0]["roots"])
    assert roots == [site.url("/moved/"), f"{ext}/recursive/"]


@pytest_twisted.ensureDeferred
async def test_storage_guards_cap_links_and_refuse_overlong_urls(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/guards/many-links"), site.url("/guards/long-url")],
                          list_mode=True, recursive=False, fetch_external=False)
    many = archive.page(site.url("/guards/many-links"))
    assert many["links_capped"] == 1
    assert archive.rows("SELECT count(*) AS n FROM anchors WHERE page_id = ?",
                        many["id"])[0]["n"] == 10_000
    long_page = archive.page(site.url("/guards/long-url"))
    assert long_page["links_capped"] == 0
    too_long = archive.rows("SELECT * FROM pages WHERE url LIKE '%#too-long-%'")
    assert len(too_long) == 1
    row = too_long[0]
    assert (row["status"], row["skip_reason"]) == (-1, "url too long")
    expected_length = len(site.url("/guards/target/")) + 9000
    assert f"{expected_length} characters" in row["status_text"]
    run = archive.rows("SELECT status, error_code FROM runs")[0]
    assert (run["status"], run["error_code"]) == ("finished", None)


@pytest.mark.parametrize("render", [False, pytest.param(True, marks=needs_chromium)])
@pytest_twisted.ensureDeferred
async def test_metadata_urls_are_stored_resolved(
    site: FixtureSite, tmp_path: Path, render: bool
) -> None:
    """Relative, root-relative and absolute canonical / alternate / og:url / og:image, and the
    same under a ``<base href>``, on a crawled page and on a metadata-only one."""
    archive = await crawl(tmp_path, [site.url("/meta/relative")], single=True, render=render)
    columns = ("is_target", "canonical", "alternate", "og_url", "og_image")
    relative = archive.page(site.url("/meta/relative"))
    assert {c: relative[c] for c in columns} == {
        "is_target": 1,
        "canonical": site.url("/meta/relative"),
        "alternate": site.url("/en/meta/relative"),
        "og_url": site.url("/meta/relative"),
        "og_image": site.url("/img/og.png"),
    }
    based = archive.page(site.url("/meta/based"))  # metadata-only: a link of a --single root
    assert {c: based[c] for c in columns} == {
        "is_target": 0,
        "canonical": site.url("/meta/deeper/page"),
        "alternate": site.url("/meta/en/"),
        "og_url": site.url("/meta/deeper/?lang=en"),
        "og_image": f"{site.external_url}/og.png",
    }


@pytest.mark.parametrize("render", [False, pytest.param(True, marks=needs_chromium)])
@pytest_twisted.ensureDeferred
async def test_one_request_per_resource(site: FixtureSite, tmp_path: Path, render: bool) -> None:
    """An image the page shows and links to is requested once: rendered, the browser's
    response answers the link check; with --no-render the link check is the one request."""
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/resources/")], render=render)
    hits: dict[tuple[str, str], int] = {}
    for _method, host, target in site.request_log:
        if target.startswith("/resources/") and target.endswith(".png"):
            hits[host.split(":")[0], target] = hits.get((host.split(":")[0], target), 0) + 1
    shown = 1 if render else 0  # with --no-render nothing loads an image that is not linked
    assert hits == {
        ("localhost", "/resources/photo.png"): 1,
        ("127.0.0.1", "/resources/photo.png"): 1,
        ("localhost", "/resources/unshown.png"): 1,
        **({("localhost", "/resources/large.png"): shown} if shown else {}),
    }
    columns = ("scraped", "status", "status_text", "content_type", "content_length",
               "is_target", "is_external", "title")
    linked = {
        url: {c: archive.page(url)[c] for c in columns}
        for url in (site.url("/resources/photo.png"), f"{site.external_url}/resources/photo.png",
                    site.url("/resources/unshown.png"))
    }
    png = {"scraped": 1, "status": 200, "status_text": "OK", "content_type": "image/png",
           "content_length": len(PNG_BYTES), "title": ""}
    assert linked == {
        site.url("/resources/photo.png"): {**png, "is_target": 1, "is_external": 0},
        f"{site.external_url}/resources/photo.png": {**png, "is_target": 0, "is_external": 1},
        site.url("/resources/unshown.png"): {**png, "is_target": 1, "is_external": 0},
    }
    header = archive.rows(
        "SELECT h.value FROM response_headers h JOIN pages p ON p.id = h.page_id"
        " WHERE p.url = ? AND h.name = 'content-type'", site.url("/resources/photo.png"))
    assert [r["value"] for r in header] == ["image/png"]
    # a page shown in a frame and linked is crawled as a page, not answered by the frame
    frame = archive.page(site.url("/resources/frame"))
    assert (frame["is_target"], frame["title"]) == (1, "Framed Page")
    assert not archive.rows("SELECT 1 FROM frontier WHERE state != 2")


@pytest.mark.parametrize("render", [False, pytest.param(True, marks=needs_chromium)])
@pytest_twisted.ensureDeferred
async def test_image_file_size_threshold_lists_oversized_images(
    site: FixtureSite, tmp_path: Path, render: bool
) -> None:
    """Rendered, every image the page loaded has its file size; with --no-render only the
    images the crawl fetched as links do. ``images --oversized`` lists those above the
    crawl's threshold."""
    archive = await crawl(tmp_path, [site.url("/resources/")], render=render,
                          image_file_size_threshold=len(PNG_BYTES), max_excluded_depth=4)
    config = json.loads(archive.rows("SELECT config FROM info")[0]["config"])
    assert (config["image_file_size_threshold"], config["max_excluded_depth"]) == (
        len(PNG_BYTES), 4)
    conn = open_archive(archive.path)
    try:
        oversized = list_images(conn, oversized=True)["items"]
        sizes = {(i["src"], i["viewport_width"]): i["file_size"] for i in list_images(conn)["items"]}
    finally:
        conn.close()
    photo, elsewhere = site.url("/resources/photo.png"), f"{site.external_url}/resources/photo.png"
    large = site.url("/resources/large.png")
    if render:  # each image at both device presets
        expected = {(src, width): size for width in (1280, 320) for src, size in (
            (photo, len(PNG_BYTES)), (elsewhere, len(PNG_BYTES)), (large, len(LARGE_PNG_BYTES)))}
    else:  # from the markup: the linked images were fetched, the large one was not
        expected = {(photo, None): len(PNG_BYTES), (elsewhere, None): len(PNG_BYTES),
                    (large, None): None}
    assert sizes == expected
    # above the threshold, not at it
    assert [(i["src"], i["file_size"]) for i in oversized] == (
        [(large, len(LARGE_PNG_BYTES))] * 2 if render else [])
