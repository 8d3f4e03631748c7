"""AdaptiveConcurrency: keeps each host's concurrency between a floor and a ceiling.

Each downloader slot (one per host) starts at the ceiling (by default ``--parallels``). A download
error, a 429 or 503, a slow answer or an oversized body halves it, never below the floor; a run
of clean fast answers grows it by one, never above the ceiling. A ``Retry-After`` on a 429 or 503
holds every request to that host (retries included) until the time given, then the delay goes
back to ``DOWNLOAD_DELAY`` (``--interval``), always the minimum. An extension; settings
``NITPICKER_THROTTLE_*`` (``NITPICKER_THROTTLE_ENABLED``, default true); stats
``nitpicker/throttle/shrink``, ``…/grow`` (changes made), ``…/retry_after`` (waits honoured).
"""

from __future__ import annotations

import logging
import sys
import time
from collections import deque
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import monotonic
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from nitpicker.crawl.meta import is_browser_request

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

__all__ = ["AdaptiveConcurrency", "ThrottleSettings"]

logger = logging.getLogger(__name__)


AUTO_FLOOR = 2
"""The floor when ``NITPICKER_THROTTLE_FLOOR`` is not set (lowered to a smaller ceiling)."""


@dataclass(frozen=True)
class ThrottleSettings:
    """The ``NITPICKER_THROTTLE_*`` settings, parsed once."""

    floor: int = 2
    ceiling: int = 10
    slow_ms: int = 3000
    batch: int = 20
    max_bytes: int = 8 * 1024 * 1024
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        at_least_one = {"FLOOR": self.floor, "SLOW_MS": self.slow_ms, "BATCH": self.batch,
                        "MAX_BYTES": self.max_bytes}  # fmt: skip
        for name, value in at_least_one.items():
            if value < 1:
                raise ValueError(f"NITPICKER_THROTTLE_{name} must be at least 1, got {value}")
        if self.ceiling < self.floor:
            raise ValueError(
                f"NITPICKER_THROTTLE_FLOOR ({self.floor}) exceeds NITPICKER_THROTTLE_CEILING"
                f" ({self.ceiling}, by default CONCURRENT_REQUESTS_PER_DOMAIN / --parallels)"
            )
        if self.max_retry_after < 0:
            raise ValueError(
                f"NITPICKER_THROTTLE_MAX_RETRY_AFTER must not be negative, got {self.max_retry_after}"
            )

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ThrottleSettings:
        ceiling = settings.get("NITPICKER_THROTTLE_CEILING")
        if ceiling is None:
            ceiling = settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        floor = settings.get("NITPICKER_THROTTLE_FLOOR")
        if floor is None:
            floor = min(AUTO_FLOOR, int(ceiling))  # --parallels 1: a ceiling below the floor
        return cls(
            floor=int(floor),
            ceiling=int(ceiling),
            slow_ms=settings.getint("NITPICKER_THROTTLE_SLOW_MS"),
            batch=settings.getint("NITPICKER_THROTTLE_BATCH"),
            max_bytes=settings.getint("NITPICKER_THROTTLE_MAX_BYTES"),
            max_retry_after=settings.getfloat("NITPICKER_THROTTLE_MAX_RETRY_AFTER"),
        )


@dataclass
class _SlotState:
    concurrency: int
    base_delay: float
    slot: Slot
    clean: int = 0
    not_before: float | None = None


class _CountedQueue(deque[Any]):
    """A slot queue that counts a request as transferring as soon as it is handed out.

    Scrapy 2.19 under the asyncio reactor adds a request to ``slot.transferring`` only when its
    download task first runs, so every request enqueued in one loop tick starts whatever the
    slot's concurrency (measured: 6 in flight with ``CONCURRENT_REQUESTS_PER_DOMAIN=2``). The
    downloader's own ``add`` later is a no-op and its ``remove`` still frees the place.
    """

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot.queue)
        self._transferring = slot.transferring

    def popleft(self) -> Any:
        item = super().popleft()
        self._transferring.add(item[0])
        return item


class AdaptiveConcurrency:
    """Shrinks a host's concurrency when it struggles and grows it back when it copes."""

    SHRINK_STATUSES: ClassVar[frozenset[int]] = frozenset({429, 503})
    RETRY_AFTER_STATUSES: ClassVar[frozenset[int]] = frozenset({429, 503})

    def __init__(self, crawler: Crawler, config: ThrottleSettings, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = stats
        self._states: dict[str, _SlotState] = {}
        self._answered: set[Request] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AdaptiveConcurrency:
        if not crawler.settings.getbool("NITPICKER_THROTTLE_ENABLED"):
            raise NotConfigured("NITPICKER_THROTTLE_ENABLED is false")
        throttle = cls(crawler, ThrottleSettings.from_settings(crawler.settings), crawler.stats)
        connect = crawler.signals.connect
        connect(throttle.request_reached_downloader, signal=signals.request_reached_downloader)
        connect(throttle.response_downloaded, signal=signals.response_downloaded)
        connect(throttle.request_left_downloader, signal=signals.request_left_downloader)
        return throttle

    # -- policies (override in a subclass) -------------------------------------------------------

    def start_concurrency(self, key: str) -> int:
        """A new host starts at the ceiling: as fast as ``--parallels`` allows until it struggles."""
        return self.config.ceiling

    def should_shrink(self, outcome: Response | BaseException, latency: float | None) -> str | None:
        """Why this download calls for less concurrency (``None``: it does not).

        ``latency`` is the time to the response headers in seconds, ``None`` when unknown or
        not the server's own (a browser render).
        """
        if not isinstance(outcome, Response):
            return f"error {type(outcome).__name__}"
        if outcome.status in self.SHRINK_STATUSES:
            return f"status {outcome.status}"
        if latency is not None and latency * 1000 > self.config.slow_ms:
            return f"slow {latency * 1000:.0f} ms"
        if len(outcome.body) > self.config.max_bytes:
            return f"oversized {len(outcome.body)} bytes"
        return None

    def is_clean(self, response: Response, latency: float | None) -> bool:
        """Whether a response not calling for a shrink counts towards growing (no 5xx)."""
        return response.status < 500

    def next_concurrency(self, current: int, *, shrink: bool) -> int:
        """Halve on a shrink, add one on a grow, within the floor and the ceiling."""
        if shrink:
            return max(self.config.floor, current // 2)
        return min(self.config.ceiling, current + 1)

    def retry_after(self, response: Response, wall_time: float | None = None) -> float | None:
        """Seconds to hold the host for, from ``Retry-After`` (seconds or an HTTP date), capped.

        ``wall_time`` (a Unix timestamp, default now) is what an HTTP date is compared with.
        """
        if response.status not in self.RETRY_AFTER_STATUSES:
            return None
        raw = response.headers.get(b"Retry-After")
        if not raw:
            return None
        value = raw.decode("latin-1").strip()
        if value.isdigit():
            wait = float(value)
        else:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError):
                logger.debug("ignoring unreadable Retry-After %r on %s", value, response.url)
                return None
            wait = when.timestamp() - (time.time() if wall_time is None else wall_time)
        return min(max(wait, 0.0), self.config.max_retry_after)

    def concurrency(self, key: str) -> int | None:
        """The concurrency this extension set for a slot key (a host), if it met that host."""
        state = self._states.get(key)
        return state.concurrency if state is not None else None

    def adjust(self, key: str, slot: Slot, outcome: Response | BaseException,
               latency: float | None, now: float | None = None) -> None:  # fmt: skip
        """Apply the policies to one finished download of ``slot`` (``now``: ``monotonic()``)."""
        state = self._track(key, slot)
        now = monotonic() if now is None else now
        if isinstance(outcome, Response):
            wait = self.retry_after(outcome)
            if wait:
                self._hold(key, slot, state, wait, now, outcome.status)
            elif state.not_before is not None and now >= state.not_before:
                self._release(key, slot, state)
        reason = self.should_shrink(outcome, latency)
        if reason is not None:
            state.clean = 0
            self._change(key, slot, state, reason, shrink=True)
        elif isinstance(outcome, Response) and self.is_clean(outcome, latency):
            state.clean += 1
            if state.clean >= self.config.batch:
                state.clean = 0
                self._change(key, slot, state, f"{self.config.batch} clean responses", shrink=False)
        else:
            state.clean = 0

    def _track(self, key: str, slot: Slot) -> _SlotState:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _SlotState(self.start_concurrency(key), slot.delay, slot)
        elif state.slot is not slot:  # the downloader dropped the idle slot and made a new one
            state.slot, state.base_delay, state.not_before = slot, slot.delay, None
        else:
            return state
        slot.concurrency = state.concurrency
        if not isinstance(slot.queue, _CountedQueue):
            slot.queue = _CountedQueue(slot)
        return state

    def _change(
        self, key: str, slot: Slot, state: _SlotState, reason: str, *, shrink: bool
    ) -> None:
        new = self.next_concurrency(state.concurrency, shrink=shrink)
        if new == state.concurrency:
            return
        logger.debug("throttle %s: concurrency %d -> %d (%s)", key, state.concurrency, new, reason)
        state.concurrency = slot.concurrency = new
        self.stats.inc_value("nitpicker/throttle/shrink" if shrink else "nitpicker/throttle/grow")

    def _hold(
        self, key: str, slot: Slot, state: _SlotState, wait: float, now: float, status: int
    ) -> None:
        """No request to this host starts before ``now + wait``."""
        state.not_before = max(state.not_before or 0.0, now + wait)
        # The downloader waits ``delay - (now - lastseen)``; jitter may shorten the delay.
        hold = state.not_before - slot.lastseen
        if 0 < slot.jitter < 1:
            hold /= 1 - slot.jitter
        slot.delay = max(state.base_delay, hold)
        self._reschedule(slot)
        self.stats.inc_value("nitpicker/throttle/retry_after")
        logger.debug("throttle %s: %d with Retry-After, holding for %.1f s", key, status, wait)

    def _release(self, key: str, slot: Slot, state: _SlotState) -> None:
        """Back to the configured delay."""
        slot.delay = state.base_delay
        state.not_before = None
        self._reschedule(slot)
        logger.debug("throttle %s: Retry-After over, delay back to %.3f s", key, state.base_delay)

    @staticmethod
    def _reschedule(slot: Slot) -> None:
        """Drop the slot's wake-up timed with the old delay. Safe: ``_hold`` and ``_release`` run
        only from signals the downloader follows at once by processing the slot's queue."""
        if slot.latercall is not None:
            slot.latercall.cancel()
            slot.latercall = None

    # -- signals -----------------------------------------------------------------------------------

    def _slot(self, request: Request) -> tuple[str, Slot] | None:
        key: str | None = request.meta.get("download_slot")
        slot = self.crawler.engine.downloader.slots.get(key) if key is not None else None
        return (key, slot) if key is not None and slot is not None else None

    def request_reached_downloader(self, request: Request) -> None:
        found = self._slot(request)
        if found is not None:
            key, slot = found
            state = self._track(key, slot)
            if state.not_before is not None and monotonic() >= state.not_before:
                self._release(key, slot, state)

    def response_downloaded(self, response: Response, request: Request) -> None:
        self._answered.add(request)
        found = self._slot(request)
        if found is not None:
            browser = is_browser_request(request.meta)  # a render's latency is not the server's
            self.adjust(*found, response, None if browser else request.meta.get("download_latency"))

    def request_left_downloader(self, request: Request) -> None:
        if request in self._answered:
            self._answered.discard(request)
            return
        found = self._slot(request)
        if found is not None:
            # Sent from the downloader's ``finally`` while the download's exception propagates.
            error = sys.exception() or ConnectionError("download failed")
            self.adjust(*found, error, None)
