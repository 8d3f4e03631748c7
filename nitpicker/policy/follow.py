"""The follow rules: what the crawl does with each discovered URL (SPEC §3.3).

| discovered URL                           | mode                                  |
|------------------------------------------|---------------------------------------|
| not http(s) (``mailto:``, ``tel:``)      | STUB: a row, never fetched            |
| matches ``--exclude`` / ``--exclude-url`` | EXCLUDED: a skipped row               |
| in scope, recursive crawl                | FULL                                  |
| in scope, ``--no-recursive``/``--single``/list mode | METADATA                   |
| out of scope, fetch-external on          | METADATA                              |
| out of scope, ``--no-fetch-external``    | STUB                                  |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.policy.excludes import Excludes
    from nitpicker.policy.scope import Scope
    from nitpicker.policy.urls import ParsedUrl

__all__ = ["FollowPolicy"]


class FollowPolicy:
    """Decides the :class:`FollowMode` of a URL. Subclass and override :meth:`should_follow`."""

    def __init__(self, config: CrawlConfig, scope: Scope, excludes: Excludes) -> None:
        self.config = config
        self.scope = scope
        self.excludes = excludes

    def is_external(self, url: ParsedUrl) -> bool:
        return not url.is_http or url not in self.scope

    def should_follow(self, url: ParsedUrl) -> tuple[FollowMode, bool]:
        """The mode for ``url`` and whether it is out of scope."""
        if not url.is_http:
            return FollowMode.STUB, True
        external = url not in self.scope
        if self.excludes.excludes_url(url):
            return FollowMode.EXCLUDED, external
        if not external:
            return (FollowMode.FULL if self.config.follows_links else FollowMode.METADATA), False
        if self.config.fetch_external:
            return FollowMode.METADATA, True
        return FollowMode.STUB, True
