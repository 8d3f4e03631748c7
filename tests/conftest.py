"""Shared test fixtures: the fixture website and an in-process crawl helper."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings

from fixtures.site import FixtureSite
from nitpicker.config import CrawlConfig
from nitpicker.spiders.site import SiteSpider

#: The images of ``/render/lazy`` once rendered, at either device preset: alt -> (is_lazy,
#: natural width, rendered width). The mid-page IntersectionObserver image loads only when the
#: page is scrolled through, not just to its end.
LAZY_PAGE_IMAGES = {
    "eager": (0, 4, 10.0),
    "native lazy": (1, 40, 20.0),
    "observed lazy, mid-page": (1, 60, 30.0),
    "observed lazy": (1, 60, 30.0),
}


@pytest.fixture(scope="session")
def site() -> Any:
    with FixtureSite() as server:
        yield server


class Archive:
    """A crawled archive opened read-only, with small helpers for assertions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        self.conn.row_factory = sqlite3.Row

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def page(self, url: str) -> sqlite3.Row | None:
        found = self.rows("SELECT * FROM pages WHERE url = ?", url)
        return found[0] if found else None

    def urls(self, where: str = "1", *params: Any) -> set[str]:
        return {r["url"] for r in self.rows(f"SELECT url FROM pages WHERE {where}", *params)}

    def internal_pages(self) -> set[str]:
        return self.urls("is_external = 0 AND content_type = 'text/html' AND redirect_dest_id IS NULL")

    def anchors_of(self, url: str) -> list[str]:
        return [
            r["url"]
            for r in self.rows(
                "SELECT t.url FROM anchors a JOIN pages p ON p.id = a.page_id"
                " JOIN pages t ON t.id = a.href_id WHERE p.url = ? ORDER BY a.id",
                url,
            )
        ]


def crawl_settings() -> Settings:
    settings = Settings()
    settings.setmodule("nitpicker.settings", priority="project")
    settings.set("LOG_LEVEL", "WARNING")
    return settings


async def crawl(
    tmp_path: Path, roots: list[str], settings: dict[str, Any] | None = None, **options: Any
) -> Archive:
    """Crawl ``roots`` in this process (the twisted reactor) and open the archive."""
    output = tmp_path / f"crawl-{len(list(tmp_path.glob('*.nitpicker')))}.nitpicker"
    options.setdefault("retry", 0)
    options.setdefault("render", False)
    config = CrawlConfig(roots=tuple(roots), output=str(output), **options)
    scrapy_settings = crawl_settings()
    scrapy_settings.update(settings or {}, priority="cmdline")
    runner = CrawlerRunner(scrapy_settings)
    await runner.crawl(SiteSpider, config=config)
    return Archive(output)
