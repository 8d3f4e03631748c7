"""Soft404Probes: one guaranteed-missing URL fetched for each directory of in-scope pages, so
that the pages a site answers like a missing one can be told (``content/soft-404``).

A site that answers a missing URL with 200 and a page ("Sorry, nothing here", or its home
page) hides its broken links from any link checker. Phrase lists guess; a probe asks the site:
at the first in-scope HTML response under a directory (``https://host/path/``), at most
``NITPICKER_SOFT404_PROBES`` directories a crawl (default 50), the URL of that directory and a
random token (``nitpicker-probe-…``, missing on any real site) is fetched once, through
Scrapy's downloader and its middlewares like any request of the crawl (so with the crawl's
credentials and headers in scope and without them out of it, behind the private-network
guard, obeying robots.txt), following redirects; the spider never sees it. Its status, title, main content's hash and MinHash
signature (as a page's, :mod:`nitpicker.policy.minhash`) go to the archive
(``soft404_probes``, never a page: no ``pages`` row, no frontier row, nothing linked). After
the crawl, a page whose title is a probe's that answered 200, and whose main content is the
same or nearly the same, is a soft 404.

A Scrapy extension, enabled by the add-on; ``NITPICKER_SOFT404_PROBES`` 0 disables it
(``NotConfigured``). The spider does not close while a probe is out. Stats:
``nitpicker/soft404/probes``, ``nitpicker/soft404/answered_200``, ``nitpicker/soft404/failed``.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured

from nitpicker.crawl.session import crawl_session
from nitpicker.items import Soft404Probe
from nitpicker.policy.extract import extract

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from nitpicker.archive.writer import ArchiveWriter
    from nitpicker.crawl.session import CrawlSession

__all__ = ["META_PROBE", "Soft404Probes", "directory_of", "probe_request", "read_probe"]

logger = logging.getLogger(__name__)

META_PROBE: Final = "nitpicker_soft404_probe"
"""The meta key of a probe's request: the directory it probes."""
MAX_BYTES: Final = 2 * 1024 * 1024
"""Bytes of a probe's answer read at most."""
TIMEOUT: Final = 15.0


def directory_of(url: str) -> str | None:
    """``scheme://host[:port]/path/``: the URL without its last path segment, query and
    fragment; ``None`` for a URL that is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path[: parts.path.rfind("/") + 1] or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def probe_request(directory: str) -> Request:
    """The request of ``directory``'s probe: a random token under it, never filtered, never
    retried, at most ``MAX_BYTES`` read, any status answered."""
    from scrapy import Request

    url = f"{directory}nitpicker-probe-{secrets.token_hex(8)}"
    return Request(url, dont_filter=True, meta={
        META_PROBE: directory, "dont_retry": True, "download_timeout": TIMEOUT,
        "download_maxsize": MAX_BYTES, "download_warnsize": 0})


def read_probe(record: Soft404Probe, response: Response) -> Soft404Probe:
    """``record`` with what ``response`` (after its redirects) answered: its status, and for
    an HTML answer its title and main content's hash and signature."""
    record.status, record.final_url = response.status, response.url
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1").lower()
    if response.status != 200 or "html" not in content_type or not response.body:
        return record
    found = extract(response.text, max_anchors=0, content=True)
    record.title = found.meta.title
    if found.content is not None:
        from nitpicker.policy.minhash import fingerprint  # numpy: only once a probe answers 200

        signed = fingerprint(found.content.text)
        record.words, record.content_hash = signed.words, signed.content_hash
        record.minhash = signed.minhash
    return record


def _write(writer: ArchiveWriter, record: Soft404Probe) -> None:
    """On the archive worker's thread."""
    writer.site.record_probe(record)
    writer.maybe_commit()


class Soft404Probes:
    """Probes each directory of in-scope HTML pages once, up to a number of directories."""

    def __init__(self, crawler: Crawler, session: CrawlSession, limit: int) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.session = session
        self.limit = limit
        self._directories: set[str] = set()
        self._pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Soft404Probes:
        settings = crawler.settings
        limit = settings.getint("NITPICKER_SOFT404_PROBES")
        if limit <= 0:
            raise NotConfigured("NITPICKER_SOFT404_PROBES is 0")
        probes = cls(crawler, crawl_session(crawler), limit)
        crawler.signals.connect(probes.response_received, signal=signals.response_received)
        crawler.signals.connect(probes.spider_idle, signal=signals.spider_idle)
        return probes

    def should_probe(self, response: Response) -> str | None:
        """The directory to probe for ``response`` (an in-scope HTML page's, not probed yet,
        while there is room); ``None``: none. A policy a subclass may change."""
        if len(self._directories) >= self.limit:
            return None
        content_type = response.headers.get(b"Content-Type", b"").decode("latin-1").lower()
        if "html" not in content_type or not self.session.in_scope(response.url):
            return None
        directory = directory_of(response.url)
        if directory is None or directory in self._directories:
            return None
        return directory

    def response_received(self, response: Response, request: Request, **kwargs: Any) -> None:
        if META_PROBE in request.meta:  # a probe's own answer
            return
        directory = self.should_probe(response)
        if directory is None:
            return
        self._directories.add(directory)
        from scrapy.utils.defer import deferred_from_coro

        self._pending += 1
        self.stats.inc_value("nitpicker/soft404/probes")
        probe = probe_request(directory)
        record = Soft404Probe(directory, probe.url,
                              datetime.now(UTC).isoformat(timespec="seconds"))
        engine = self.crawler.engine
        assert engine is not None
        # through the downloader middlewares, as any request of the crawl: the crawl's
        # credentials and headers in scope only (each redirect hop decided on its own URL),
        # the private-network guard, robots.txt, the user agent
        deferred = deferred_from_coro(engine.download_async(probe))
        deferred.addCallbacks(lambda answer: self._probed(read_probe(record, answer)),
                              lambda failure: self._probed(self._failed(record, failure)))

    def _probed(self, record: Soft404Probe) -> None:
        self._pending -= 1
        if record.status == 200:
            self.stats.inc_value("nitpicker/soft404/answered_200")
        elif record.error is not None:
            self.stats.inc_value("nitpicker/soft404/failed")
        session = self.session
        if session.failure is None and session.worker is not None:
            session.write_behind(_write, session.archive, record)

    def _failed(self, record: Soft404Probe, failure: Any) -> Soft404Probe:
        """``record`` with why its request got no answer (refused, timed out, robots.txt)."""
        logger.debug("soft-404 probe %s: %s", record.url, failure.getErrorMessage())
        record.error = (failure.getErrorMessage() or failure.type.__name__)[:500]
        return record

    def spider_idle(self, **kwargs: Any) -> None:
        """Not closed while a probe is out, unless the crawl was halted."""
        if self._pending and self.session.halted is None:
            raise DontCloseSpider
