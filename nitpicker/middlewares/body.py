"""BodyGuard: stop downloads nitpicker does not need past their headers.

A non-HTML response (PDF, image, archive) is recorded from its status and headers; its body
is never downloaded. A metadata-only fetch (an external link, a link of a ``--single`` page)
reads at most ``NITPICKER_METADATA_BYTES`` (16 KiB) — enough for the title. Implemented with
the ``headers_received`` and ``bytes_received`` signals raising ``StopDownload``. An
extension, always enabled by the add-on (``NotConfigured`` for a spider without a crawl
session); stats ``nitpicker/body/headers_only`` and
``nitpicker/body/truncated``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import StopDownload

from nitpicker.crawl.meta import META_BYTES_RECEIVED, META_MODE, META_PREFLIGHT, is_html, media_type
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Headers
    from scrapy.statscollectors import StatsCollector

    from nitpicker.crawl.session import CrawlSession

__all__ = ["BodyGuard"]


class BodyGuard:
    """Ends non-HTML downloads after the headers and metadata-only downloads early."""

    def __init__(self, session: CrawlSession, stats: StatsCollector, metadata_bytes: int) -> None:
        self.session = session
        self.stats = stats
        self.metadata_bytes = metadata_bytes

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BodyGuard:
        guard = cls(crawl_session(crawler), crawler.stats,
                    crawler.settings.getint("NITPICKER_METADATA_BYTES"))
        crawler.signals.connect(guard.headers_received, signal=signals.headers_received)
        crawler.signals.connect(guard.bytes_received, signal=signals.bytes_received)
        return guard

    def headers_received(self, headers: Headers, body_length: int, request: Request,
                         **kwargs: Any) -> None:
        if META_MODE not in request.meta:
            return  # robots.txt and other internal requests
        content_type = media_type(headers)
        if content_type is not None and not is_html(content_type):
            self.stats.inc_value("nitpicker/body/headers_only")
            raise StopDownload(fail=False)
        if request.meta.get(META_PREFLIGHT) and self.session.in_scope(request.url):
            # The browser fetches this page next: its HTTP body is not needed.
            self.stats.inc_value("nitpicker/body/headers_only")
            raise StopDownload(fail=False)

    def bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        meta = request.meta
        if meta.get(META_MODE) != FollowMode.METADATA and not (
            meta.get(META_PREFLIGHT) and not self.session.in_scope(request.url)
        ):
            return
        received = meta.get(META_BYTES_RECEIVED, 0) + len(data)
        meta[META_BYTES_RECEIVED] = received
        if received >= self.metadata_bytes:
            self.stats.inc_value("nitpicker/body/truncated")
            raise StopDownload(fail=False)
