"""ArchivePipeline (nitpicker/pipelines.py): items into the archive, on a real crawl session
over a real SQLite archive (``tests/components.py``)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from nitpicker.crawl.run_failure import RunFailure
from nitpicker.crawl.sitemaps import SitemapItem
from nitpicker.items import FollowMode, LinkRecord, PageItem
from nitpicker.pipelines import ArchivePipeline
from nitpicker.policy.urls import frontier_key
from tests.components import ROOT, open_session, unit_crawler

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.crawl.session import CrawlSession


def pipeline(tmp_path: Path, **options: Any) -> tuple[ArchivePipeline, CrawlSession]:
    crawler = unit_crawler(tmp_path, **options)
    return ArchivePipeline.from_crawler(crawler), open_session(crawler)


def rows(session: CrawlSession, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """What the archive holds once every submitted write ran and was committed."""
    session.settle()
    session.archive.commit()
    conn = sqlite3.connect(session.config.output)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def link(url: str, mode: FollowMode, external: bool = False) -> LinkRecord:
    return LinkRecord(url, frontier_key(url), "", "", external, mode)


def root_page(session: CrawlSession, **fields: Any) -> PageItem:
    """The page of the root's leased frontier row."""
    (frontier_id, url, depth, _), = session.archive.frontier.lease(1)
    values: dict[str, Any] = {"is_external": False, "is_target": True, "status": 200,
                              "content_type": "text/html", **fields}
    return PageItem(url=url, frontier_id=frontier_id, depth=depth, **values)


def test_a_page_its_new_links_and_its_acknowledgement(tmp_path: Path) -> None:
    archive_pipeline, session = pipeline(tmp_path)
    item = root_page(session, links=[
        link("http://site.test/a", FollowMode.FULL),
        link("http://site.test/a", FollowMode.FULL),  # twice on the page: queued once
        link("https://elsewhere.test/", FollowMode.METADATA, external=True),
        link("mailto:x@site.test", FollowMode.STUB, external=True),
        link("http://site.test/admin", FollowMode.EXCLUDED),
    ])
    assert archive_pipeline.process_item(item) is item
    assert rows(session, "SELECT url, depth, mode, state FROM frontier ORDER BY id") == [
        (ROOT, 0, 0, 2),  # leased, now done
        ("http://site.test/a", 1, 0, 0),
        ("https://elsewhere.test/", 1, 1, 0),
    ]
    assert rows(session, "SELECT url, is_target, status FROM pages WHERE url = ?", ROOT) == [
        (ROOT, 1, 200)]
    counters = session.counters
    assert (counters.done, counters.pages, counters.internal_errors) == (1, 1, 0)
    assert archive_pipeline.stats.get_value("nitpicker/archive/pages") == 1


@pytest.mark.parametrize(
    ("fields", "counted"),
    [
        ({"status": -1, "error": "DNS lookup failed", "is_target": False}, (1, 0, 0)),
        ({"status": -1, "error": "refused", "is_target": False, "is_external": True}, (0, 1, 0)),
        ({"status": None, "skip_reason": "blocked by robots.txt", "is_target": False}, (0, 0, 1)),
    ],
)
def test_errors_and_skips_are_counted_for_the_exit_code(
    tmp_path: Path, fields: dict[str, Any], counted: tuple[int, int, int]
) -> None:
    archive_pipeline, session = pipeline(tmp_path)
    archive_pipeline.process_item(root_page(session, **fields))
    counters = session.counters
    assert (counters.internal_errors, counters.external_errors, counters.skipped) == counted
    assert counters.pages == 0


def test_sitemap_urls_are_marked_and_the_in_scope_ones_queued(tmp_path: Path) -> None:
    archive_pipeline, session = pipeline(tmp_path, roots=("http://site.test/docs/",))
    archive_pipeline.process_item(SitemapItem("http://site.test/sitemap.xml", [
        "http://site.test/docs/orphan", "http://site.test/blog/", "ftp://site.test/file"]))
    assert rows(session, "SELECT url, is_external, in_sitemap FROM pages ORDER BY url") == [
        ("http://site.test/blog/", 1, 1), ("http://site.test/docs/orphan", 0, 1)]
    assert [url for url, in rows(session, "SELECT url FROM frontier ORDER BY id")] == [
        "http://site.test/docs/", "http://site.test/docs/orphan"]


def test_a_failed_run_writes_nothing_more(tmp_path: Path) -> None:
    archive_pipeline, session = pipeline(tmp_path)
    item = root_page(session)
    session.failure = RunFailure("disk_full", "database or disk is full", "crawl")
    archive_pipeline.process_item(item)
    assert session.counters.done == 0
    assert rows(session, "SELECT count(*) FROM pages") == [(0,)]


def test_close_commits_what_was_written(tmp_path: Path) -> None:
    archive_pipeline, session = pipeline(tmp_path)
    archive_pipeline.open_spider()
    archive_pipeline.process_item(root_page(session))
    archive_pipeline.close_spider()
    conn = sqlite3.connect(session.config.output)  # another connection sees the commit
    try:
        assert conn.execute("SELECT url FROM pages").fetchall() == [(ROOT,)]
    finally:
        conn.close()


def test_not_configured_without_a_crawl_session() -> None:
    with pytest.raises(NotConfigured):
        ArchivePipeline.from_crawler(get_crawler())
