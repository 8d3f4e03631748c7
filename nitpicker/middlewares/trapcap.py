"""TrapCapMiddleware: the crawl-time soft cap on crawler traps (``--dedupe-cap``, seed 003).

Placeholder until the cap lands: disabled unless ``--dedupe-cap`` is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["TrapCapMiddleware"]


class TrapCapMiddleware:
    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapCapMiddleware:
        raise NotConfigured("--dedupe-cap is not set")
