"""Crawlers for the unit tests of one crawl component (middleware, pipeline, scheduler).

:func:`unit_crawler` is :func:`scrapy.utils.test.get_crawler` with the site spider: a real
:class:`~nitpicker.crawl.session.CrawlSession` of a real :class:`~nitpicker.crawl.config.CrawlConfig`
whose archive is a SQLite file in ``tmp_path``, and the settings a crawl would have (the
add-on's defaults, the crawl options projected by the spider, then the test's own). The
engine never starts: a test builds the component with its ``from_crawler`` and feeds it
real ``Request``/``Response`` objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.settings import BaseSettings
from scrapy.utils.test import get_crawler

from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.session import CrawlSession, crawl_session
from nitpicker.spiders.site import SiteSpider

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

__all__ = ["ROOT", "open_session", "projected_settings", "unit_crawler"]

ROOT = "http://site.test/"


def projected_settings(config: CrawlConfig, operator: dict[str, Any] | None = None,
                       priority: str = "project") -> dict[str, Any]:
    """The settings of a crawl of ``config``: the operator's (at ``priority``), then the crawl
    options the spider projects over them, as ``scrapy crawl`` orders them."""
    settings = BaseSettings()
    settings.update(operator or {}, priority=priority)
    SiteSpider(config=config).project_options(settings)
    return settings.copy_to_dict()


def unit_crawler(tmp_path: Path, roots: tuple[str, ...] = (ROOT,),
                 settings: dict[str, Any] | None = None, output: Path | None = None,
                 **options: Any) -> Crawler:
    """A crawler whose spider is the site spider crawling ``roots`` into ``tmp_path`` (or into
    ``output``, e.g. an archive to resume with ``resume=True``).

    ``options`` are crawl options (``render`` is off unless given); ``settings`` are set over
    the projected ones. The session is not open: :func:`open_session` opens it.
    """
    options.setdefault("render", False)
    if output is None:
        output = tmp_path / f"unit-{len(list(tmp_path.glob('unit-*.nitpicker')))}.nitpicker"
    config = CrawlConfig(roots=roots, output=str(output), **options)
    crawler = get_crawler(SiteSpider, {**projected_settings(config), **(settings or {})})
    spider = SiteSpider(config=config)
    spider._set_crawler(crawler)  # what Spider.from_crawler does, without the projection
    crawler.spider = spider
    return crawler


def open_session(crawler: Crawler) -> CrawlSession:
    """The crawler's session, opened: the archive is created and the roots are queued."""
    session = crawl_session(crawler)
    session.open()
    return session
