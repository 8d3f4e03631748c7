"""nitpicker.archive.page_recorder: page rows and their children in a real archive file."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.archive import ArchiveWriter, PageRecorder, snapshots
from nitpicker.archive.frontier_store import DONE, LEASED, PENDING
from nitpicker.crawl.config import CrawlConfig
from nitpicker.items import (
    ConsoleRecord,
    FollowMode,
    ImageRecord,
    LinkRecord,
    PageItem,
    Redirect,
    ResourceRecord,
    answered_link,
    too_long_stand_in,
)
from nitpicker.policy.extract import PageMeta, read_json_ld
from nitpicker.policy.urls import frontier_key
from nitpicker.query.snapshot_encoding import decode

if TYPE_CHECKING:
    from collections.abc import Iterator

SITE = "http://example.com"


def _link(path: str, mode: FollowMode = FollowMode.FULL, *, external: bool = False,
          text: str = "") -> LinkRecord:
    url = SITE + path if path.startswith("/") else path
    return LinkRecord(url, frontier_key(url), "", text, external, mode)


def _new_links(item: PageItem) -> list[tuple[str, str, int, int]]:
    """What the archive pipeline queues for ``item``: its links to fetch."""
    followed = (FollowMode.FULL, FollowMode.METADATA)
    return [(link.key, link.url, item.depth + 1, int(link.mode))
            for link in item.links if link.mode in followed]


@pytest.fixture


def writer(tmp_path: Path) -> Iterator[ArchiveWriter]:
    config = CrawlConfig(roots=(f"{SITE}/",), output=str(tmp_path / "a.nitpicker"))
    w = ArchiveWriter.create(config)
    w.runs.start("crawl")
    yield w
    with contextlib.suppress(sqlite3.ProgrammingError):  # the test closed it
        w.abandon()


@pytest.fixture


def pages(writer: ArchiveWriter) -> PageRecorder:
    return writer.pages


def _lease(writer: ArchiveWriter, path: str) -> int:
    """Queue and lease ``path``: its frontier id."""
    writer.frontier.add([(frontier_key(SITE + path), SITE + path, 0, 0)])
    (row,) = writer.frontier.lease(1)
    return row[0]


def _page(writer: ArchiveWriter, path: str) -> dict[str, object]:
    cursor = writer.conn.execute("SELECT * FROM pages WHERE url = ?", (SITE + path,))
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    assert row is not None, path
    return dict(zip(names, row, strict=True))


def test_record_writes_the_page_its_children_and_its_frontier_rows(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    frontier_id = _lease(writer, "/")
    item = PageItem(
        url=f"{SITE}/", frontier_id=frontier_id, depth=0, is_external=False, is_target=True,
        status=200, status_text="OK", content_type="text/html", content_length=120,
        headers=[("content-type", "text/html"), ("server", "fixture")],
        meta=PageMeta(title="Home", description="The home page", lang="en"),
        links=[_link("/a", text="A"), _link("/a", text="A again"),
               _link("https://other.example/", FollowMode.METADATA, external=True)],
        images=[ImageRecord("/logo.png", "Logo", width=10, height=20)],
        resources=[ResourceRecord(f"{SITE}/site.css", "css", False, 200,
                                  headers=[("content-type", "text/css")])],
        html="<html><title>Home</title></html>",
    )
    page_id = pages.record(item, _new_links(item))
    conn = writer.conn
    home = _page(writer, "/")
    assert home["id"] == page_id and home["scraped"] == 1 and home["status"] == 200
    assert (home["title"], home["description"], home["lang"]) == ("Home", "The home page", "en")
    assert conn.execute("SELECT name, value FROM response_headers WHERE page_id = ?",
                        (page_id,)).fetchall() == [("content-type", "text/html"),
                                                    ("server", "fixture")]
    anchors = conn.execute(
        "SELECT p.url, a.text FROM anchors a JOIN pages p ON p.id = a.href_id"
        " WHERE a.page_id = ? ORDER BY a.id", (page_id,)).fetchall()
    assert anchors == [(f"{SITE}/a", "A"), (f"{SITE}/a", "A again"),
                       ("https://other.example/", "")]
    stub = _page(writer, "/a")
    assert (stub["scraped"], stub["depth"], stub["is_external"]) == (0, 1, 0)
    assert conn.execute("SELECT src, alt, width FROM images WHERE page_id = ?",
                        (page_id,)).fetchall() == [("/logo.png", "Logo", 10)]
    assert conn.execute(
        "SELECT r.url, r.kind, h.name FROM resources r JOIN resource_referrers rr"
        " ON rr.resource_id = r.id JOIN resource_headers h ON h.resource_id = r.id"
        " WHERE rr.page_id = ?", (page_id,)).fetchall() == [(f"{SITE}/site.css", "css",
                                                               "content-type")]
    encoding, html = conn.execute("SELECT encoding, html FROM snapshots WHERE page_id = ?",
                                  (page_id,)).fetchone()
    assert encoding == "zstd" and decode(encoding, html).decode() == item.html
    frontier = dict(conn.execute("SELECT url, state FROM frontier"))
    assert frontier == {f"{SITE}/": DONE, f"{SITE}/a": PENDING,
                        "https://other.example/": PENDING}
    assert writer.frontier.pending == 2 and writer.dirty == 1


_IMAGES = [
    ImageRecord("/a.png", "A", current_src="/a@2x.png", width=800, height=450.5,
                natural_width=1600, natural_height=901, is_lazy=True, viewport_width=1280,
                source_code='<img src="/a.png">', file_size=12_345),
    ImageRecord("/b.png", None),
    ImageRecord("/c.png", "Ç ≠ \"quoted\"", width=0.1 + 0.2, height=1e-7, is_lazy=False),
]


@pytest.mark.parametrize("hostile", [False, True])
def test_a_pages_images_are_stored_as_bound_row_by_row(
        writer: ArchiveWriter, pages: PageRecorder, hostile: bool) -> None:
    """The images go to SQLite as one JSON array (one statement a page); what is stored, in
    order, column by column and with each value's type, is what binding each row stores. A
    width JSON cannot carry (NaN, an infinity) sends the page's rows one by one instead."""
    images = [*_IMAGES, ImageRecord("/d.png", "D", width=float("nan"), height=float("inf"))] \
        if hostile else _IMAGES
    statements: list[str] = []
    writer.conn.set_trace_callback(statements.append)
    page_id = pages.record(PageItem(url=f"{SITE}/", frontier_id=None, depth=0,
                                    is_external=False, is_target=True, status=200,
                                    images=list(images)), [])
    writer.conn.set_trace_callback(None)
    inserts = [sql for sql in statements if sql.startswith("INSERT INTO images")]
    assert len(inserts) == (len(images) if hostile else 1)
    columns = ("src, current_src, alt, width, height, natural_width, natural_height, is_lazy,"
               " viewport_width, source_code, file_size")
    typed = ", ".join(f"{c}, typeof({c})" for c in columns.split(", "))
    stored = writer.conn.execute(f"SELECT {typed} FROM images WHERE page_id = ? ORDER BY id",
                                 (page_id,)).fetchall()
    bound = sqlite3.connect(":memory:")  # the archive's own table, its affinities
    bound.execute(writer.conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'images'").fetchone()[0])
    bound.executemany(f"INSERT INTO images(page_id, {columns}) VALUES ({', '.join('?' * 12)})", [
        (page_id, i.src, i.current_src, i.alt, i.width, i.height, i.natural_width,
         i.natural_height, i.is_lazy, i.viewport_width, i.source_code, i.file_size)
        for i in images])
    expected = bound.execute(f"SELECT {typed} FROM images ORDER BY id").fetchall()
    assert len(stored) == len(images)
    assert stored == expected


def test_record_again_replaces_the_children(writer: ArchiveWriter, pages: PageRecorder) -> None:
    first = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                     is_target=True, status=200, links=[_link("/a"), _link("/b")],
                     headers=[("x", "1")])
    again = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                     is_target=True, status=304, links=[_link("/c")], headers=[("x", "2")])
    page_id = pages.record(first, [])
    assert pages.record(again, []) == page_id
    conn = writer.conn
    assert conn.execute("SELECT count(*) FROM anchors").fetchone()[0] == 1
    assert conn.execute("SELECT value FROM response_headers").fetchall() == [("2",)]
    assert _page(writer, "/")["status"] == 304


def test_a_pages_parameters_are_built_before_its_transaction(
    writer: ArchiveWriter, pages: PageRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With --workers the transaction holds the archive's write lock: the snapshot's
    # compression and the links' JSON are made before it begins.
    writer.commit()
    seen: list[bool] = []
    real_compress = snapshots.compress

    def compress(html: str) -> bytes:
        seen.append(writer.conn.in_transaction)
        return real_compress(html)

    monkeypatch.setattr(snapshots, "compress", compress)  # the recorder calls it
    item = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                    is_target=True, status=200, links=[_link("/a")], html="<p>hi</p>")
    pages.record(item, [])
    assert seen == [False]
    assert writer.conn.in_transaction  # the page itself is in the open batch


def test_a_stubs_first_fetch_and_a_committed_pages_refetch_record_their_children(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    # A first fetch (a stub row, or no row) deletes nothing before writing its children; a
    # fetch of a page recorded in an earlier batch replaces them.
    home = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                    is_target=True, status=200, links=[_link("/a")])
    pages.record(home, [])
    writer.commit()
    first = PageItem(url=f"{SITE}/a", frontier_id=None, depth=1, is_external=False,
                     is_target=True, status=200, links=[_link("/"), _link("/b")],
                     headers=[("x", "1")], images=[ImageRecord(f"{SITE}/i.png", None)])
    page_id = pages.record(first, [])
    writer.commit()
    conn = writer.conn
    assert conn.execute("SELECT count(*) FROM anchors WHERE page_id = ?",
                        (page_id,)).fetchone()[0] == 2
    again = PageItem(url=f"{SITE}/a", frontier_id=None, depth=1, is_external=False,
                     is_target=True, status=200, links=[_link("/c")], headers=[("x", "2")])
    assert pages.record(again, []) == page_id
    writer.commit()
    assert conn.execute("SELECT count(*) FROM anchors WHERE page_id = ?",
                        (page_id,)).fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM images").fetchone()[0] == 0
    assert conn.execute("SELECT value FROM response_headers WHERE page_id = ?",
                        (page_id,)).fetchall() == [("2",)]


def test_record_writes_the_response_time_and_a_refetch_replaces_it(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    item = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                    is_target=True, status=200, response_time_ms=42)
    pages.record(item, [])
    assert _page(writer, "/")["response_time_ms"] == 42
    item.response_time_ms = None  # answered again, not timed
    pages.record(item, [])
    assert _page(writer, "/")["response_time_ms"] is None


def test_record_of_a_redirect_keeps_its_hops_and_settles_the_target(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    frontier_id = _lease(writer, "/old")
    writer.frontier.add([(frontier_key(f"{SITE}/new"), f"{SITE}/new", 1, 0)])
    item = PageItem(url=f"{SITE}/new", frontier_id=frontier_id, depth=0, is_external=False,
                    is_target=True, status=200,
                    redirects=[Redirect(f"{SITE}/old", 301), Redirect(f"{SITE}/new", 401)])
    page_id = pages.record(item, [])
    old = _page(writer, "/old")
    assert (old["redirect_dest_id"], old["status"], old["scraped"]) == (page_id, 301, 1)
    assert _page(writer, "/new")["redirect_dest_id"] is None  # a self-redirect is no source
    states = dict(writer.conn.execute("SELECT url, state FROM frontier"))
    assert states == {f"{SITE}/old": DONE, f"{SITE}/new": DONE}
    assert writer.frontier.pending == 0


def test_record_marks_links_that_are_never_fetched(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    too_long = too_long_stand_in(SITE + "/x" * 5000)
    invalid = LinkRecord(too_long, too_long, "10001", "", True, FollowMode.INVALID)
    item = PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                    is_target=True, status=200,
                    links=[_link("/admin/", FollowMode.EXCLUDED),
                           _link("/trap/", FollowMode.CAPPED),
                           _link("mailto:me@example.com", FollowMode.STUB, external=True),
                           invalid])
    pages.record(item, _new_links(item))
    rows = {url: (scraped, skipped, reason) for url, scraped, skipped, reason in
            writer.conn.execute("SELECT url, scraped, is_skipped, skip_reason FROM pages")}
    assert rows[f"{SITE}/admin/"] == (1, 1, "excluded")
    assert rows[f"{SITE}/trap/"] == (1, 1, "dedupe cap")
    assert rows["mailto:me@example.com"] == (1, 0, None)
    assert rows[too_long] == (1, 1, "url too long")
    assert writer.conn.execute("SELECT count(*) FROM frontier").fetchone()[0] == 0


def test_record_after_a_rollback_links_to_rows_that_exist(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    pages.record(PageItem(url=f"{SITE}/", frontier_id=None, depth=0, is_external=False,
                          is_target=True, status=200, links=[_link("/gone")]), [])
    writer.rollback()  # the stub row of /gone went with the batch
    pages.record(PageItem(url=f"{SITE}/b", frontier_id=None, depth=0, is_external=False,
                          is_target=True, status=200, links=[_link("/gone")]), [])
    dangling = writer.conn.execute(
        "SELECT count(*) FROM anchors WHERE href_id NOT IN (SELECT id FROM pages)").fetchone()[0]
    assert dangling == 0
    assert _page(writer, "/gone")["scraped"] == 0


def test_record_sitemap_marks_listed_pages_and_queues_those_in_scope(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    pages.record(PageItem(url=f"{SITE}/known", frontier_id=None, depth=0, is_external=False,
                          is_target=True, status=200), [])
    added = pages.record_sitemap([(f"{SITE}/known", False), (f"{SITE}/listed", False),
                                  ("https://other.example/", True)])
    assert added == 2
    listed = dict(writer.conn.execute("SELECT url, in_sitemap FROM pages"))
    assert listed == {f"{SITE}/known": 1, f"{SITE}/listed": 1, "https://other.example/": 1}
    queued = writer.conn.execute("SELECT url, depth FROM frontier ORDER BY id").fetchall()
    assert queued == [(f"{SITE}/known", 1), (f"{SITE}/listed", 1)]


def test_repromote_turns_fetched_external_rows_back_into_pending_pages(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    item = PageItem(url="http://blog.example.com/", frontier_id=None, depth=1,
                    is_external=True, is_target=False, status=200, content_type="text/html",
                    meta=PageMeta(title="Blog"), headers=[("server", "x")],
                    links=[_link("/")], html="<html></html>")
    page_id = pages.record(item, [])
    pages.record(PageItem(url="http://other.example/", frontier_id=None, depth=1,
                          is_external=True, is_target=False, status=200), [])
    writer.commit()
    rows = writer.repromote(lambda url: url.startswith("http://blog.example.com/"))
    assert rows == [(page_id, "http://blog.example.com/")]
    blog = writer.conn.execute(
        "SELECT id, scraped, is_external, status, title, content_type FROM pages WHERE url = ?",
        ("http://blog.example.com/",)).fetchone()
    assert blog == (page_id, 0, 0, None, "", None)
    for table in ("anchors", "response_headers", "snapshots"):
        count = writer.conn.execute(f"SELECT count(*) FROM {table} WHERE page_id = ?",
                                    (page_id,)).fetchone()[0]
        assert count == 0, table
    frontier = writer.conn.execute("SELECT url, depth, mode, state FROM frontier WHERE url = ?",
                                   ("http://blog.example.com/",)).fetchone()
    assert frontier == ("http://blog.example.com/", 1, 0, PENDING)
    assert _page(writer, "/")["scraped"] == 0  # untouched (it was a link target only)
    assert writer.frontier.pending == 1


def test_url_order_numbers_internal_pages_in_natural_order(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    urls = ["http://example.com/p/10", "http://example.com/p/2", "http://example.com/",
            "http://example.com/p/index.html", "http://example.com/about"]
    conn = writer.conn
    conn.executemany("INSERT INTO pages (url) VALUES (?)", [(u,) for u in urls])
    conn.execute("INSERT INTO pages (url, is_external) VALUES ('http://other.example/', 1)")
    conn.execute("INSERT INTO pages (url, redirect_dest_id, \"order\") VALUES"
                 " ('http://example.com/old', 1, 99)")  # a redirect loses a stale order too
    writer.commit()
    pages.set_url_order()
    rows = conn.execute('SELECT url, "order" FROM pages ORDER BY id').fetchall()
    assert dict(rows) == {
        "http://example.com/": 1, "http://example.com/about": 2,
        "http://example.com/p/index.html": 3, "http://example.com/p/2": 4,
        "http://example.com/p/10": 5, "http://other.example/": None,
        "http://example.com/old": None,
    }
    assert not conn.in_transaction  # committed


SHARED_WARNING = ConsoleRecord("console", "warning", "shared: deprecated", f"{SITE}/shared.js", 1, 9)


def _rendered(path: str, *console: ConsoleRecord, json_ld: tuple[str, ...] = ()) -> PageItem:
    return PageItem(url=SITE + path, frontier_id=None, depth=0, is_external=False,
                    is_target=True, status=200, content_type="text/html",
                    console=list(console), json_ld=[read_json_ld(text) for text in json_ld])


def test_a_console_message_shown_by_several_pages_is_stored_once(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    error = ConsoleRecord("exception", "error", "TypeError: x", f"{SITE}/b", 12, 3)
    tick = ConsoleRecord("console", "log", "tick", f"{SITE}/a", 4, 9, count=3)
    a = pages.record(_rendered("/a", tick, SHARED_WARNING), [])
    b = pages.record(_rendered("/b", SHARED_WARNING, error), [])
    c = pages.record(_rendered("/c", ConsoleRecord("console", "warning", "shared: deprecated",
                                                   f"{SITE}/shared.js", 1, 9)), [])
    conn = writer.conn
    messages = conn.execute(
        'SELECT id, kind, level, text, source_url, line, "column" FROM console_messages'
        " ORDER BY id").fetchall()
    assert [m[1:] for m in messages] == [
        ("console", "log", "tick", f"{SITE}/a", 4, 9),
        ("console", "warning", "shared: deprecated", f"{SITE}/shared.js", 1, 9),
        ("exception", "error", "TypeError: x", f"{SITE}/b", 12, 3),
    ]
    shared = messages[1][0]
    links = conn.execute("SELECT page_id, message_id, position, count"
                         " FROM page_console_messages ORDER BY page_id, position").fetchall()
    assert links == [(a, messages[0][0], 0, 3), (a, shared, 1, 1), (b, shared, 0, 1),
                     (b, messages[2][0], 1, 1), (c, shared, 0, 1)]


def test_record_again_replaces_console_messages_and_json_ld(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    first = _rendered("/", SHARED_WARNING, json_ld=('{"@type": ["Product", "Thing"]}', "{,"))
    page_id = pages.record(first, [])
    conn = writer.conn
    blocks = conn.execute("SELECT position, is_valid, error, source FROM json_ld_blocks"
                          " WHERE page_id = ? ORDER BY position", (page_id,)).fetchall()
    assert blocks == [
        (0, 1, None, '{"@type": ["Product", "Thing"]}'),
        (1, 0, "Expecting property name enclosed in double quotes (line 1, column 2)", "{,"),
    ]
    assert conn.execute("SELECT type FROM json_ld_types ORDER BY type").fetchall() == [
        ("Product",), ("Thing",)]
    assert pages.record(_rendered("/", json_ld=('{"@type": "Event"}',)), []) == page_id
    assert conn.execute("SELECT position, is_valid FROM json_ld_blocks").fetchall() == [(0, 1)]
    assert conn.execute("SELECT type FROM json_ld_types").fetchall() == [("Event",)]
    assert conn.execute("SELECT count(*) FROM page_console_messages").fetchone()[0] == 0


def _answered(path: str, mode: FollowMode = FollowMode.FULL) -> PageItem:
    """The row of a link to ``path`` that a loaded resource answered (an image, 200)."""
    resource = ResourceRecord(SITE + path, "image", False, status=200, status_text="OK",
                              content_type="image/PNG", content_length=69,
                              headers=[("content-type", "image/png")])
    return answered_link(_link(path, mode), resource, 1)


@pytest.mark.parametrize(
    ("before", "recorded", "state"),
    [
        pytest.param(None, True, DONE, id="new: inserted done"),
        pytest.param(PENDING, True, DONE, id="pending: marked done"),
        pytest.param(LEASED, False, LEASED, id="leased: its own request records it"),
        pytest.param(DONE, False, DONE, id="done: recorded already"),
    ],
)


def test_record_answered_settles_the_frontier_row(
    writer: ArchiveWriter, pages: PageRecorder, before: int | None, recorded: bool, state: int
) -> None:
    url = SITE + "/photo.png"
    if before is not None:
        writer.frontier.add([(frontier_key(url), url, 1, 0)])
        if before != PENDING:
            (row,) = writer.frontier.lease(1)
            if before == DONE:
                writer.frontier.acknowledge(row[0])
    pending = writer.frontier.pending
    assert pages.record_answered([_answered("/photo.png")]) == int(recorded)
    assert frontier_states_of(writer) == {url: state}
    assert writer.frontier.pending == pending - (before == PENDING)
    row = writer.conn.execute("SELECT scraped, status, content_type FROM pages WHERE url = ?",
                              (url,)).fetchone()
    assert (tuple(row) if row else None) == ((1, 200, "image/png") if recorded else None)


def test_record_answered_keeps_a_row_recorded_already(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    """A redirect's destination has no frontier row of its own: its recorded row wins."""
    item = PageItem(url=SITE + "/new.png", frontier_id=None, depth=1, is_external=False,
                    is_target=True, status=200, content_type="image/png", content_length=5,
                    redirects=[Redirect(SITE + "/old.png", 301)])
    pages.record(item, [])
    assert pages.record_answered([_answered("/new.png")]) == 0
    assert _page(writer, "/new.png")["content_length"] == 5


def test_answered_link_is_what_a_fetch_records() -> None:
    item = _answered("/photo.png", FollowMode.METADATA)
    assert (item.status, item.status_text, item.content_type, item.content_length,
            item.is_target, item.frontier_id, item.headers) == (
        200, "OK", "image/png", 69, False, None, [("content-type", "image/png")])
    assert _answered("/photo.png").is_target


def frontier_states_of(writer: ArchiveWriter) -> dict[str, int]:
    return dict(writer.conn.execute("SELECT url, state FROM frontier"))


def _handed_over(source: str, target: str, *, status: int = 301, kind: str = "http",
                 external: bool = False) -> PageItem:
    """What the spider yields for a redirect handed over to the frontier."""
    return PageItem(url=SITE + target, frontier_id=None, depth=1, is_external=False,
                    is_target=False, redirects=[Redirect(SITE + source, status, kind, external)],
                    redirect_link=_link(target))


def test_a_handed_over_redirect_leaves_its_destination_as_its_own_crawl_recorded_it(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    dest = PageItem(url=f"{SITE}/dest", frontier_id=None, depth=1, is_external=False,
                    is_target=True, status=200, links=[_link("/child")], html="<p>dest</p>")
    pages.record(dest, _new_links(dest))
    pages.record(_handed_over("/away", "/dest", status=302, external=True), [])
    row = _page(writer, "/dest")
    assert (row["is_target"], row["status"], row["redirect_dest_id"]) == (1, 200, None)
    assert writer.conn.execute("SELECT count(*) FROM anchors WHERE page_id = ?",
                               (row["id"],)).fetchone()[0] == 1
    source = _page(writer, "/away")
    assert (source["status"], source["is_external"], source["redirect_dest_id"],
            source["redirect_kind"]) == (302, 1, row["id"], "http")


def test_sources_follow_their_destination_when_it_turns_out_to_redirect(
    writer: ArchiveWriter, pages: PageRecorder
) -> None:
    """/a was handed over to /b before /b was fetched; /b redirects (by script) to /c."""
    pages.record(_handed_over("/a", "/b"), [])
    assert _page(writer, "/b")["scraped"] == 0  # a stub until its own fetch
    pages.record(_handed_over("/b", "/c", status=200, kind="script"), [])
    c_id = _page(writer, "/c")["id"]
    assert _page(writer, "/a")["redirect_dest_id"] == c_id
    b = _page(writer, "/b")
    assert (b["redirect_dest_id"], b["redirect_kind"], b["status"]) == (c_id, "script", 200)
    # a later source to /b points where /b leads
    pages.record(_handed_over("/z", "/b"), [])
    assert _page(writer, "/z")["redirect_dest_id"] == c_id
    # two URLs sending to each other: neither points at itself
    pages.record(_handed_over("/c", "/a"), [])
    rows = dict(writer.conn.execute("SELECT url, redirect_dest_id FROM pages"))
    ids = dict(writer.conn.execute("SELECT url, id FROM pages"))
    assert all(rows[url] != ids[url] for url in rows)
