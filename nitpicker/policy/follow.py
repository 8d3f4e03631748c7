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

from enum import IntEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nitpicker.policy.excludes import Excludes
    from nitpicker.policy.scope import Scope
    from nitpicker.policy.urls import ParsedUrl

__all__ = ["FollowMode", "FollowOptions", "FollowPolicy"]


class FollowMode(IntEnum):
    """What the crawl does with a discovered URL."""

    FULL = 0
    """In scope: fetch, extract, follow its links."""
    METADATA = 1
    """Fetch status, headers and the title from the first bytes; follow nothing."""
    STUB = 2
    """Recorded as a row, never fetched (``--no-fetch-external``, non-HTTP schemes)."""
    EXCLUDED = 3
    """Recorded as skipped (``--exclude``, ``--exclude-url``)."""
    CAPPED = 5
    """Found on a page of a capped trap signature (``--dedupe-cap``): a row, not queued."""
    INVALID = 4
    """A URL the archive cannot hold (longer than ``MAX_URL_LENGTH``): an error row, never
    fetched."""
    PREDICTED = 6
    """A page predicted ahead of a page's pager links (:mod:`nitpicker.policy.pagination`): a
    frontier row only, fetched like ``FULL``; recorded only when it answers as a page."""


class FollowOptions(Protocol):
    """The crawl options the follow rules read (a :class:`~nitpicker.crawl.config.CrawlConfig`)."""

    @property
    def follows_links(self) -> bool:
        """A recursive crawl: not ``--no-recursive``, ``--single`` or list mode."""

    @property
    def fetch_external(self) -> bool:
        """``--fetch-external``: out-of-scope URLs are fetched for their metadata."""


class FollowPolicy:
    """Decides the :class:`FollowMode` of a URL. Subclass and override :meth:`should_follow`."""

    def __init__(self, config: FollowOptions, scope: Scope, excludes: Excludes) -> None:
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
