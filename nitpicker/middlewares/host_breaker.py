"""HostBreaker: a dead host costs one timeout, not one per URL (issue 27, item 2).

A site linking hundreds of URLs on a host that never answers made the crawl wait out the
download timeout for each of them. Here, per host (``host:port``) of the out-of-scope checks
(``FollowMode.METADATA``; the site's own pages are never held or given up on: a site that
stops answering is the outage guard's), consecutive failures at the connection or in TLS —
DNS lookup failed, connection refused or reset, timeout, TLS error — are counted, and any
HTTP answer resets the count. While a host has failed and not answered since, it gets no more
requests in flight than the failures still needed to give it up (the others wait for their
outcome), so that a dead host is given up on after one round of timeouts, not after every
request already sent has timed out. After ``NITPICKER_HOST_BREAKER_FAILURES`` (3) in
a row the host is *open*: its requests still to come are not sent — those waiting in the
downloader's queue for the host's slot are taken out of it at once — and each fails with
:class:`~nitpicker.crawl.fetch_errors.HostGivenUp`, and the spider records the URL with the
host's last error (``status`` -1, the error text, ``pages.untried = 1``: migration
``0037_untried``).

A host's robots.txt (Scrapy's robots.txt middleware fetches it before the host's first check,
which waits for it) counts for all ``NITPICKER_HOST_BREAKER_FAILURES`` at once: when it fails
at the connection, the host is given up on there and then, and a retry of it is not sent
(``IgnoreRequest``: the checks waiting for it are answered at once). It is one small file
that every live server answers, a 404 as well as a 200, and it is the host's first contact,
so one failure costs a whole download timeout before anything else is learnt; counted as
one of three, a dead host cost that timeout and then another for the two requests still
needed (``bench/dead_hosts.py``: twice the timeout). A slow host wrongly given up on is
probed after the wait below and its later URLs are fetched; those recorded meanwhile say
"not requested" (``nitpicker crawl --retry-failed`` fetches them again). The robots.txt of a
root's host counts as one failure, as any request: the site's own host is not given up on for
one slow answer.

After ``NITPICKER_HOST_BREAKER_PROBE_AFTER`` seconds (60) the next request to the host goes
out as a probe, alone: an answer closes the breaker (the host's next URLs are fetched again), a
failure keeps it open for as long again.

It counts a failure only once the outage guard (:mod:`nitpicker.middlewares.outage`) has let it
go — the network was up, the host was not — and sees each attempt the retry middleware makes:
a URL retried after the host was given up on is recorded with the host's error, as tried
(``untried = 0``).

With ``--workers N`` or a Redis frontier each crawler process has its breaker, and they share
what they give up on through the frontier (:mod:`nitpicker.archive.host_board`): a host given
up on here is published with its error and probe time, and the hosts the other workers gave up
on are learnt with the round trips the frontier makes anyway (a lease, a flush of
acknowledgements, a count), then given up on here as if this worker had (its queued requests
failed, its robots.txt not fetched; stat ``…/learnt``). Nothing is asked of the store on a
request's path, so a worker that reaches the host in the moments before it learns it still
spends its own first failures. Probes stay local: each worker probes a learnt host once its
probe time is up; a failed probe is published again and moves the others' probes back, and a
host that answers any worker is withdrawn from the board (the others keep it until their own
probe).

A downloader middleware between the outage guard (560) and the retry middleware (550), at
555, enabled by the add-on; ``NITPICKER_HOST_BREAKER_ENABLED = False``, or the crawl option
``host_breaker`` off (``crawl --no-host-breaker``, ``-a host_breaker=false``), removes it.
Stats: ``nitpicker/host_breaker/opened`` (hosts given up on), ``…/learnt`` (hosts another
worker gave up on), ``…/given_up`` (requests not sent), ``…/probes``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from time import monotonic
from typing import TYPE_CHECKING, Any
from urllib.parse import ParseResult, SplitResult, urlsplit

from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from nitpicker.archive.host_board import GivenUpHost
from nitpicker.crawl.fetch_errors import HostGivenUp, describe_failure, is_host_failure
from nitpicker.crawl.meta import META_HOST_PROBE, META_MODE
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from nitpicker.archive.host_board import HostBoard

__all__ = ["BreakerSettings", "HostBreaker", "HostState", "host_key", "is_robots_txt",
           "url_host_key"]

logger = logging.getLogger(__name__)

_CHECK, _FULL = int(FollowMode.METADATA), int(FollowMode.FULL)

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
    sent: set[Request] = field(default_factory=set)
    """Requests sent since its first failure, not settled yet."""
    waiters: list[Deferred[None]] = field(default_factory=list)
    """Requests waiting for those to settle."""
    why: str = ""
    """Why it was given up on, as the recorded error says it ("after 3 connection failures in
    a row")."""


class HostBreaker:
    """Gives up on a host after consecutive connection failures (see the module's doc)."""

    def __init__(self, config: BreakerSettings, stats: StatsCollector,
                 crawler: Crawler | None = None, site_hosts: Iterable[str] = (),
                 board: HostBoard | None = None) -> None:
        self.config = config
        self.stats = stats
        self.crawler = crawler
        self.site_hosts = frozenset(site_hosts)
        """``host:port`` of the crawl's roots: their robots.txt counts as one failure."""
        self.hosts: dict[str, HostState] = {}
        self.board = board
        """The hosts given up on that the other workers are told and that they gave up on
        (``--workers N``, a Redis frontier); ``None`` or not shared: this process's only."""
        self._board_version = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostBreaker:
        settings = crawler.settings
        if not settings.getbool("NITPICKER_HOST_BREAKER_ENABLED"):
            raise NotConfigured("NITPICKER_HOST_BREAKER_ENABLED is false")
        session = getattr(crawler.spider, "session", None)
        config: Any = getattr(session, "config", None)
        if config is not None and not config.host_breaker:
            raise NotConfigured("--no-host-breaker")
        try:
            parsed = BreakerSettings.from_settings(settings)
        except ValueError as exc:
            raise NotConfigured(str(exc)) from exc
        assert crawler.stats is not None
        roots = config.roots if config is not None else ()
        board = getattr(session, "host_board", None)
        return cls(parsed, crawler.stats, crawler, site_hosts=map(url_host_key, roots),
                   board=board)

    # -- the policy (override in a subclass) -------------------------------------------------

    def counts(self, exception: BaseException) -> bool:
        """Whether a download failure counts against its host."""
        return is_host_failure(exception)

    def weight(self, request: Request, exception: BaseException) -> int:
        """How many failures in a row a counted failure stands for: one, or all it takes to
        give the host up when it is the robots.txt of a host that is not a root's (the
        host's first contact, one small file: a host that cannot answer it is taken for
        dead until its probe; see the module's doc)."""
        if is_robots_txt(request) and host_key(request) not in self.site_hosts:
            return self.config.failures
        return 1

    def given_up_error(self, state: HostState) -> str:
        """The error recorded for a URL of a given-up host."""
        why = state.why or f"after {self.config.failures} connection failures in a row"
        return f"{state.error} (host given up on {why}: not requested)"

    # -- the middleware ----------------------------------------------------------------------

    async def process_request(self, request: Request) -> None:
        board = self.board
        if board is not None and board.version != self._board_version:
            self._learn(board)
        if not self.hosts:
            return  # no host has failed: nothing to look up
        if request.meta.get(META_MODE) != _CHECK:
            self._refuse_robots_txt(request)
            return  # not a check: never held
        key = host_key(request)
        state = self.hosts.get(key)
        if state is None or self._admit(request, key, state):
            return
        await self._wait_turn(request, key)

    def _admit(self, request: Request, key: str, state: HostState) -> bool:
        """Whether a request to a host that failed may go now; ``HostGivenUp`` when the host
        is given up on. A host that failed and has not answered since gets no more requests
        in flight than the failures it takes to give it up: the others wait for their
        outcome."""
        if state.probe_at is not None:
            if state.probing or monotonic() < state.probe_at:
                self.stats.inc_value("nitpicker/host_breaker/given_up")
                raise self._given_up(request, state)
            state.probing = True
            request.meta[META_HOST_PROBE] = True
            self.stats.inc_value("nitpicker/host_breaker/probes")
            logger.info("probing %s, given up on: %s", key, request.url)
        elif state.failures + len(state.sent) >= self.config.failures:
            return False
        state.sent.add(request)
        return True

    async def _wait_turn(self, request: Request, key: str) -> None:
        """Wait until the request may go (or raise ``HostGivenUp``). It looks first: the host
        may have answered, or been given up on, before this coroutine ran."""
        while (state := self.hosts.get(key)) is not None and not self._admit(request, key, state):
            waiter: Deferred[None] = Deferred()
            state.waiters.append(waiter)
            await maybe_deferred_to_future(waiter)

    def _refuse_robots_txt(self, request: Request) -> None:
        """A robots.txt of a given-up host is not fetched (a retry of the one that gave it up,
        most often): ``IgnoreRequest``, which Scrapy's robots.txt middleware takes for "no
        robots.txt" without logging it, so that the checks waiting for it are answered now."""
        if not is_robots_txt(request):
            return
        state = self.hosts.get(host_key(request))
        if state is not None and state.probe_at is not None:
            self.stats.inc_value("nitpicker/host_breaker/given_up")
            raise IgnoreRequest(f"robots.txt of a host given up on: {request.url}")

    def _settled(self, request: Request, state: HostState | None) -> None:
        """A request to a host that failed has its outcome: the requests waiting look again."""
        if state is None:
            return
        state.sent.discard(request)
        _wake(state)

    def _learn(self, board: HostBoard) -> None:
        """The other workers' given-up hosts (as of this worker's last exchange with the shared
        frontier): those not given up on here are given up on now, until the probe time they
        were published with; those given up on here wait for the later of the two."""
        self._board_version = board.version
        now = monotonic()
        for key, host in board.learnt().items():
            probe_at = now + max(host.seconds, 0.0)
            state = self.hosts.get(key)
            if state is not None and state.probe_at is not None:
                if not state.probing:
                    state.probe_at = max(state.probe_at, probe_at)
                continue
            state = self.hosts.setdefault(key, HostState())
            state.error, state.why, state.probe_at = host.error, host.why, probe_at
            self.stats.inc_value("nitpicker/host_breaker/learnt")
            logger.info("giving up on %s: another worker did %s (%s)", key, host.why, host.error)
            self._drop_queued(key, state)
            _wake(state)

    def _publish(self, key: str, state: HostState) -> None:
        if self.board is not None:
            self.board.publish(GivenUpHost(key, state.error, state.why, self.config.probe_after))

    def _given_up(self, request: Request, state: HostState) -> HostGivenUp:
        return HostGivenUp(self.given_up_error(state), untried=not request.meta.get("retry_times"))

    def process_response(self, request: Request, response: Response) -> Response:
        if not self.hosts:
            return response
        key = host_key(request)
        state = self.hosts.pop(key, None)  # an answer: the host is well
        if state is not None and state.probe_at is not None:
            logger.info("%s answers again: its URLs are fetched", key)
            if self.board is not None:
                self.board.withdraw(key)
        self._settled(request, state)
        return response

    def process_exception(self, request: Request, exception: BaseException) -> None:
        if isinstance(exception, HostGivenUp) or request.meta.get(META_MODE) == _FULL:
            return  # the site's own pages count for nothing (robots.txt counts)
        key = host_key(request)
        if not self.counts(exception):
            self._settled(request, self.hosts.get(key))
            return
        state = self.hosts.setdefault(key, HostState())
        weight = self.weight(request, exception)
        state.failures += weight
        state.error = _described(exception)
        probe = bool(request.meta.pop(META_HOST_PROBE, False))
        if probe or (state.probe_at is None and state.failures >= self.config.failures):
            state.probe_at = monotonic() + self.config.probe_after
            state.probing = False
            if not probe:
                state.why = ("after its robots.txt failed" if weight >= self.config.failures
                             else f"after {state.failures} connection failures in a row")
                self.stats.inc_value("nitpicker/host_breaker/opened")
                logger.warning("giving up on %s %s (%s); probing it again in %.0f s", key,
                               state.why, state.error, self.config.probe_after)
                self._drop_queued(key, state)
            self._publish(key, state)
        self._settled(request, state)

    def _drop_queued(self, key: str, state: HostState) -> None:
        """Fail the host's requests waiting in the downloader's queues (not sent yet): they
        would each wait out the timeout too, at the concurrency the host's slot has left."""
        try:
            slots = self.crawler.engine.downloader.slots if self.crawler else {}
        except RuntimeError:  # no engine: the middleware driven alone (its unit tests)
            return
        from twisted.internet import reactor
        from twisted.python.failure import Failure

        for slot in slots.values():
            queued = [entry for entry in slot.queue if host_key(entry[0]) == key]
            for entry in queued:
                slot.queue.remove(entry)
                request, deferred = entry
                self.stats.inc_value("nitpicker/host_breaker/given_up")
                failure = Failure(self._given_up(request, state))
                reactor.callLater(0, deferred.errback, failure)  # type: ignore[attr-defined]


def host_key(request: Request) -> str:
    """``host:port`` of a request's URL (the port spelled out: 80, 443)."""
    return _key(urlparse_cached(request))


def url_host_key(url: str) -> str:
    """``host:port`` of a URL, as :func:`host_key`."""
    return _key(urlsplit(url))


def _key(parts: SplitResult | ParseResult) -> str:
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


def is_robots_txt(request: Request) -> bool:
    """Whether a request is the robots.txt fetch of Scrapy's robots.txt middleware (not
    checked against robots.txt itself, not leased from the frontier)."""
    return (bool(request.meta.get("dont_obey_robotstxt")) and META_MODE not in request.meta
            and urlparse_cached(request).path == "/robots.txt")


def _wake(state: HostState) -> None:
    """The requests waiting for the host's requests in flight look again."""
    waiters, state.waiters = state.waiters, []
    for waiter in waiters:
        waiter.callback(None)


def _described(exception: BaseException) -> str:
    from twisted.python.failure import Failure

    return describe_failure(Failure(exception))

