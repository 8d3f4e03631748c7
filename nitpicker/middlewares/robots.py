"""RobotsTxtMiddleware: Scrapy's, with every request waiting for robots.txt getting the parser.

Scrapy 2.19's ``RobotsTxtMiddleware`` keeps one ``Deferred`` per origin while robots.txt is
being fetched, and every concurrent request awaits that same ``Deferred`` through
``Deferred.asFuture``, whose callback returns ``None``: the first waiter gets the parser,
every later waiter gets ``None`` and is let through unchecked. Nitpicker's first requests of
a crawl (the roots, ``/sitemap.xml``) arrive together, so a blocked root was fetched. Here
each waiter gets its own ``Deferred`` fed by a pass-through callback. Replaces Scrapy's
middleware in the add-on (same priority, same settings: ``ROBOTSTXT_OBEY`` and friends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxt
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.robotstxt import RobotParser

__all__ = ["RobotsTxtMiddleware"]


class RobotsTxtMiddleware(ScrapyRobotsTxt):
    """Scrapy's robots.txt middleware; concurrent waiters all receive the parser."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if isinstance(pending, Deferred):
            waiter: Deferred[Any] = Deferred()

            def relay(result: Any) -> Any:
                waiter.callback(result)
                return result

            pending.addBoth(relay)
            parser: RobotParser | None = await maybe_deferred_to_future(waiter)
            return parser
        return await super().robot_parser(request)
