"""Sitemaps: seed the frontier from robots.txt ``Sitemap:`` lines and ``/sitemap.xml``.

``SitemapSeeder`` is a Scrapy extension, enabled by the add-on and active when
``NITPICKER_SITEMAP_ENABLED`` is true (``NotConfigured`` otherwise): the site spider sets it
false for ``--no-sitemap`` and for a crawl that does not follow links (``--single``, list
mode, a resume). It requests ``/sitemap.xml`` of every root's origin
and every sitemap that a parsed robots.txt names (through Scrapy's own robots.txt fetch:
one fetch per origin). Sitemap indexes are followed, gzip documents are read, and each
document is read up to ``NITPICKER_SITEMAP_MAX_BYTES`` (default 10 MiB, compressed and
uncompressed alike) and skipped whole beyond it. In-scope URLs are queued and every listed
page is marked ``pages.in_sitemap = 1``, so orphan pages (in a sitemap, linked from no page)
can be found. Every document asked for is recorded (``sitemaps``: who named it, its status,
kind, entries and size, or why it was not read) with the URLs it lists (``sitemap_urls``),
for the sitemap checks; a gzip document over the cap is still counted, up to
:data:`SIZE_COUNTED` bytes, to tell one over the protocol's 50 MB. Stats:
``nitpicker/sitemap/documents``, ``nitpicker/sitemap/urls``, ``nitpicker/sitemap/skipped``.
"""

from __future__ import annotations

import gzip
import logging
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.sitemap import Sitemap

from nitpicker.crawl.meta import META_SITEMAP
from nitpicker.crawl.session import crawl_session
from nitpicker.items import SitemapRecord

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser
    from twisted.python.failure import Failure

__all__ = ["SIZE_COUNTED", "SitemapDocument", "SitemapItem", "SitemapSeeder", "SitemapTooLarge",
           "read_sitemap"]

logger = logging.getLogger(__name__)

_GZIP_MAGIC = b"\x1f\x8b"

SIZE_COUNTED = 50 * 1024 * 1024 + 1
"""How far a gzip document over the cap is decompressed (and thrown away) to count its size:
one byte past the protocol's 50 MB (52,428,800 bytes)."""

_COUNT_CHUNK = 1024 * 1024


class SitemapTooLarge(Exception):
    """A sitemap document is larger than the byte cap: it is skipped whole."""

    def __init__(self, message: str, size: int | None = None) -> None:
        super().__init__(message)
        self.size = size
        """Its bytes as far as they were counted (at most :data:`SIZE_COUNTED`); ``None``:
        unknown."""


@dataclass
class SitemapDocument:
    """What one sitemap document lists."""

    is_index: bool
    urls: list[str]
    size: int = 0
    """Its bytes, uncompressed."""


@dataclass
class SitemapItem:
    """URLs a sitemap listed, for the archive pipeline, and the document's record."""

    sitemap_url: str
    urls: list[str] = field(default_factory=list)
    record: SitemapRecord | None = None
    """The document (``None``: only its URLs are recorded)."""


def _gunzip(body: bytes, max_bytes: int) -> bytes:
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = decompressor.decompress(body, max_bytes + 1)
    if len(out) > max_bytes or decompressor.unconsumed_tail:
        size = len(out)
        rest = decompressor.unconsumed_tail
        while rest and size < SIZE_COUNTED:
            size += len(decompressor.decompress(rest, _COUNT_CHUNK))
            rest = decompressor.unconsumed_tail
        raise SitemapTooLarge(f"more than {max_bytes} bytes once decompressed",
                              min(size, SIZE_COUNTED))
    return out


def read_sitemap(body: bytes, max_bytes: int) -> SitemapDocument:
    """Parse a sitemap or sitemap index (plain or gzip); ``SitemapTooLarge`` beyond the cap."""
    if len(body) > max_bytes:
        raise SitemapTooLarge(f"more than {max_bytes} bytes", len(body))
    if body[:2] == _GZIP_MAGIC:
        try:
            body = _gunzip(body, max_bytes)
        except (OSError, zlib.error, gzip.BadGzipFile) as exc:
            raise ValueError(f"not a valid gzip document: {exc}") from exc
    try:
        sitemap = Sitemap(body)
    except Exception as exc:  # lxml raises several types on garbage; a bad document is skipped
        raise ValueError(f"not a sitemap: {exc}") from exc
    urls = [entry["loc"].strip() for entry in sitemap if entry.get("loc")]
    return SitemapDocument(is_index=sitemap.type == "sitemapindex", urls=urls, size=len(body))


class SitemapSeeder:
    """Requests the sitemaps of the crawl's origins and queues what they list."""

    def __init__(self, crawler: Crawler, roots: Sequence[str], max_bytes: int,
                 max_documents: int) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.roots = tuple(roots)
        self.max_bytes = max_bytes
        self.max_documents = max_documents
        self._requested: dict[str, str | None] = {}
        """Each document asked for: who named it (``None``: a guess)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SitemapSeeder:
        settings = crawler.settings
        if not settings.getbool("NITPICKER_SITEMAP_ENABLED"):
            raise NotConfigured  # --no-sitemap, --single…: no "Disabled" warning for them
        seeder = cls(crawler, crawl_session(crawler).config.roots,
                     max_bytes=settings.getint("NITPICKER_SITEMAP_MAX_BYTES"),
                     max_documents=settings.getint("NITPICKER_SITEMAP_MAX_DOCUMENTS"))
        crawler.signals.connect(seeder.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(seeder.robots_parsed, signal=signals.robots_parsed)
        return seeder

    def spider_opened(self) -> None:
        for root in self.roots:
            parts = urlsplit(root)
            self.request(f"{parts.scheme}://{parts.netloc}/sitemap.xml")

    def robots_parsed(self, robotparser: RobotParser, request: Request, **kwargs: Any) -> None:
        # Scrapy's default robots.txt parser is Protego, which keeps the ``Sitemap:`` lines
        # (another ROBOTSTXT_PARSER leaves only /sitemap.xml).
        if not isinstance(robotparser, ProtegoRobotParser):
            return
        for url in robotparser.rp.sitemaps:
            self.request(url, found_in=request.url)

    def request(self, url: str, found_in: str | None = None) -> None:
        """Schedule one sitemap document (once, and at most NITPICKER_SITEMAP_MAX_DOCUMENTS);
        ``found_in``: the robots.txt or index naming it."""
        if url in self._requested or len(self._requested) >= self.max_documents:
            return
        self._requested[url] = found_in
        engine = self.crawler.engine
        assert engine is not None
        engine.crawl(
            Request(
                url,
                callback=self.parse,
                errback=self.failed,
                dont_filter=True,
                meta={META_SITEMAP: True, "download_maxsize": self.max_bytes,
                      "download_warnsize": 0},
            )
        )

    def _record(self, url: str, **facts: Any) -> SitemapRecord:
        return SitemapRecord(url, self._requested.get(url), **facts)

    async def parse(self, response: Response) -> Any:
        """The document's item; parsed on a thread: a sitemap of 50,000 URLs takes a quarter
        of a second, which would hold every response in flight (and their timings) back."""
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet.threads import deferToThread

        requested = (response.meta.get("redirect_urls") or [response.url])[0]
        if response.status != 200:
            self.stats.inc_value("nitpicker/sitemap/skipped")
            return SitemapItem(response.url, record=self._record(
                requested, status=response.status, error=f"answers {response.status}"))
        try:
            document = await maybe_deferred_to_future(
                deferToThread(read_sitemap, response.body, self.max_bytes))
        except (SitemapTooLarge, ValueError) as exc:
            self.stats.inc_value("nitpicker/sitemap/skipped")
            logger.warning("sitemap skipped: %s (%s)", response.url, exc)
            size = exc.size if isinstance(exc, SitemapTooLarge) else len(response.body)
            return SitemapItem(response.url, record=self._record(
                requested, status=200, size=size, error=str(exc)))
        self.stats.inc_value("nitpicker/sitemap/documents")
        record = self._record(requested, status=200,
                              kind="sitemapindex" if document.is_index else "urlset",
                              entries=len(document.urls), size=document.size)
        if document.is_index:
            for url in document.urls:
                self.request(url, found_in=requested)
            return SitemapItem(response.url, record=record)
        self.stats.inc_value("nitpicker/sitemap/urls", len(document.urls))
        return SitemapItem(response.url, document.urls, record)

    def failed(self, failure: Failure) -> SitemapItem | None:
        self.stats.inc_value("nitpicker/sitemap/skipped")
        request = getattr(failure, "request", None)
        url = getattr(request, "url", "?")
        logger.info("sitemap skipped: %s (%s)", url, failure.getErrorMessage())
        if request is None:
            return None
        requested = (request.meta.get("redirect_urls") or [url])[0]
        response = getattr(failure.value, "response", None)  # an HttpError's
        if response is not None:
            return SitemapItem(url, record=self._record(
                requested, status=response.status, error=f"answers {response.status}"))
        return SitemapItem(url, record=self._record(
            requested, status=-1, error=failure.getErrorMessage() or "no answer"))
