"""OutageGuard: a network outage pauses the crawl instead of recording its URLs as failed.

When the network drops, or the site's server goes away for a while, every fetch fails at the
connection — DNS lookup failed, connection refused or reset, timeout — and each URL would be
recorded as a fetch error (``status = -1``) once its retries are spent. Here a connection
failure is held, before the retry middleware sees it, until the guard knows what it means:

- an in-scope response to a request sent after it, or a probe answering with any status, says
  the site is reachable: the failure goes on as any failure does (retried, then recorded). The probe is
  a ``HEAD`` of the last in-scope URL that answered (or ``NITPICKER_OUTAGE_PROBE_URL``), sent
  when no in-scope response came within :data:`CONFIRM_WAIT` seconds;
- the probe failing at the connection too confirms an outage. The crawl pauses (the scheduler
  hands out nothing), the held URLs and those failing after them are kept, and the probe is
  sent again after ``NITPICKER_OUTAGE_PROBE_INTERVAL`` seconds, the wait doubling after each
  probe that fails, up to ``NITPICKER_OUTAGE_PROBE_MAX_INTERVAL``. When a probe answers, the
  crawl resumes and the held URLs are fetched again, their retries counted afresh;
- an outage longer than ``NITPICKER_OUTAGE_GIVE_UP`` seconds fails the run with
  ``error_code = outage``: the held URLs are not recorded, their frontier rows stay leased and
  go back to pending on ``--resume``. A stop during an outage (Ctrl-C, ``--max-duration``)
  ends it at once the same way.

The guard is armed once an in-scope URL has answered in this run (or a probe URL is set): a
site unreachable from its first request is a failed crawl (``network``), not an outage. Each
outage is a row of the archive's ``outages`` table (its start, end, probes, the URLs it held
and the failure that started it). With ``--workers N`` each worker process has its own guard:
a worker pauses, probes and records its outage by itself.

A downloader middleware just above the retry middleware, enabled by the add-on;
``NITPICKER_OUTAGE_ENABLED = False`` removes it. Stats: ``nitpicker/outage/checks`` (failures
that started a check), ``…/outages`` (checks that found an outage), ``…/probes``,
``…/requeued`` (URLs fetched again after an outage), ``…/stopped`` (URLs left pending by a
give-up or a stop).
"""

from __future__ import annotations

import enum
import logging
import math
import sqlite3
from dataclasses import dataclass, field
from time import monotonic, time
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from nitpicker.archive.connection import now
from nitpicker.crawl.fetch_errors import describe_failure, is_connection_failure
from nitpicker.crawl.meta import (
    DOWNLOAD_LATENCY,
    META_FRONTIER_ID,
    META_MODE,
    META_OUTAGE_PROBE,
    META_STOPPED,
    is_browser_request,
)
from nitpicker.crawl.run_failure import RunFailure, classify_exception
from nitpicker.crawl.session import crawl_session
from nitpicker.items import FollowMode
from nitpicker.middlewares.stop import STOP_HALTS, CrawlStopped
from nitpicker.policy.urls import parse_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from nitpicker.crawl.session import CrawlSession

__all__ = ["CONFIRM_WAIT", "OutageGuard", "OutageSettings", "Verdict"]

logger = logging.getLogger(__name__)

CONFIRM_WAIT = 0.1
"""Seconds a connection failure waits for an in-scope response before a probe is sent."""

TICK = 0.1
"""Seconds between two looks while a check or an outage lasts (a stop is seen this soon)."""

PROBE_SLOT = "nitpicker-outage-probe"
"""The probes' download slot: a probe never waits behind the site's queued requests."""

_FULL = int(FollowMode.FULL)
_PER_ATTEMPT = ("retry_times", "download_latency")
"""Meta keys of one download attempt, dropped from a URL fetched again after an outage."""


class Verdict(enum.Enum):
    """What becomes of a held failure."""

    RELEASE = "release"
    """No outage: the failure goes on (retried, then recorded)."""
    REQUEUE = "requeue"
    """The outage is over: the URL is fetched again."""
    STOP = "stop"
    """The run gave up or stops: nothing is recorded, the URL stays pending."""


@dataclass(frozen=True)
class OutageSettings:
    """The ``NITPICKER_OUTAGE_*`` settings, parsed once."""

    probe_interval: float = 5.0
    probe_max_interval: float = 60.0
    probe_timeout: float = 10.0
    give_up: float = 1800.0
    probe_url: str = ""

    def __post_init__(self) -> None:
        seconds = {"PROBE_INTERVAL": self.probe_interval,
                   "PROBE_MAX_INTERVAL": self.probe_max_interval,
                   "PROBE_TIMEOUT": self.probe_timeout, "GIVE_UP": self.give_up}  # fmt: skip
        for name, value in seconds.items():
            if not (math.isfinite(value) and value > 0):
                raise ValueError(
                    f"NITPICKER_OUTAGE_{name} must be a number of seconds above 0, got {value}"
                )
        if self.probe_max_interval < self.probe_interval:
            raise ValueError(
                f"NITPICKER_OUTAGE_PROBE_INTERVAL ({self.probe_interval:g}) exceeds"
                f" NITPICKER_OUTAGE_PROBE_MAX_INTERVAL ({self.probe_max_interval:g})"
            )
        if self.probe_url:
            parsed = parse_url(self.probe_url)
            if parsed is None or not parsed.is_http or not parsed.hostname:
                raise ValueError(
                    f"NITPICKER_OUTAGE_PROBE_URL must be an http(s) URL, got {self.probe_url!r}"
                )

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> OutageSettings:
        def seconds(name: str) -> float:
            try:
                return settings.getfloat(name)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{name} must be a number of seconds, got {settings.get(name)!r}"
                ) from None

        return cls(
            probe_interval=seconds("NITPICKER_OUTAGE_PROBE_INTERVAL"),
            probe_max_interval=seconds("NITPICKER_OUTAGE_PROBE_MAX_INTERVAL"),
            probe_timeout=seconds("NITPICKER_OUTAGE_PROBE_TIMEOUT"),
            give_up=seconds("NITPICKER_OUTAGE_GIVE_UP"),
            probe_url=str(settings.get("NITPICKER_OUTAGE_PROBE_URL") or "").strip(),
        )


@dataclass
class _Outage:
    """A suspicion being checked, then (``confirmed``) an outage."""

    first_failure: float
    """``monotonic()`` of the failure that started it."""
    failed_at: float
    """``time()`` of that failure (what a response's ``download_latency`` is compared with)."""
    started_at: str
    error: str
    probe_url: str
    next_probe: float
    held: list[Deferred[Verdict]] = field(default_factory=list)
    confirmed: bool = False
    probing: bool = False
    probes: int = 0
    interval: float = 0.0
    row: int | None = None


class OutageGuard:
    """Holds connection failures until a probe tells an outage from a failing URL."""

    OUTCOMES: ClassVar[dict[Verdict, str]] = {Verdict.REQUEUE: "resumed", Verdict.STOP: "stopped"}

    def __init__(self, crawler: Crawler, config: OutageSettings, session: CrawlSession) -> None:
        self.crawler = crawler
        self.config = config
        self.session = session
        self.stats = crawler.stats
        self.answered_url: str | None = None
        """The last in-scope URL that answered in this run (what is probed by default)."""
        self._outage: _Outage | None = None
        self._ticker: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OutageGuard:
        settings = crawler.settings
        try:
            enabled = settings.getbool("NITPICKER_OUTAGE_ENABLED")
        except ValueError:
            raise ValueError("NITPICKER_OUTAGE_ENABLED must be true or false, got "
                             f"{settings.get('NITPICKER_OUTAGE_ENABLED')!r}") from None
        if not enabled:
            raise NotConfigured("NITPICKER_OUTAGE_ENABLED is false")
        guard = cls(crawler, OutageSettings.from_settings(settings), crawl_session(crawler))
        crawler.signals.connect(guard.spider_closed, signal=signals.spider_closed)
        return guard

    # -- policies (override in a subclass) -------------------------------------------------------

    def may_be_outage(self, request: Request, exception: BaseException) -> bool:
        """Whether a failed download may mean an outage: a connection failure (DNS, refused,
        reset, timeout), not a TLS error, not a probe's own, not a browser download's (the
        browser retries a page once by itself; its HTTP preflight, sent first, is judged)."""
        meta = request.meta
        return (not meta.get(META_OUTAGE_PROBE) and not is_browser_request(meta)
                and is_connection_failure(exception))

    def probe_request(self, url: str) -> Request:
        """The probe: a ``HEAD`` of ``url``, not retried, redirected or checked against
        robots.txt (any answer means reachable), within ``NITPICKER_OUTAGE_PROBE_TIMEOUT``."""
        return Request(url, method="HEAD", dont_filter=True, meta={
            META_OUTAGE_PROBE: True, "dont_retry": True, "dont_redirect": True,
            "dont_obey_robotstxt": True, "handle_httpstatus_all": True,
            "download_timeout": self.config.probe_timeout, "download_slot": PROBE_SLOT,
        })

    @property
    def probe_url(self) -> str | None:
        """What a probe fetches: ``NITPICKER_OUTAGE_PROBE_URL``, else the last in-scope URL
        that answered; ``None`` (the guard is not armed) before any answered."""
        return self.config.probe_url or self.answered_url

    # -- downloader middleware -------------------------------------------------------------------

    def process_response(self, request: Request, response: Response) -> Response:
        meta = request.meta
        if meta.get(META_MODE) == _FULL and META_FRONTIER_ID in meta:
            self.answered_url = request.url
            outage = self._outage
            if outage is not None and self._sent_after(request, outage.failed_at):
                self._answered(outage)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> Request | None:
        probe_url = self.probe_url
        if probe_url is None or not self.may_be_outage(request, exception) or self._stopping():
            return None
        outage = self._outage or self._suspect(exception, probe_url)
        waiting: Deferred[Verdict] = Deferred()
        outage.held.append(waiting)
        verdict = await maybe_deferred_to_future(waiting)
        if verdict is Verdict.RELEASE:
            return None
        if verdict is Verdict.REQUEUE:
            meta = {key: value for key, value in request.meta.items() if key not in _PER_ATTEMPT}
            return request.replace(meta=meta, dont_filter=True)
        request.meta[META_STOPPED] = True  # the spider records nothing; the row stays pending
        raise CrawlStopped("the crawl stopped during a network outage")

    # -- the check and the outage ----------------------------------------------------------------

    def _suspect(self, exception: BaseException, probe_url: str) -> _Outage:
        """A connection failure with no check running: start one."""
        error = describe_failure(Failure(exception))  # type: ignore[no-untyped-call]
        clock = monotonic()
        outage = _Outage(clock, time(), now(), error, probe_url, clock + CONFIRM_WAIT)
        self._outage = outage
        self.stats.inc_value("nitpicker/outage/checks")
        logger.debug("connection failure (%s): checking for an outage", error)
        if self._ticker is None or not self._ticker.running:
            self._ticker = task.LoopingCall(self._tick)
            self._ticker.start(TICK, now=False)
        return outage

    @staticmethod
    def _sent_after(request: Request, moment: float) -> bool:
        """Whether ``request`` was sent after ``moment`` (a ``time()``): its answer then says
        the site answers now; one sent before (a slow page finishing while a server restarts
        and refuses new connections) says nothing. Judged from Scrapy's ``download_latency``
        (sent to the response's headers), so a request whose body took long counts as sent
        that much later."""
        latency = request.meta.get(DOWNLOAD_LATENCY)
        return isinstance(latency, (int, float)) and time() - latency > moment

    def _answered(self, outage: _Outage) -> None:
        """An in-scope response came after the failures held: no outage; or, in an outage,
        the site answers again: probe at once."""
        if outage.confirmed:
            outage.next_probe = min(outage.next_probe, monotonic())
        else:
            self._end(outage, Verdict.RELEASE)

    def _tick(self) -> None:
        outage = self._outage
        if outage is None:
            self._stop_ticking()
            return
        if self._stopping():
            self._end(outage, Verdict.STOP)
            return
        clock = monotonic()
        if outage.confirmed and clock - outage.first_failure >= self.config.give_up:
            self._give_up(outage, clock)
        elif not outage.probing and clock >= outage.next_probe:
            self._probe(outage)

    def _probe(self, outage: _Outage) -> None:
        outage.probing = True
        outage.probes += 1
        self.stats.inc_value("nitpicker/outage/probes")
        engine: Any = self.crawler.engine
        probe = deferred_from_coro(engine.download_async(self.probe_request(outage.probe_url)))
        probe.addCallbacks(lambda _: self._probe_answered(outage),
                           lambda failure: self._probe_failed(outage, failure))

    def _probe_answered(self, outage: _Outage) -> None:
        outage.probing = False
        if outage is self._outage:
            self._end(outage, Verdict.REQUEUE if outage.confirmed else Verdict.RELEASE)

    def _probe_failed(self, outage: _Outage, failure: Failure) -> None:
        outage.probing = False
        if outage is not self._outage or isinstance(failure.value, CrawlStopped):
            return  # over already, or the crawl stops (the next tick sees it)
        if not is_connection_failure(failure.value):
            # Anything but a connection failure (a TLS error, a refusal): not an outage.
            logger.debug("outage probe of %s: %s", outage.probe_url, failure.getErrorMessage())
            self._probe_answered(outage)
        elif not outage.confirmed:
            self._confirm(outage)
        else:
            outage.interval = min(outage.interval * 2, self.config.probe_max_interval)
            outage.next_probe = monotonic() + outage.interval

    def _confirm(self, outage: _Outage) -> None:
        """The probe failed too: the crawl pauses until a probe answers."""
        outage.confirmed = True
        outage.interval = self.config.probe_interval
        outage.next_probe = monotonic() + outage.interval
        session = self.session
        session.paused = "outage"
        self.stats.inc_value("nitpicker/outage/outages")
        logger.warning("network outage (%s): the crawl is paused; probing %s every %g s or more,"
                       " giving up after %g s", outage.error, outage.probe_url,
                       outage.interval, self.config.give_up)
        worker = session.role.index if session.role is not None else None
        try:
            outage.row = session.archive.runs.start_outage(
                outage.started_at, outage.error, outage.probe_url, worker)
        except (sqlite3.Error, OSError) as exc:
            session.fail(classify_exception(exc))

    def _give_up(self, outage: _Outage, clock: float) -> None:
        detail = (f"no answer from {outage.probe_url} for {clock - outage.first_failure:.0f} s"
                  f" (NITPICKER_OUTAGE_GIVE_UP {self.config.give_up:g} s); it started with"
                  f" {outage.error}")
        self.session.fail(RunFailure("outage", detail))
        self._end(outage, Verdict.STOP, "gave_up")

    def _end(self, outage: _Outage, verdict: Verdict, outcome: str | None = None) -> None:
        """The check or the outage is over: every held failure gets the verdict."""
        self._outage = None
        self._stop_ticking()
        if outage.confirmed:
            self._close_outage(outage, outcome or self.OUTCOMES[verdict])
        for waiting in outage.held:
            if not waiting.called:  # (its download cancelled: the reactor stopping at once)
                waiting.callback(verdict)
        if outage.confirmed and verdict is Verdict.REQUEUE:
            # Wake the engine now, not at its next heartbeat (5 s). Scrapy has no public call.
            slot = getattr(self.crawler.engine, "_slot", None)
            if slot is not None:
                slot.nextcall.schedule()

    def _close_outage(self, outage: _Outage, outcome: str) -> None:
        session = self.session
        if session.paused == "outage":
            session.paused = None
        seconds = monotonic() - outage.first_failure
        held = len(outage.held)
        self.stats.inc_value(
            "nitpicker/outage/requeued" if outcome == "resumed" else "nitpicker/outage/stopped",
            held)
        logger.warning("network outage over (%s) after %.1f s, %d probe(s): %d URL(s) %s",
                       outcome, seconds, outage.probes, held,
                       "fetched again" if outcome == "resumed" else "left pending")
        if outage.row is None or session.writer is None:
            return
        try:
            session.archive.runs.end_outage(outage.row, seconds=seconds, outcome=outcome,
                                            probes=outage.probes, requeued=held)
        except (sqlite3.Error, OSError) as exc:
            session.fail(classify_exception(exc))

    def _stopping(self) -> bool:
        """Whether the crawl stops: a signal, a failure, the deadline, the engine closing (as
        :meth:`nitpicker.middlewares.stop.GracefulStop.is_stopping` sees it)."""
        if not self.crawler.crawling or self.session.halted in STOP_HALTS:
            return True
        engine_slot = getattr(self.crawler.engine, "_slot", None)
        return engine_slot is not None and engine_slot.closing is not None

    def _stop_ticking(self) -> None:
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        self._ticker = None

    # -- signals -----------------------------------------------------------------------------------

    def spider_closed(self) -> None:
        outage = self._outage
        if outage is not None:
            self._end(outage, Verdict.STOP)
        self._stop_ticking()
