"""HostBreaker: a dead host costs one timeout, not one per URL (issue 27, item 2).

A site linking hundreds of URLs on a host that never answers made the crawl wait out the
download timeout for each of them. Here, per host (``host:port``), consecutive failures at the
connection or in TLS — DNS lookup failed, connection refused or reset, timeout, TLS error — are
counted, and any HTTP answer resets the count. After ``NITPICKER_HOST_BREAKER_FAILURES`` (3) in
a row the host is *open*: its requests still to come are not sent; each fails at once with
:class:`~nitpicker.crawl.fetch_errors.HostGivenUp`, and the spider records the URL with the
host's last error (``status`` -1, the error text, ``pages.untried = 1``: migration
``0037_untried``). After ``NITPICKER_HOST_BREAKER_PROBE_AFTER`` seconds (60) the next request
to the host goes out as a probe, alone: an answer closes the breaker (the host's next URLs are
fetched again), a failure keeps it open for as long again.

It counts a failure only once the outage guard (:mod:`nitpicker.middlewares.outage`) has let it
go — the network was up, the host was not — and sees each attempt the retry middleware makes:
a URL retried after the host was given up on is recorded with the host's error, as tried
(``untried = 0``). Each crawler process keeps its own breaker: with ``--workers N`` or the
Redis frontier a dead host costs each worker its first failures, then that worker gives it up
(``failures × workers`` timeouts at most, not one per URL).

A downloader middleware between the outage guard (560) and the retry middleware (550), at
555, enabled by the add-on; ``NITPICKER_HOST_BREAKER_ENABLED = False``, or the crawl option
``host_breaker`` off (``crawl --no-host-breaker``, ``-a host_breaker=false``), removes it. Stats: ``nitpicker/host_breaker/opened`` (hosts given up
on), ``…/given_up`` (requests not sent), ``…/probes``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from nitpicker.crawl.fetch_errors import HostGivenUp, describe_failure, is_host_failure
from nitpicker.crawl.meta import META_HOST_PROBE

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

__all__ = ["BreakerSettings", "HostBreaker", "HostState", "host_key"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class BreakerSettings:
    """The ``NITPICKER_HOST_BREAKER_*`` settings, parsed once."""

    failures: int = 3
    probe_after: float = 60.0

    def __post_init__(self) -> None:
        if self.failures < 1:
            raise ValueError(
                f"NITPICKER_HOST_BREAKER_FAILURES must be at least 1, got {self.failures}")
        if self.probe_after < 0:
            raise ValueError("NITPICKER_HOST_BREAKER_PROBE_AFTER must not be negative, "
                             f"got {self.probe_after}")

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> BreakerSettings:
        return cls(failures=settings.getint("NITPICKER_HOST_BREAKER_FAILURES"),
                   probe_after=settings.getfloat("NITPICKER_HOST_BREAKER_PROBE_AFTER"))


@dataclass
class HostState:
    """What the breaker knows of one host."""

    failures: int = 0
    """Connection failures in a row (an answer resets it)."""
    error: str = ""
    """The last one, as recorded."""
    probe_at: float | None = None
    """When the host is given up on: the monotonic time its probe may go (None: closed)."""
    probing: bool = False
    """A probe is in flight."""


class HostBreaker:
    """Gives up on a host after consecutive connection failures (see the module's doc)."""

    def __init__(self, config: BreakerSettings, stats: StatsCollector) -> None:
        self.config = config
        self.stats = stats
        self.hosts: dict[str, HostState] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostBreaker:
        settings = crawler.settings
        if not settings.getbool("NITPICKER_HOST_BREAKER_ENABLED"):
            raise NotConfigured("NITPICKER_HOST_BREAKER_ENABLED is false")
        config: Any = getattr(getattr(crawler.spider, "session", None), "config", None)
        if config is not None and not config.host_breaker:
            raise NotConfigured("--no-host-breaker")
        try:
            parsed = BreakerSettings.from_settings(settings)
        except ValueError as exc:
            raise NotConfigured(str(exc)) from exc
        assert crawler.stats is not None
        return cls(parsed, crawler.stats)

    # -- the policy (override in a subclass) -------------------------------------------------

    def counts(self, exception: BaseException) -> bool:
        """Whether a download failure counts against its host."""
        return is_host_failure(exception)

    def given_up_error(self, state: HostState) -> str:
        """The error recorded for a URL of a given-up host."""
        return (f"{state.error} (host given up on after {self.config.failures} connection "
                "failures in a row: not requested)")

    # -- the middleware ----------------------------------------------------------------------

    def process_request(self, request: Request) -> None:
        key = host_key(request)
        state = self.hosts.get(key)
        if state is None or state.probe_at is None:
            return
        if not state.probing and monotonic() >= state.probe_at:
            state.probing = True
            request.meta[META_HOST_PROBE] = True
            self.stats.inc_value("nitpicker/host_breaker/probes")
            logger.info("probing %s, given up on: %s", key, request.url)
            return
        self.stats.inc_value("nitpicker/host_breaker/given_up")
        raise HostGivenUp(self.given_up_error(state),
                          untried=not request.meta.get("retry_times"))

    def process_response(self, request: Request, response: Response) -> Response:
        key = host_key(request)
        state = self.hosts.get(key)
        if state is not None and (state.failures or state.probe_at is not None):
            if state.probe_at is not None:
                logger.info("%s answers again: its URLs are fetched", key)
            self.hosts[key] = HostState()
        return response

    def process_exception(self, request: Request, exception: BaseException) -> None:
        if isinstance(exception, HostGivenUp) or not self.counts(exception):
            return
        key = host_key(request)
        state = self.hosts.setdefault(key, HostState())
        state.failures += 1
        state.error = _described(exception)
        probe = bool(request.meta.pop(META_HOST_PROBE, False))
        if probe or (state.probe_at is None and state.failures >= self.config.failures):
            state.probe_at = monotonic() + self.config.probe_after
            state.probing = False
            if not probe:
                self.stats.inc_value("nitpicker/host_breaker/opened")
                logger.warning("giving up on %s after %d connection failures in a row (%s); "
                               "probing it again in %.0f s", key, state.failures, state.error,
                               self.config.probe_after)


def host_key(request: Request) -> str:
    """``host:port`` of a request's URL (the port spelled out: 80, 443)."""
    parts = urlparse_cached(request)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


def _described(exception: BaseException) -> str:
    from twisted.python.failure import Failure

    return describe_failure(Failure(exception))

