"""``scrapy crawl``: Scrapy's command, with the ``site`` spider's arguments checked first.

Scrapy 2.19 builds the spider inside the crawl's asyncio task: an exception from its
constructor (``-a roots=not-a-url``, ``-a parallels=abc``) is printed by asyncio as "Task
exception was never retrieved" with a whole traceback. This command builds the crawl's
:class:`~nitpicker.crawl.config.CrawlConfig` from the ``-a`` arguments before it starts the crawl:
a bad argument is one logged error line (in the job's log under Scrapyd too) and exit code 1,
and no file is written. Other spiders, and the spider's own checks, are Scrapy's as before.

Enabled by ``COMMANDS_MODULE = "nitpicker.commands"`` in :mod:`nitpicker.settings`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from nitpicker.crawl.config import ConfigError
from nitpicker.crawl.spider_args import config_from_spider_args

if TYPE_CHECKING:
    import argparse

__all__ = ["Command"]

logger = logging.getLogger(__name__)


class Command(ScrapyCrawlCommand):
    """``scrapy crawl <spider> -a name=value …``, refusing bad ``site`` arguments in one line."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from nitpicker.crawl.redis_frontier import check_frontier_url
        from nitpicker.spiders.site import SiteSpider  # only when crawling: not for `scrapy list`

        if len(args) == 1 and self.crawler_process is not None:  # Scrapy reports the rest
            try:
                spidercls = self.crawler_process.spider_loader.load(args[0])
            except KeyError:  # no such spider: Scrapy's own message
                spidercls = None
            if spidercls is not None and issubclass(spidercls, SiteSpider):
                arguments = dict(opts.spargs)
                frontier = arguments.pop("frontier", None)
                try:
                    config_from_spider_args(arguments)
                    if frontier:
                        check_frontier_url(frontier)
                except ConfigError as exc:
                    logger.error("Bad spider argument for %s: %s", args[0], exc)
                    self.exitcode = 1
                    return
        super().run(args, opts)
