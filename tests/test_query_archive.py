"""nitpicker.query on hand-built archives: facts a fixture crawl cannot produce over HTTP
(security headers, natural image sizes, resource types, analyzer violations, a redirect that
ends in a 404), archives written before the query indexes, and the query plans."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.archive.schema import MIGRATIONS, migrate
from nitpicker.query import (
    check_headers,
    find_duplicates,
    find_mismatches,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_resource_referrers,
    get_summary,
    get_violations,
    list_broken_links,
    list_console_messages,
    list_crawl_runs,
    list_external_links,
    list_images,
    list_json_ld,
    list_orphaned_pages,
    list_pages,
    list_resources,
    open_archive,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from nitpicker.query import PageDetail

BASE = "https://site.example"

_PAGE_DEFAULTS: dict[str, Any] = {
    "scraped": 1, "is_target": 1, "is_external": 0, "status": 200, "content_type": "text/html",
    "title": "", "description": "", "og_title": "", "og_url": "", "og_type": "",
    "redirect_dest_id": None,
}


class Builder:
    """Writes rows straight into a migrated archive."""

    def __init__(self, path: Path, migrations: str = "all") -> None:
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        if migrations == "all":
            migrate(self.conn)
        else:  # an archive written before 0002_query_indexes
            self.conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
            for statement in MIGRATIONS[0][1].split(";\n"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.execute("INSERT INTO migrations VALUES ('0001_initial', 'x')")
        self.conn.execute(
            "INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
            " VALUES (1, 'test', 'test', ?, ?, '{}', 'x')", (f"{BASE}/", f'["{BASE}/"]'))

    def page(self, path: str, **columns: Any) -> int:
        values = {**_PAGE_DEFAULTS, "url": path if "://" in path else BASE + path, **columns}
        names = ", ".join(values)
        marks = ", ".join("?" * len(values))
        cursor = self.conn.execute(f"INSERT INTO pages({names}) VALUES ({marks})",
                                   list(values.values()))
        return int(cursor.lastrowid or 0)

    def link(self, page_id: int, href_id: int, text: str = "") -> None:
        self.conn.execute("INSERT INTO anchors(page_id, href_id, text) VALUES (?, ?, ?)",
                          (page_id, href_id, text))

    def header(self, page_id: int, name: str, value: str = "x") -> None:
        self.conn.execute("INSERT INTO response_headers(page_id, name, value) VALUES (?, ?, ?)",
                          (page_id, name, value))

    def close(self) -> sqlite3.Connection:
        self.conn.close()
        return open_archive(self.path)


@pytest.fixture
def build(tmp_path: Path) -> Iterator[Callable[..., Builder]]:
    opened: list[sqlite3.Connection] = []

    def make(migrations: str = "all") -> Builder:
        builder = Builder(tmp_path / f"a{len(opened)}.nitpicker", migrations)
        opened.append(builder.conn)
        return builder

    yield make
    for conn in opened:
        conn.close()


def test_missing_headers_are_filtered_before_paging(build: Callable[..., Builder]) -> None:
    archive = build()
    full = archive.page("/a")
    for name in ("Content-Security-Policy", "X-Frame-Options", "x-content-type-options",
                 "STRICT-TRANSPORT-SECURITY"):
        archive.header(full, name)
    no_hsts = archive.page("/b")
    for name in ("content-security-policy", "x-frame-options", "x-content-type-options"):
        archive.header(no_hsts, name)
    archive.page("/c")
    also_full = archive.page("/d")
    for name in ("content-security-policy", "x-frame-options", "x-content-type-options",
                 "strict-transport-security"):
        archive.header(also_full, name)
    csp_only = archive.page("/e")
    archive.header(csp_only, "Content-Security-Policy")
    archive.header(csp_only, "content-security-policy")  # sent twice
    conn = archive.close()

    every = check_headers(conn)
    assert every["total"] == 5
    assert every["items"][0] == {"url": f"{BASE}/a", "has_csp": True, "has_x_frame_options": True,
                                 "has_x_content_type_options": True, "has_hsts": True}
    missing = check_headers(conn, missing_only=True)
    assert [i["url"] for i in missing["items"]] == [f"{BASE}/b", f"{BASE}/c", f"{BASE}/e"]
    assert missing["total"] == 3
    assert missing["items"][0]["has_hsts"] is False and missing["items"][0]["has_csp"] is True
    assert missing["items"][2] == {"url": f"{BASE}/e", "has_csp": True,
                                   "has_x_frame_options": False,
                                   "has_x_content_type_options": False, "has_hsts": False}
    # SPEC §12 Q12: a page of results is full and total counts the matches, not all pages
    first = check_headers(conn, missing_only=True, limit=2)
    assert ([i["url"] for i in first["items"]], first["total"]) == ([f"{BASE}/b", f"{BASE}/c"], 3)
    rest = check_headers(conn, missing_only=True, limit=2, offset=2)
    assert ([i["url"] for i in rest["items"]], rest["total"]) == ([f"{BASE}/e"], 3)
    assert check_headers(conn, missing_only=True, offset=5) == {"items": [], "total": 3,
                                                                "offset": 5, "limit": 100}


def test_oversized_image_files_exceed_the_crawls_threshold(build: Callable[..., Builder]) -> None:
    """``images --oversized``: file sizes above the crawl's --image-file-size-threshold; the
    size as the browser loaded the image for the page, else as a resource a browser loaded
    (shown from its cache on later pages), else as the crawl fetched its URL as a link."""
    archive = build()
    archive.conn.execute("UPDATE info SET config = ?",
                         ('{"image_file_size_threshold": 1000}',))
    page = archive.page("/gallery")
    archive.page("/linked.jpg", is_target=1, content_type="image/jpeg", content_length=5000)
    archive.page("/gone.jpg", status=404, content_type="text/html", content_length=9000)
    archive.conn.execute("INSERT INTO resources(url, kind, status, content_length) VALUES"
                         " (?, 'image', 200, 3000), (?, 'image', -1, NULL)",
                         (f"{BASE}/cached.jpg", f"{BASE}/failed.jpg"))
    for src, size in (("big", 1001), ("edge", 1000), ("small", 10), ("unknown", None),
                      ("linked", None), ("gone", None), ("cached", None), ("failed", None)):
        archive.conn.execute(
            "INSERT INTO images(page_id, src, alt, file_size) VALUES (?, ?, 'x', ?)",
            (page, f"{BASE}/{src}.jpg", size))
    conn = archive.close()
    found = list_images(conn, oversized=True)
    assert [(i["src"].rsplit("/", 1)[1], i["file_size"]) for i in found["items"]] == [
        ("big.jpg", 1001), ("linked.jpg", 5000), ("cached.jpg", 3000)]
    assert found["total"] == 3
    sizes = {i["src"].rsplit("/", 1)[1]: i["file_size"] for i in list_images(conn)["items"]}
    assert sizes == {"big.jpg": 1001, "edge.jpg": 1000, "small.jpg": 10, "unknown.jpg": None,
                     "linked.jpg": 5000, "gone.jpg": None, "cached.jpg": 3000,
                     "failed.jpg": None}


def test_oversized_needs_a_crawl_threshold(build: Callable[..., Builder]) -> None:
    conn = build().close()  # its config: {}
    with pytest.raises(ValueError, match=re.escape(
            "oversized: this archive's crawl set no image file size threshold (crawl with "
            "--image-file-size-threshold BYTES)")):
        list_images(conn, oversized=True)


def test_images_of_an_archive_without_file_sizes(build: Callable[..., Builder]) -> None:
    """Written before 0009_image_size: no file_size column; readers never migrate."""
    archive = build(migrations="0001")
    archive.conn.execute("UPDATE info SET config = ?", ('{"image_file_size_threshold": 1}',))
    page = archive.page("/gallery")
    archive.page("/linked.jpg", content_type="image/jpeg", content_length=50)
    for src in ("linked", "alone"):
        archive.conn.execute("INSERT INTO images(page_id, src, alt) VALUES (?, ?, 'x')",
                             (page, f"{BASE}/{src}.jpg"))
    conn = archive.close()
    assert [(i["src"].rsplit("/", 1)[1], i["file_size"]) for i in list_images(conn)["items"]] == [
        ("linked.jpg", 50), ("alone.jpg", None)]
    assert list_images(conn, oversized=True)["total"] == 1


def test_oversized_images_use_natural_sizes(build: Callable[..., Builder]) -> None:
    archive = build()
    page = archive.page("/gallery")
    for src, natural in (("wide", (4000, 100)), ("tall", (100, 3000)), ("fine", (800, 600))):
        archive.conn.execute(
            "INSERT INTO images(page_id, src, alt, width, height, natural_width, natural_height,"
            " viewport_width, is_lazy) VALUES (?, ?, 'x', 400, 300, ?, ?, 1280, 1)",
            (page, f"{BASE}/{src}.jpg", *natural))
    conn = archive.close()

    def oversized(threshold: int) -> list[str]:
        items = list_images(conn, oversized_threshold=threshold)["items"]
        return [i["src"].rsplit("/", 1)[1] for i in items]

    assert oversized(2000) == ["wide.jpg", "tall.jpg"]
    assert oversized(800) == ["wide.jpg", "tall.jpg"]
    assert oversized(799) == ["wide.jpg", "tall.jpg", "fine.jpg"]
    item = list_images(conn, oversized_threshold=3500)["items"][0]
    assert (item["natural_width"], item["viewport_width"], item["is_lazy"]) == (4000, 1280, True)
    with pytest.raises(ValueError, match="Invalid oversized threshold: -1"):
        list_images(conn, oversized_threshold=-1)


def test_resources_by_content_type_prefix(build: Callable[..., Builder]) -> None:
    archive = build()
    page = archive.page("/")
    rows = [("/a.css", "stylesheet", "text/css", 0, "gzip"), ("/b.js", "script",
            "text/javascript", 0, ""), ("/c.png", "image", "image/png", 0, None),
            ("https://cdn.example/d.css", "stylesheet", "text/css", 1, "br")]
    for url, kind, content_type, external, compress in rows:
        resource = archive.conn.execute(
            "INSERT INTO resources(url, kind, is_external, status, content_type, compress)"
            " VALUES (?, ?, ?, 200, ?, ?)",
            (url if "://" in url else BASE + url, kind, external, content_type, compress)).lastrowid
        archive.conn.execute("INSERT INTO resource_referrers VALUES (?, ?)", (resource, page))
    conn = archive.close()

    def urls(**filters: Any) -> list[str]:
        return [i["url"].rsplit("/", 1)[1] for i in list_resources(conn, **filters)["items"]]

    assert urls(content_type="text/") == ["d.css", "a.css", "b.js"]
    assert urls(content_type="text/css") == ["d.css", "a.css"]
    assert urls(content_type="text/css", is_external=False) == ["a.css"]
    assert urls(content_type="image/") == ["c.png"]
    assert urls(content_type="text_") == []  # a literal underscore, not a wildcard
    css = list_resources(conn, content_type="text/css")["items"][1]
    assert (css["status"], css["compress"], css["cdn"], css["kind"]) == (200, "gzip", None,
                                                                        "stylesheet")
    assert list_resources(conn, content_type="text/javascript")["items"][0]["compress"] is None
    referrers = get_resource_referrers(conn, f"{BASE}/a.css")
    assert referrers is not None and referrers["page_urls"] == [f"{BASE}/"]


def test_violations_when_an_analyzer_wrote_them(build: Callable[..., Builder]) -> None:
    archive = build()
    a, b = archive.page("/a"), archive.page("/b")
    archive.conn.executemany(
        "INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, message, code,"
        " url, location) VALUES (?, ?, 'page', ?, ?, ?, ?, ?, ?, ?)",
        [(b, "axe", "axe", "error", "image-alt", "Images must have alt text", "<img>",
          f"{BASE}/b", None),
         (a, "markuplint", "markuplint", "warning", "attr-duplication", "Duplicated attribute",
          "", f"{BASE}/a", "3:7"),
         (a, "axe", "axe", "error", "color-contrast", "Low contrast", "<p>", f"{BASE}/a", None)])
    conn = archive.close()
    every = get_violations(conn)
    assert [(i["url"], i["rule"]) for i in every["items"]] == [
        (f"{BASE}/a", "attr-duplication"), (f"{BASE}/a", "color-contrast"),
        (f"{BASE}/b", "image-alt")]
    assert every["items"][0]["location"] == "3:7"
    axe = get_violations(conn, validator="axe", severity="error")
    assert [i["rule"] for i in axe["items"]] == ["color-contrast", "image-alt"]
    assert axe["total"] == 2
    assert get_violations(conn, rule="image-alt")["items"][0] == {
        "url": f"{BASE}/b", "validator": "axe", "severity": "error", "rule": "image-alt",
        "message": "Images must have alt text", "code": "<img>", "location": None,
        "status": "violation", "impact": None, "tags": [], "help_url": None, "element": None,
        "summary": None}
    assert get_violations(conn, validator="axe", limit=1, offset=1)["items"][0]["rule"] == (
        "image-alt")


def test_a_link_that_redirects_to_an_error_is_broken(build: Callable[..., Builder]) -> None:
    archive = build()
    home = archive.page("/")
    gone = archive.page("/gone", status=404, status_text="Not Found")
    moved = archive.page("/moved", status=301, content_type=None, redirect_dest_id=gone,
                         is_target=0)
    removed = archive.page("/removed", status=410, status_text="Gone")
    never = archive.page("https://other.example/x", status=None, is_external=1, is_target=0,
                         content_type=None)
    fine = archive.page("/fine")
    for target in (moved, removed, never, fine):
        archive.link(home, target, "link")
    conn = archive.close()
    broken = list_broken_links(conn)
    assert [(i["dest_url"], i["final_url"], i["status"], i["status_text"])
            for i in broken["items"]] == [
        (f"{BASE}/moved", f"{BASE}/gone", 404, "Not Found"),
        (f"{BASE}/removed", None, 410, "Gone"),
    ]
    assert broken["total"] == 2  # /gone itself has no link; never fetched is not broken
    external = list_external_links(conn)
    assert [(i["dest_url"], i["status"]) for i in external["items"]] == [
        ("https://other.example/x", None)]
    assert [i["url"] for i in list_orphaned_pages(conn)["items"]] == [f"{BASE}/"]
    # /gone is reached through /moved: not an orphan, and the link shows in its detail
    detail = get_page_detail(conn, f"{BASE}/gone")
    assert detail is not None
    assert detail["inbound_links"] == [{"url": f"{BASE}/", "text": "link",
                                        "through": f"{BASE}/moved"}]


def test_clusters_with_a_trap_signal_come_first(build: Callable[..., Builder]) -> None:
    archive = build()
    for n in range(5):  # a same-template section whose og:url is empty: no trap signal
        archive.page(f"/colors/{n}", title="Shirt", description="A shirt", og_type="product")
    for n in range(3):  # og:url names the listing: a trap signal
        archive.page(f"/list/date/{n}/", title="List", description="All", og_title="List",
                     og_url=f"{BASE}/list/")
    archive.page("/other/1", title="Shirt", description="A shirt", og_type="product")
    conn = archive.close()
    clusters = get_duplicate_clusters(conn, min_count=3, sample=0)["items"]
    assert [(c["parent_path"], c["count"], c["og_url_mismatch"], c["sample_pages"])
            for c in clusters] == [("/list/date", 3, True, []), ("/colors", 5, False, [])]
    with pytest.raises(ValueError, match="Invalid min count: 0"):
        get_duplicate_clusters(conn, min_count=0)


def _every_query(conn: sqlite3.Connection) -> list[Callable[[], object]]:
    url = f"{BASE}/"
    return [
        lambda: get_summary(conn), lambda: list_pages(conn, sort_by="title"),
        lambda: list_pages(conn, directory="/a/", status_min=200),
        lambda: get_page_detail(conn, url), lambda: get_page_html(conn, url),
        lambda: list_broken_links(conn), lambda: list_external_links(conn),
        lambda: list_orphaned_pages(conn), lambda: list_resources(conn),
        lambda: get_resource_referrers(conn, url), lambda: list_images(conn, missing_alt=True),
        lambda: list_images(conn, missing_dimensions=True), lambda: get_violations(conn),
        lambda: find_duplicates(conn, "title"), lambda: find_duplicates(conn, "description"),
        lambda: find_mismatches(conn, "canonical"), lambda: check_headers(conn),
        lambda: check_headers(conn, missing_only=True),
        lambda: get_duplicate_clusters(conn, min_count=1), lambda: list_crawl_runs(conn),
        lambda: list_console_messages(conn), lambda: list_console_messages(conn, url=url),
        lambda: list_json_ld(conn), lambda: list_json_ld(conn, type="Product", invalid=True),
    ]


def _small_site(archive: Builder) -> None:
    home = archive.page("/", title="Home", og_type="website")
    page = archive.page("/a/b", title="Home", og_type="website", canonical="/a/c")
    archive.link(home, page, "b")
    archive.header(home, "Content-Type", "text/html")
    archive.conn.execute("INSERT INTO images(page_id, src) VALUES (?, 'x.png')", (page,))


def test_an_archive_from_before_the_query_indexes_answers_everything(
        build: Callable[..., Builder]) -> None:
    archive = build(migrations="0001")
    _small_site(archive)
    conn = archive.close()
    results = [query() for query in _every_query(conn)]
    assert results[0]["total_pages"] == 2  # type: ignore[index]
    assert find_duplicates(conn)["items"][0]["urls"] == [f"{BASE}/", f"{BASE}/a/b"]
    assert find_mismatches(conn, "canonical")["total"] == 1
    # no console or JSON-LD tables before 0010 / 0011: nothing to list, nothing created
    assert list_console_messages(conn) == list_console_messages(conn, url=f"{BASE}/") == {
        "items": [], "total": 0, "offset": 0, "limit": 100}
    assert list_json_ld(conn, type="Product")["total"] == 0


def _plans(conn: sqlite3.Connection, query: Callable[[], object]) -> list[str]:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        query()
    finally:
        conn.set_trace_callback(None)
    # SQLite traces the statements a table-valued pragma runs inside another as "-- …" comments
    statements = [sql for sql in statements if not sql.startswith("--")]
    return [row[3] for sql in statements for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]


def test_no_query_reads_the_whole_anchors_table(build: Callable[..., Builder]) -> None:
    archive = build()
    _small_site(archive)
    conn = archive.close()
    for query in _every_query(conn):
        for line in _plans(conn, query):
            words = line.split()
            assert not (words[0] == "SCAN" and words[1] in ("a", "anchors")), line


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (lambda c: find_duplicates(c, "title"), "pages_internal_title"),
        (lambda c: find_duplicates(c, "description"), "pages_internal_description"),
        (lambda c: get_duplicate_clusters(c), "pages_internal_title"),
        (lambda c: list_external_links(c), "pages_external_url"),
        (lambda c: list_broken_links(c), "pages_status"),
        (lambda c: list_orphaned_pages(c), "anchors_href_page"),
        (lambda c: get_page_detail(c, f"{BASE}/"), "anchors_href_page"),
        (lambda c: check_headers(c), "response_headers_page_name"),
        (lambda c: list_images(c, missing_alt=True), "images_missing_alt"),
        (lambda c: list_images(c, missing_dimensions=True), "images_missing_dimensions"),
    ],
)
def test_queries_use_the_0002_indexes(build: Callable[..., Builder],
                                      query: Callable[[sqlite3.Connection], object],
                                      index: str) -> None:
    archive = build()
    _small_site(archive)
    conn = archive.close()
    assert any(index in line for line in _plans(conn, lambda: query(conn)))


def test_page_detail_gives_the_redirect_kind_of_a_source(
        build: Callable[..., Builder]) -> None:
    archive = build()
    dest = archive.page("/dest", title="Dest")
    archive.page("/moved", status=301, redirect_dest_id=dest, redirect_kind="http")
    archive.page("/scripted", status=200, redirect_dest_id=dest, redirect_kind="script")
    conn = archive.close()
    kinds = {path: _detail(conn, path)["redirect_kind"] for path in ("/dest", "/moved", "/scripted")}
    assert kinds == {"/dest": None, "/moved": "http", "/scripted": "script"}


def test_an_archive_from_before_0008_derives_the_redirect_kind(
        build: Callable[..., Builder]) -> None:
    """Readers never migrate: what 0008_redirect_kind would fill in (a meta refresh hop was
    recorded with status 0)."""
    archive = build(migrations="0001")
    dest = archive.page("/dest", title="Dest")
    archive.page("/moved", status=301, redirect_dest_id=dest)
    archive.page("/refreshed", status=0, redirect_dest_id=dest)
    conn = archive.close()
    kinds = {path: _detail(conn, path)["redirect_kind"] for path in ("/dest", "/moved", "/refreshed")}
    assert kinds == {"/dest": None, "/moved": "http", "/refreshed": "meta-refresh"}


def _detail(conn: sqlite3.Connection, path: str) -> PageDetail:
    detail = get_page_detail(conn, f"{BASE}{path}")
    assert detail is not None, path
    return detail
