"""The inbound-link index (``anchors(href_id, page_id)``) is built once, when a run closes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from nitpicker.archive.writer import ArchiveWriter
from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.session import CrawlSession
from tests.helpers import crawl

INDEX = "anchors_href_page"


def _has_index(path: Path) -> bool:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return INDEX in {index.name for index in Database(conn)["anchors"].indexes}
    finally:
        conn.close()


def _plan(path: Path) -> str:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "EXPLAIN QUERY PLAN SELECT page_id FROM anchors WHERE href_id = 1"
        ).fetchall()
    finally:
        conn.close()
    return " ".join(str(row[-1]) for row in rows)


def test_a_new_crawl_runs_without_it_and_closes_with_it(tmp_path: Path) -> None:
    output = tmp_path / "a.nitpicker"
    session = CrawlSession(CrawlConfig(roots=("http://example.com/",), output=str(output)))
    session.open()
    assert not _has_index(output)
    assert "SCAN" in _plan(output)  # slower while crawling, but a correct answer
    session.close("finished")
    assert _has_index(output)
    assert INDEX in _plan(output)


def test_a_short_resume_of_a_big_archive_keeps_it(tmp_path: Path) -> None:
    config = CrawlConfig(roots=("http://example.com/",), output=str(tmp_path / "b.nitpicker"))
    writer = ArchiveWriter.create(config)
    writer.runs.start("crawl")
    writer.conn.executemany(
        "INSERT INTO pages(url, scraped) VALUES (?, 1)",
        [(f"http://example.com/{n}",) for n in range(100)],
    )
    assert writer.defer_inbound_index(10) is False  # 10 more pages against 100: keep it
    assert _has_index(Path(config.output))
    assert writer.defer_inbound_index(40) is True  # a big run ahead: build it at the end
    assert not _has_index(Path(config.output))
    writer.close()
    assert _has_index(Path(config.output))


async def test_a_crawled_archive_answers_inbound_links_through_it(
    tmp_path: Path, site: Any
) -> None:
    archive = await crawl(tmp_path, [site.url("/")])
    assert _has_index(archive.path)
    assert INDEX in _plan(archive.path)
