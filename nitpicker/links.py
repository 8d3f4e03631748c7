"""LinkResolver: hrefs found on a page, resolved and normalised, with a bounded cache.

Most links on a site are the same navigation links on every page, so the normalised form
of each absolute URL is cached (least recently used entries go first; memory stays flat).
"""

from __future__ import annotations

from collections import OrderedDict

from nitpicker.urls import ParsedUrl, join_href, parse_url

__all__ = ["LinkResolver"]

_SKIP_PREFIXES = ("#", "javascript:", "data:")


class LinkResolver:
    """Resolves raw hrefs against a page URL into :class:`ParsedUrl` objects."""

    def __init__(self, *, disable_queries: bool = False, cache_size: int = 20_000) -> None:
        self.disable_queries = disable_queries
        self.cache_size = cache_size
        self._cache: OrderedDict[str, ParsedUrl | None] = OrderedDict()

    def resolve(self, base: str, href: str) -> ParsedUrl | None:
        """The normalised target of ``href`` on a page at ``base``; ``None`` when not a URL.

        Same-page fragments, ``javascript:`` and ``data:`` hrefs are not links to a URL.
        """
        if not href or href.startswith(_SKIP_PREFIXES):
            return None
        absolute = join_href(base, href)
        cache = self._cache
        try:
            parsed = cache[absolute]
        except KeyError:
            parsed = parse_url(absolute, disable_queries=self.disable_queries)
            cache[absolute] = parsed
            if len(cache) > self.cache_size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(absolute)
        return parsed
