"""TlsProbe: the TLS certificate of each https origin the crawl fetches in its scope.

Scrapy does not verify certificates (a crawl reads a site whatever its TLS), so what a
browser would say about them is asked separately: at the first in-scope https response of
an origin (``scheme://host:port``), one TLS handshake of its own, on a thread, to the address
the response came from, verified as a browser would (Python's default context: the system's
trusted certificates, or ``SSL_CERT_FILE``; the host name checked). A certificate refused is
looked at again unverified, for its dates and issuer. The result goes to the archive
(``tls_certificates``, :meth:`~nitpicker.archive.site_facts.SiteFacts.record_certificate`);
an origin that cannot be reached at all (refused, timed out) records nothing.

A Scrapy extension, enabled by the add-on; ``NITPICKER_TLS_CHECK`` false disables it
(``NotConfigured``), ``NITPICKER_TLS_CHECK_TIMEOUT`` bounds each handshake. The spider does not
close while a handshake is out (``spider_idle``). Stats: ``nitpicker/tls/checked``,
``nitpicker/tls/invalid``, ``nitpicker/tls/unreachable``.
"""

from __future__ import annotations

import logging
import socket
import ssl
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured

from nitpicker.crawl.session import crawl_session
from nitpicker.items import CertificateRecord

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from nitpicker.archive.writer import ArchiveWriter
    from nitpicker.crawl.session import CrawlSession

__all__ = ["TlsProbe", "https_origin", "look_at_certificate"]

logger = logging.getLogger(__name__)


def https_origin(url: str) -> tuple[str, str, int] | None:
    """``(origin, host, port)`` of an https URL (``https://host`` without its default port);
    ``None`` for any other URL."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return None
    host = parts.hostname
    try:
        port = parts.port or 443
    except ValueError:
        return None
    shown = f"[{host}]" if ":" in host else host
    return (f"https://{shown}" if port == 443 else f"https://{shown}:{port}"), host, port


def _read(der: bytes) -> tuple[str, str]:
    """The end of validity (ISO 8601, UTC) and the issuer of a DER certificate."""
    from cryptography import x509

    certificate = x509.load_der_x509_certificate(der)
    return (certificate.not_valid_after_utc.isoformat(timespec="seconds"),
            certificate.issuer.rfc4514_string())


def _handshake(context: ssl.SSLContext, address: str, host: str, port: int,
               timeout: float) -> bytes | None:
    with (socket.create_connection((address, port), timeout=timeout) as sock,
          context.wrap_socket(sock, server_hostname=host) as tls):
        return tls.getpeercert(binary_form=True)


def look_at_certificate(origin: str, host: str, port: int, address: str | None = None, *,
                        timeout: float = 10.0) -> CertificateRecord | None:
    """The certificate ``host:port`` presents (at ``address``, else the host's), verified as a
    browser would; ``None`` when no TLS connection could be made at all. Blocking."""
    checked_at = datetime.now(UTC).isoformat(timespec="seconds")
    where = address or host
    error = None
    try:
        der = _handshake(ssl.create_default_context(), where, host, port, timeout)
    except ssl.SSLCertVerificationError as exc:
        error = exc.verify_message or str(exc)
        unverified = ssl.create_default_context()
        unverified.check_hostname = False
        unverified.verify_mode = ssl.CERT_NONE
        try:
            der = _handshake(unverified, where, host, port, timeout)
        except OSError:
            der = None
    except ssl.SSLError as exc:  # no certificate to judge: the handshake itself failed
        return CertificateRecord(origin, checked_at, error=f"TLS handshake failed: {exc}")
    except OSError as exc:
        logger.info("TLS check of %s: not reachable (%s)", origin, exc)
        return None
    if der is None:
        return CertificateRecord(origin, checked_at, error=error)
    not_after, issuer = _read(der)
    return CertificateRecord(origin, checked_at, not_after, issuer, error)


def _write(writer: ArchiveWriter, record: CertificateRecord) -> None:
    """On the archive worker's thread."""
    writer.site.record_certificate(record)
    writer.maybe_commit()


class TlsProbe:
    """Looks once at the certificate of each in-scope https origin the crawl fetches."""

    def __init__(self, crawler: Crawler, session: CrawlSession, timeout: float) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.session = session
        self.timeout = timeout
        self._origins: set[str] = set()
        self._pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TlsProbe:
        settings = crawler.settings
        if not settings.getbool("NITPICKER_TLS_CHECK"):
            raise NotConfigured("NITPICKER_TLS_CHECK is off")
        probe = cls(crawler, crawl_session(crawler),
                    settings.getfloat("NITPICKER_TLS_CHECK_TIMEOUT"))
        crawler.signals.connect(probe.response_received, signal=signals.response_received)
        crawler.signals.connect(probe.spider_idle, signal=signals.spider_idle)
        return probe

    def response_received(self, response: Response, request: Request, **kwargs: Any) -> None:
        found = https_origin(response.url)
        if found is None or found[0] in self._origins:
            return
        origin, host, port = found
        if not self.session.in_scope(response.url):
            return
        self._origins.add(origin)
        address = getattr(response, "ip_address", None)
        from twisted.internet.threads import deferToThread

        self._pending += 1
        deferred = deferToThread(look_at_certificate, origin, host, port,
                                 str(address) if address is not None else None,
                                 timeout=self.timeout)
        deferred.addCallbacks(self._looked, self._failed)

    def _looked(self, record: CertificateRecord | None) -> None:
        self._pending -= 1
        if record is None:
            self.stats.inc_value("nitpicker/tls/unreachable")
            return
        self.stats.inc_value("nitpicker/tls/checked")
        if record.error is not None:
            self.stats.inc_value("nitpicker/tls/invalid")
        session = self.session
        if session.failure is None and session.worker is not None:
            session.write_behind(_write, session.archive, record)

    def _failed(self, failure: Any) -> None:
        self._pending -= 1
        self.stats.inc_value("nitpicker/tls/unreachable")
        logger.warning("TLS check failed: %s", failure.getErrorMessage())

    def spider_idle(self, **kwargs: Any) -> None:
        """Not closed while a handshake is out (its result is part of the crawl), unless the
        crawl was halted (``--max-pages``, ``--max-duration``)."""
        if self._pending and self.session.halted is None:
            raise DontCloseSpider
