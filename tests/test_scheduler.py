"""FrontierScheduler (nitpicker/crawl/scheduler.py): requests leased from the archive's frontier, on a
real crawl session over a real SQLite archive (``tests/components.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.misc import load_object

from nitpicker.cli.runner import scrapy_settings
from nitpicker.cli.worker_process import worker_settings
from nitpicker.crawl.meta import META_DEPTH, META_FRONTIER_ID, META_MODE
from nitpicker.crawl.scheduler import FrontierScheduler
from nitpicker.crawl.session import crawl_session
from nitpicker.crawl.shared_scheduler import SharedFrontierScheduler
from nitpicker.items import FollowMode
from nitpicker.policy.urls import frontier_key
from nitpicker.spiders.site import SiteSpider
from tests.components import unit_crawler

if TYPE_CHECKING:
    from pathlib import Path


def opened(tmp_path: Path, roots: tuple[str, ...] = ("http://site.test/",),
           **options: Any) -> FrontierScheduler:
    crawler = unit_crawler(tmp_path, roots, **options)
    scheduler = FrontierScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)  # type: ignore[arg-type]
    return scheduler


def drain(scheduler: FrontierScheduler) -> list[Request]:
    requests = []
    while (request := scheduler.next_request()) is not None:
        requests.append(request)
    return requests


def test_opening_creates_the_archive_and_queues_the_roots(tmp_path: Path) -> None:
    scheduler = opened(tmp_path, ("http://site.test/", "http://site.test/docs/"))
    assert scheduler.session is crawl_session(scheduler.crawler)
    assert scheduler.has_pending_requests()
    requests = drain(scheduler)
    assert [r.url for r in requests] == ["http://site.test/", "http://site.test/docs/"]
    first = requests[0]
    assert first.meta[META_DEPTH] == 0 and first.meta[META_MODE] == FollowMode.FULL
    assert isinstance(first.meta[META_FRONTIER_ID], int) and first.dont_filter
    spider: Any = scheduler.crawler.spider
    assert first.callback == spider.parse and first.errback == spider.errback
    assert scheduler.session.counters.leased == 2
    assert not scheduler.has_pending_requests()


def test_site_first_then_shallowest_first(tmp_path: Path) -> None:
    scheduler = opened(tmp_path)
    writer = scheduler.session.archive
    writer.frontier.add([
        (frontier_key("http://site.test/deep"), "http://site.test/deep", 3, 0),
        (frontier_key("http://x.test/b"), "http://x.test/b", 2, int(FollowMode.METADATA)),
        (frontier_key("http://x.test/"), "http://x.test/", 1, int(FollowMode.METADATA)),
        (frontier_key("http://site.test/mid"), "http://site.test/mid", 1, 0),
    ])
    requests = drain(scheduler)
    assert [(r.url, r.meta[META_DEPTH], r.meta[META_MODE]) for r in requests] == [
        ("http://site.test/", 0, 0), ("http://site.test/mid", 1, 0),
        ("http://site.test/deep", 3, 0), ("http://x.test/", 1, 1), ("http://x.test/b", 2, 1)]


def test_site_rows_found_later_overtake_the_checks_held(tmp_path: Path) -> None:
    """Checks leased in one batch with the site's last rows wait behind the site's rows queued
    after them: the scheduler leases again when the next row it holds is a check."""
    scheduler = opened(tmp_path)
    frontier = scheduler.session.archive.frontier
    check = int(FollowMode.METADATA)
    frontier.add([(frontier_key(f"http://x.test/{n}"), f"http://x.test/{n}", 1, check)
                  for n in range(3)])
    assert scheduler.next_request().url == "http://site.test/"  # type: ignore[union-attr]
    assert scheduler.next_request().url == "http://x.test/0"  # type: ignore[union-attr]
    frontier.add([(frontier_key("http://site.test/late"), "http://site.test/late", 2, 0)])
    assert frontier.pending_site == 1
    assert [r.url for r in drain(scheduler)] == [
        "http://site.test/late", "http://x.test/1", "http://x.test/2"]
    assert scheduler.session.counters.leased_checks == 3


def test_requests_handed_back_come_first(tmp_path: Path) -> None:
    scheduler = opened(tmp_path)
    hop = Request("http://site.test/moved", dont_filter=True)
    assert scheduler.enqueue_request(hop)
    assert scheduler.next_request() is hop
    assert scheduler.next_request().url == "http://site.test/"  # type: ignore[union-attr]


def test_max_pages_halts_the_run_when_its_budget_is_leased(tmp_path: Path) -> None:
    scheduler = opened(tmp_path, max_pages=2)
    writer = scheduler.session.archive
    writer.frontier.add(
        (frontier_key(f"http://site.test/{n}"), f"http://site.test/{n}", 1, 0) for n in range(5))
    assert len(drain(scheduler)) == 2
    assert scheduler.session.halted == "max_pages"
    assert not scheduler.has_pending_requests()
    assert writer.frontier.pending == 4  # the others stay in the frontier for a resume


def test_a_halted_run_starts_nothing_more(tmp_path: Path) -> None:
    scheduler = opened(tmp_path)
    scheduler.session.halt("max_duration")
    assert scheduler.next_request() is None
    assert not scheduler.has_pending_requests()


@pytest.mark.parametrize(("settings_of", "scheduler"), [
    ("single crawl", FrontierScheduler),
    ("worker of --workers N", SharedFrontierScheduler),
])
def test_the_settings_of_a_crawl_name_its_scheduler(settings_of: str,
                                                    scheduler: type[FrontierScheduler]) -> None:
    """A worker's process names the shared scheduler over the add-on's (the scheduler does not
    pick its variant, which would import it back)."""
    settings = worker_settings(False) if scheduler is SharedFrontierScheduler \
        else scrapy_settings(False)
    crawler = Crawler(SiteSpider, settings)
    crawler._apply_settings()  # the add-on's settings, as a crawl applies them
    assert load_object(crawler.settings["SCHEDULER"]) is scheduler
