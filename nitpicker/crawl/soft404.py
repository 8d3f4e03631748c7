"""Soft404Probes: one guaranteed-missing URL fetched for each directory of in-scope pages, so
that the pages a site answers like a missing one can be told (``content/soft-404``).

A site that answers a missing URL with 200 and a page ("Sorry, nothing here", or its home
page) hides its broken links from any link checker. Phrase lists guess; a probe asks the site:
at the first in-scope HTML response under a directory (``https://host/path/``), at most
``NITPICKER_SOFT404_PROBES`` directories a crawl (default 50), the URL of that directory and a
random token (``nitpicker-probe-…``, missing on any real site) is fetched once, on a thread, as
a plain GET that follows redirects. Its status, title, main content's hash and MinHash
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
import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured

from nitpicker.crawl.session import crawl_session
from nitpicker.items import Soft404Probe
from nitpicker.policy.extract import extract
from nitpicker.policy.minhash import fingerprint

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from nitpicker.archive.writer import ArchiveWriter
    from nitpicker.crawl.session import CrawlSession

__all__ = ["Soft404Probes", "directory_of", "probe"]

logger = logging.getLogger(__name__)

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


def probe(directory: str, user_agent: str, *, timeout: float = TIMEOUT) -> Soft404Probe:
    """Fetch a random missing URL of ``directory`` (blocking) and read what it answers."""
    url = f"{directory}nitpicker-probe-{secrets.token_hex(8)}"
    checked_at = datetime.now(UTC).isoformat(timespec="seconds")
    record = Soft404Probe(directory, url, checked_at)
    request = urllib.request.Request(url, headers={"User-Agent": user_agent})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            record.status, record.final_url = answer.status, answer.geturl()
            kind = answer.headers.get("Content-Type", "")
            body = answer.read(MAX_BYTES) if "html" in kind.lower() else b""
            charset = answer.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as exc:  # an error status: the site says "missing"
        record.status, record.final_url = exc.code, exc.geturl()
        return record
    except (OSError, ValueError) as exc:  # refused, timed out, a bad redirect
        record.error = str(exc)[:500]
        return record
    if body:
        found = extract(body.decode(charset, "replace"), max_anchors=0, content=True)
        record.title = found.meta.title
        if found.content is not None:
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

    def __init__(self, crawler: Crawler, session: CrawlSession, limit: int,
                 user_agent: str) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.session = session
        self.limit = limit
        self.user_agent = user_agent
        self._directories: set[str] = set()
        self._pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Soft404Probes:
        settings = crawler.settings
        limit = settings.getint("NITPICKER_SOFT404_PROBES")
        if limit <= 0:
            raise NotConfigured("NITPICKER_SOFT404_PROBES is 0")
        probes = cls(crawler, crawl_session(crawler), limit,
                     settings.get("USER_AGENT") or "nitpicker")
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
        directory = self.should_probe(response)
        if directory is None:
            return
        self._directories.add(directory)
        from twisted.internet.threads import deferToThread

        self._pending += 1
        self.stats.inc_value("nitpicker/soft404/probes")
        deferred = deferToThread(probe, directory, self.user_agent)
        deferred.addCallbacks(self._probed, self._failed)

    def _probed(self, record: Soft404Probe) -> None:
        self._pending -= 1
        if record.status == 200:
            self.stats.inc_value("nitpicker/soft404/answered_200")
        elif record.error is not None:
            self.stats.inc_value("nitpicker/soft404/failed")
        session = self.session
        if session.failure is None and session.worker is not None:
            session.write_behind(_write, session.archive, record)

    def _failed(self, failure: Any) -> None:
        self._pending -= 1
        self.stats.inc_value("nitpicker/soft404/failed")
        logger.warning("soft-404 probe failed: %s", failure.getErrorMessage())

    def spider_idle(self, **kwargs: Any) -> None:
        """Not closed while a probe is out, unless the crawl was halted."""
        if self._pending and self.session.halted is None:
            raise DontCloseSpider
