"""TrapCapMiddleware (nitpicker/middlewares/trapcap.py): its settings and decisions, on a real
crawl session over a real archive (``tests/components.py``), without a network."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings

from nitpicker.items import FollowMode, LinkRecord, PageItem
from nitpicker.middlewares.trapcap import TrapCapMiddleware, TrapCapSettings
from nitpicker.policy.extract import PageMeta
from nitpicker.policy.signature import page_signature
from nitpicker.policy.urls import frontier_key
from tests.components import open_session, unit_crawler
from tests.helpers import trap_meta, unique_meta

if TYPE_CHECKING:
    from nitpicker.crawl.session import CrawlSession

ROOT = "http://localhost/"


def make_middleware(tmp_path: Path, settings: dict[str, Any] | None = None,
                    **options: Any) -> tuple[TrapCapMiddleware, CrawlSession]:
    crawler = unit_crawler(tmp_path, (ROOT,), settings, **options)
    middleware = TrapCapMiddleware.from_crawler(crawler)
    return middleware, open_session(crawler)


def page(url: str, meta: PageMeta, *, target: bool = True, external: bool = False) -> PageItem:
    links = [
        LinkRecord(f"{url}next", "", "", "next", False, FollowMode.FULL),
        LinkRecord("https://elsewhere.example/", "", "", "out", True, FollowMode.METADATA),
        LinkRecord("http://localhost/admin/", "", "", "admin", False, FollowMode.EXCLUDED),
    ]
    return PageItem(url=url, frontier_id=None, depth=1, is_external=external, is_target=target,
                    status=200, meta=meta, links=links)


def modes(item: PageItem) -> list[FollowMode]:
    return [link.mode for link in item.links]


def trap_events(session: CrawlSession) -> list[tuple[Any, ...]]:
    session.archive.commit()
    conn = sqlite3.connect(session.config.output)
    try:
        return conn.execute("SELECT signature, parent_path, count, first_url, last_url "
                            "FROM trap_events ORDER BY id").fetchall()
    finally:
        conn.close()


# -- settings ---------------------------------------------------------------------------------


def test_on_by_default_and_off_with_dedupe_cap_0(tmp_path: Path) -> None:
    assert TrapCapMiddleware.from_crawler(unit_crawler(tmp_path)).config == TrapCapSettings(
        100, 5000, 100_000)
    with pytest.raises(NotConfigured):
        TrapCapMiddleware.from_crawler(unit_crawler(tmp_path, dedupe_cap=0))
    with pytest.raises(NotConfigured):  # an operator's 0 too
        TrapCapMiddleware.from_crawler(unit_crawler(tmp_path, settings={"NITPICKER_DEDUPE_CAP": 0}))


def test_the_crawl_options_reach_it_through_the_settings(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path, dedupe_cap=7, dedupe_age_window=70, dedupe_map_cap=700)
    assert crawler.settings.getint("NITPICKER_DEDUPE_CAP") == 7
    middleware = TrapCapMiddleware.from_crawler(crawler)
    assert middleware.config == TrapCapSettings(7, 70, 700)
    assert (middleware.cap.cap, middleware.cap.age_window, middleware.cap.map_cap) == (7, 70, 700)


def test_the_setting_alone_turns_it_on(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path, settings={"NITPICKER_DEDUPE_CAP": 50})
    assert TrapCapMiddleware.from_crawler(crawler).config == TrapCapSettings(50, 5000, 100_000)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"NITPICKER_DEDUPE_CAP": -1}, "NITPICKER_DEDUPE_CAP must be at least 1, got -1"),
        ({"NITPICKER_DEDUPE_CAP": 10, "NITPICKER_DEDUPE_AGE_WINDOW": 9},
         r"NITPICKER_DEDUPE_AGE_WINDOW \(9\) must not be smaller than NITPICKER_DEDUPE_CAP \(10\)"),
        ({"NITPICKER_DEDUPE_CAP": 10, "NITPICKER_DEDUPE_MAP_CAP": 3},
         r"NITPICKER_DEDUPE_MAP_CAP \(3\) must not be smaller than NITPICKER_DEDUPE_CAP \(10\)"),
    ],
)
def test_contradictory_settings_are_refused(values: dict[str, int], message: str) -> None:
    settings = Settings({"NITPICKER_DEDUPE_AGE_WINDOW": 5000, "NITPICKER_DEDUPE_MAP_CAP": 5000,
                         **values})
    with pytest.raises(ValueError, match=message):
        TrapCapSettings.from_settings(settings)


# -- decisions --------------------------------------------------------------------------------


def test_caps_links_from_the_firing_page_on(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=10)
    meta = trap_meta("http://localhost/list/date/")
    items = [page(f"http://localhost/list/date/{n}/", meta) for n in range(5)]
    for item in items:
        middleware.check(item)
    kept = [FollowMode.FULL, FollowMode.METADATA, FollowMode.EXCLUDED]
    capped = [FollowMode.CAPPED, FollowMode.METADATA, FollowMode.EXCLUDED]
    assert [modes(i) for i in items] == [kept, kept, capped, capped, capped]
    sig = page_signature(items[0].url, meta)
    assert trap_events(session) == [(sig, "/list/date", 3, items[0].url, items[2].url)]
    stats = middleware.stats
    assert stats.get_value("nitpicker/trapcap/fired") == 1
    assert stats.get_value("nitpicker/trapcap/capped_links") == 3
    assert stats.get_value("nitpicker/trapcap/entries") == 1


def test_never_counts_out_of_scope_pages(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=1)
    meta = trap_meta("http://localhost/list/date/")
    outside = [page(f"http://localhost/list/date/{n}/", meta, external=True) for n in range(3)]
    metadata_only = [page(f"http://localhost/list/date/{n}/", meta, target=False) for n in range(3)]
    for item in outside + metadata_only:
        assert not middleware.counts(item)
    assert middleware.cap.observed == 0 and not trap_events(session)
    inside = page("http://localhost/list/date/9/", meta)
    assert middleware.counts(inside)
    middleware.check(inside)
    assert modes(inside)[0] is FollowMode.CAPPED and len(trap_events(session)) == 1


def test_ignores_unsignable_pages(tmp_path: Path) -> None:
    middleware, _ = make_middleware(tmp_path, dedupe_cap=1)
    item = page("http://localhost/list/date/1/", PageMeta(title="No Open Graph"))
    middleware.check(item)
    assert modes(item)[0] is FollowMode.FULL and middleware.cap.observed == 0
    assert middleware.stats.get_value("nitpicker/trapcap/entries") is None


def test_anchor_index_is_the_links_discovered(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=100, dedupe_age_window=100)
    writer = session.archive
    assert writer.frontier.pending == 1  # the root
    writer.frontier.add((frontier_key(f"{ROOT}p{n}"), f"{ROOT}p{n}", 1, 0) for n in range(29))
    session.counters.leased = 80
    middleware.check(page("http://localhost/a/1", unique_meta(1)))
    assert middleware.cap.anchor_index == 110  # 30 pending + 80 leased
    writer.frontier.add((frontier_key(f"{ROOT}q{n}"), f"{ROOT}q{n}", 1, 0) for n in range(470))
    middleware.check(page("http://localhost/b/1", unique_meta(2)))  # 500 + 80 - 110 > 100 later
    assert middleware.cap.evicted_age == 1 and middleware.cap.entries == 1


def test_asks_the_frontier_whether_a_bucket_still_has_pages(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=5)
    session.archive.frontier.add([(frontier_key(f"{ROOT}docs/a"), f"{ROOT}docs/a", 1, 0)])
    assert middleware.has_pending_under("//localhost/docs/")
    assert not middleware.has_pending_under("//localhost/blog/")


def test_a_bucket_is_not_found_empty_while_queued_writes_may_fill_it(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=5)
    worker = session.worker
    assert worker is not None
    release = threading.Event()
    worker.submit(release.wait, 10)  # the archive's thread busy: the writes queue behind
    worker.submit(session.archive.frontier.add,
                  [(frontier_key(f"{ROOT}docs/a"), f"{ROOT}docs/a", 1, 0)])
    try:
        assert middleware.has_pending_under("//localhost/docs/"), "a queued write adds to it"
        assert middleware.has_pending_under("//localhost/blog/"), "not empty while queued"
    finally:
        release.set()
    worker.drain()
    assert middleware.has_pending_under("//localhost/docs/")
    assert not middleware.has_pending_under("//localhost/blog/"), "the writes queued then ran"
    assert not middleware.has_pending_under("//localhost/news/"), "nothing queued: empty at once"


def test_a_resume_caps_again_what_earlier_runs_capped(tmp_path: Path) -> None:
    middleware, session = make_middleware(tmp_path, dedupe_cap=1)
    meta = trap_meta("http://localhost/list/date/")
    middleware.check(page("http://localhost/list/date/1/", meta))
    assert len(trap_events(session)) == 1
    session.close("finished")
    crawler = unit_crawler(tmp_path, (ROOT,), output=Path(session.config.output), resume=True,
                           dedupe_cap=1)
    again = TrapCapMiddleware.from_crawler(crawler)
    open_session(crawler)
    later = page("http://localhost/list/date/2/", meta)
    again.check(later)
    assert modes(later)[0] is FollowMode.CAPPED  # capped at once: restored from trap_events
    assert len(again.cap.sticky) == 1
