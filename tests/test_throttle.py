"""AdaptiveConcurrency: policy tables on real downloader slots, then crawls of a scripted site."""

from __future__ import annotations

import logging
from email.utils import formatdate
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.core.downloader import Slot
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionRefusedError, TimeoutError

from fixtures.throttle_site import RESET, Hit, Route, ThrottleSite
from nitpicker.crawl.throttle import AdaptiveConcurrency, ThrottleSettings
from nitpicker.default_settings import defaults
from tests.helpers import crawl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HOST = "127.0.0.1"
MiB = 1024 * 1024
NOW = 1_800_000_000.0  # a fixed Unix time for HTTP dates


def throttle(**settings: Any) -> AdaptiveConcurrency:
    values = {**defaults(), "CONCURRENT_REQUESTS_PER_DOMAIN": 10, **settings}
    return AdaptiveConcurrency.from_crawler(get_crawler(settings_dict=values))


def response(status: int = 200, body: bytes = b"", **headers: str) -> Response:
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    return Response(f"http://{HOST}/page", status=status, body=body, headers=named)


# -- settings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "floor", "ceiling"),
    [
        ({}, 2, 10),
        ({"CONCURRENT_REQUESTS_PER_DOMAIN": 1}, 1, 1),  # --parallels 1: below the default floor
        ({"NITPICKER_THROTTLE_CEILING": 6, "NITPICKER_THROTTLE_FLOOR": 3}, 3, 6),
        ({"NITPICKER_THROTTLE_FLOOR": 10}, 10, 10),
    ],
)
def test_floor_and_ceiling_from_settings(
    settings: dict[str, Any], floor: int, ceiling: int
) -> None:
    config = throttle(**settings).config
    assert (config.floor, config.ceiling) == (floor, ceiling)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"NITPICKER_THROTTLE_FLOOR": 4, "CONCURRENT_REQUESTS_PER_DOMAIN": 2},
            "NITPICKER_THROTTLE_FLOOR (4) exceeds NITPICKER_THROTTLE_CEILING (2",
        ),
        ({"NITPICKER_THROTTLE_FLOOR": 0}, "NITPICKER_THROTTLE_FLOOR must be at least 1, got 0"),
        ({"NITPICKER_THROTTLE_BATCH": 0}, "NITPICKER_THROTTLE_BATCH must be at least 1, got 0"),
        ({"NITPICKER_THROTTLE_MAX_RETRY_AFTER": -1}, "MAX_RETRY_AFTER must not be negative"),
    ],
)
def test_contradictory_settings_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        throttle(**settings)


def test_disabled_by_setting() -> None:
    with pytest.raises(NotConfigured):
        throttle(NITPICKER_THROTTLE_ENABLED=False)


def test_defaults() -> None:
    assert throttle().config == ThrottleSettings(2, 10, 3000, 20, 8 * MiB, 120.0)


# -- policies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "latency", "reason"),
    [
        (response(200), 0.05, None),
        (response(404), 0.05, None),
        (response(500), 0.05, None),  # not clean (no growth), but no shrink either
        (response(429), 0.05, "status 429"),
        (response(503), 0.05, "status 503"),
        (response(200), 3.5, "slow 3500 ms"),
        (response(200), 2.9, None),
        (response(200), None, None),  # latency unknown (browser render)
        (response(200, body=b"x" * (8 * MiB + 1)), 0.05, "oversized 8388609 bytes"),
        (response(200, body=b"x" * (8 * MiB)), 0.05, None),
        (TimeoutError(), None, "error TimeoutError"),
        (ConnectionRefusedError(), None, "error ConnectionRefusedError"),
        (ConnectionResetError(), None, "error ConnectionResetError"),
    ],
)
def test_should_shrink(
    outcome: Response | BaseException, latency: float | None, reason: str | None
) -> None:
    assert throttle().should_shrink(outcome, latency) == reason


@pytest.mark.parametrize(
    ("current", "shrink", "expected"),
    [
        (10, True, 5),
        (5, True, 2),
        (3, True, 2),
        (2, True, 2),
        (2, False, 3),
        (9, False, 10),
        (10, False, 10),
    ],
)
def test_next_concurrency(current: int, shrink: bool, expected: int) -> None:
    assert throttle().next_concurrency(current, shrink=shrink) == expected


@pytest.mark.parametrize(
    ("outcome", "wait"),
    [
        (response(429, Retry_After="1"), 1.0),
        (response(503, Retry_After="30"), 30.0),
        (response(429, Retry_After="600"), 120.0),  # capped
        (response(429, Retry_After=formatdate(NOW + 45, usegmt=True)), 45.0),
        (response(429, Retry_After=formatdate(NOW - 45, usegmt=True)), 0.0),  # already past
        (response(429, Retry_After="soon"), None),
        (response(429), None),
        (response(200, Retry_After="5"), None),  # only 429 and 503
        (response(301, Retry_After="5"), None),
    ],
)
def test_retry_after(outcome: Response, wait: float | None) -> None:
    assert throttle().retry_after(outcome, wall_time=NOW) == wait


# -- adjusting slots -------------------------------------------------------------------------------


def test_a_new_slot_starts_at_the_ceiling() -> None:
    ext, slot = throttle(NITPICKER_THROTTLE_CEILING=6), Slot(10, 0.0, 0)
    ext.adjust(HOST, slot, response(200), 0.01)
    assert slot.concurrency == ext.concurrency(HOST) == 6


@pytest.mark.parametrize(
    ("outcomes", "expected", "shrinks", "grows"),
    [
        # (status or exception, latency) per download; batch 3, floor 2, ceiling 10
        ([(ConnectionResetError(), None)] * 4, 2, 2, 0),  # 10 -> 5 -> 2, then stays
        ([(429, 0.01), (200, 4.0)], 2, 2, 0),
        ([(503, 0.01)] + [(200, 0.01)] * 3, 6, 1, 1),  # 10 -> 5, three clean -> 6
        ([(503, 0.01)] + [(200, 0.01)] * 2 + [(500, 0.01)] + [(200, 0.01)] * 2, 5, 1, 0),
        ([(200, 0.01)] * 9, 10, 0, 0),  # already at the ceiling
        ([(TimeoutError(), None)] * 3 + [(200, 0.01)] * 24, 10, 2, 8),
    ],
)
def test_adjust_sequences(
    outcomes: list[tuple[int | BaseException, float | None]],
    expected: int,
    shrinks: int,
    grows: int,
) -> None:
    ext, slot = throttle(NITPICKER_THROTTLE_BATCH=3), Slot(10, 0.0, 0)
    for outcome, latency in outcomes:
        result = response(outcome) if isinstance(outcome, int) else outcome
        ext.adjust(HOST, slot, result, latency)
    assert slot.concurrency == ext.concurrency(HOST) == expected
    stats = ext.stats
    assert stats.get_value("nitpicker/throttle/shrink", 0) == shrinks
    assert stats.get_value("nitpicker/throttle/grow", 0) == grows


@pytest.mark.parametrize(("interval", "jitter"), [(0.0, 0.0), (0.25, 0.0), (0.0, 0.5)])
def test_retry_after_holds_the_slot_then_restores_the_interval(
    interval: float, jitter: float
) -> None:
    ext, slot = throttle(), Slot(10, interval, jitter)
    slot.lastseen = 100.0  # the 429's request started at 100.0; its answer came at 100.5
    ext.adjust(HOST, slot, response(429, Retry_After="2"), 0.5, now=100.5)
    # The downloader starts nothing before lastseen + download_delay(): not before 102.5.
    assert slot.lastseen + slot.delay * (1 - jitter) == pytest.approx(102.5)
    assert ext.stats.get_value("nitpicker/throttle/retry_after") == 1
    ext.adjust(HOST, slot, response(200), 0.01, now=101.0)  # in flight before the 429: still held
    assert slot.lastseen + slot.delay * (1 - jitter) == pytest.approx(102.5)
    ext.adjust(HOST, slot, response(200), 0.01, now=102.6)
    assert slot.delay == interval  # the interval is the minimum delay again


def test_retry_after_zero_keeps_the_interval() -> None:
    ext, slot = throttle(), Slot(10, 0.5, 0)
    ext.adjust(HOST, slot, response(503, Retry_After="0"), 0.01, now=10.0)
    assert slot.delay == 0.5
    assert ext.stats.get_value("nitpicker/throttle/retry_after") is None


def test_a_recreated_slot_keeps_the_learned_concurrency() -> None:
    ext, old = throttle(), Slot(10, 0.0, 0)
    ext.adjust(HOST, old, ConnectionResetError(), None)
    new = Slot(10, 0.0, 0)  # the downloader dropped the idle slot and made a new one
    ext.adjust(HOST, new, response(200), 0.01)
    assert new.concurrency == 5


def test_a_request_counts_as_transferring_when_the_queue_hands_it_out() -> None:
    ext, slot = throttle(), Slot(10, 0.0, 0)
    ext.adjust(HOST, slot, response(200), 0.01)
    request = Request(f"http://{HOST}/page")
    slot.queue.append((request, Deferred()))
    assert slot.free_transfer_slots() == 10
    slot.queue.popleft()
    assert slot.transferring == {request}
    assert slot.free_transfer_slots() == 9


# -- crawls -----------------------------------------------------------------------------------------

PROBES: list[ProbeThrottle] = []


class ProbeThrottle(AdaptiveConcurrency):
    """The extension, kept where a test can read its state and stats after the crawl."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        PROBES.append(self)


@pytest.fixture
def probes() -> Iterator[list[ProbeThrottle]]:
    PROBES.clear()
    yield PROBES
    PROBES.clear()


def throttled(**settings: Any) -> dict[str, Any]:
    """The probe in place of the extension (which the add-on may enable too)."""
    probe = {f"{__name__}.ProbeThrottle": 0, "nitpicker.crawl.throttle.AdaptiveConcurrency": None}
    return {"EXTENSIONS": probe, **settings}


async def crawl_site(
    tmp_path: Path, site: ThrottleSite, settings: dict[str, Any], **options: Any
) -> Any:
    return await crawl(
        tmp_path,
        [site.url("/")],
        settings=settings,
        ignore_robots=True,
        sitemap=False,
        predict_pagination=False,  # the scripted routes are counted: no predicted extras
        render=False,
        **options,
    )


def changes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().split(": ", 1)[1].split(" (")[0]
        for r in caplog.records
        if r.name == "nitpicker.crawl.throttle" and "concurrency" in r.getMessage()
    ]


STORM = {
    **{f"/p/{i}": Route(pause=0.02) for i in range(12)},
    "/p/2": Route(statuses=(429, 200), retry_after="1"),
    "/p/6": Route(statuses=(429, 200), retry_after="1"),
    "/p/9": Route(statuses=(429,), retry_after="1"),  # still 429 after the retry
}


def timeline(hits: list[Hit]) -> str:
    """The server's log, for assertion messages."""
    start = hits[0].arrived
    return "\n".join(
        f"{h.path:8} arrived {h.arrived - start:6.3f} answered "
        f"{h.answered - start:6.3f} status {h.status} in flight {h.in_flight}"
        for h in hits
    )


def quiet_after(hit: Hit, hits: list[Hit], margin: float = 0.2) -> list[Hit]:
    """Requests that arrived between ``margin`` after the 429 was sent and 0.95 s after it."""
    return [h for h in hits if hit.answered + margin < h.arrived < hit.answered + 0.95]


@pytest.mark.integration  # crawls a server of its own
@pytest_twisted.ensureDeferred
async def test_429_storm_waits_for_retry_after(tmp_path: Path, probes: list[ProbeThrottle]) -> None:
    with ThrottleSite(STORM) as site:
        archive = await crawl_site(tmp_path, site, throttled(), parallels=4, retry=1)
        hits = site.hits
    statuses = {
        r["url"].rsplit("/", 1)[1]: r["status"]
        for r in archive.rows("SELECT url, status FROM pages WHERE url LIKE '%/p/%'")
    }
    assert len(statuses) == 12
    assert (statuses["2"], statuses["6"], statuses["9"]) == (200, 200, 429)
    assert set(statuses.values()) == {200, 429}  # nothing recorded as a fetch error
    too_many = [h for h in hits if h.status == 429]
    assert [h.path for h in too_many].count("/p/9") == 2 and len(too_many) == 4
    retry_gaps = []
    for hit in too_many:
        assert quiet_after(hit, hits) == [], timeline(hits)
        retries = [h for h in hits if h.path == hit.path and h.arrived > hit.arrived]
        if retries:  # the last 429 of /p/9 is not retried again
            retry_gaps.append(retries[0].arrived - hit.answered)
        later = [h for h in hits if h.arrived - hit.answered >= 0.95]
        if len(later) >= 2 and later[0].status != 429:  # the wait is over: on at full speed
            assert later[1].arrived - later[0].answered < 0.3, timeline(hits)
    assert len(retry_gaps) == 3
    assert min(retry_gaps) >= 0.95
    assert probes[0].stats.get_value("nitpicker/throttle/retry_after") == 4


@pytest.mark.integration  # crawls a server of its own
@pytest_twisted.ensureDeferred
async def test_without_the_throttle_a_429_is_retried_at_once(tmp_path: Path) -> None:
    """The control: Scrapy alone ignores Retry-After, so the test above can fail."""
    with ThrottleSite(STORM) as site:
        await crawl_site(
            tmp_path, site, throttled(NITPICKER_THROTTLE_ENABLED=False), parallels=4, retry=1
        )
        hits = site.hits
    first = next(h for h in hits if h.status == 429)
    retry = next(h for h in hits if h.path == first.path and h.arrived > first.arrived)
    assert retry.arrived - first.answered < 0.5


BAD_ROUTES = {
    "slow": Route(pause=0.4),
    "reset": Route(pause=0.3, reset=True),
    "503": Route(pause=0.3, statuses=(503,)),
}


@pytest.mark.integration  # crawls a server of its own
@pytest.mark.parametrize("kind", sorted(BAD_ROUTES))
@pytest_twisted.ensureDeferred
async def test_trouble_shrinks_to_the_floor(
    kind: str, tmp_path: Path, probes: list[ProbeThrottle], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="nitpicker.crawl.throttle")
    routes = {
        **{f"/bad/{i}": BAD_ROUTES[kind] for i in range(8)},
        **{f"/ok/{i}": Route(pause=0.05) for i in range(16)},
    }
    settings = throttled(NITPICKER_THROTTLE_BATCH=1000, NITPICKER_THROTTLE_SLOW_MS=200)
    with ThrottleSite(routes) as site:
        await crawl_site(tmp_path, site, settings, parallels=8)
        hits = site.hits
    bad = [h for h in hits if h.path.startswith("/bad/")]
    assert max(h.in_flight for h in bad) == 8  # started at the ceiling
    if kind == "reset":
        assert {h.status for h in bad} == {RESET}
    trouble_over = max(h.answered for h in bad)
    after = [h for h in hits if h.arrived > trouble_over]
    assert len(after) >= 10
    assert max(h.in_flight for h in after) <= 2, timeline(hits)
    assert changes(caplog)[:2] == ["concurrency 8 -> 4", "concurrency 4 -> 2"]
    assert len(changes(caplog)) == 2  # logged once per change, never below the floor
    assert probes[0].concurrency(HOST) == 2
    assert probes[0].stats.get_value("nitpicker/throttle/shrink") == 2


@pytest.mark.integration  # crawls a server of its own
@pytest_twisted.ensureDeferred
async def test_clean_fast_responses_grow_back_to_the_ceiling(
    tmp_path: Path, probes: list[ProbeThrottle], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="nitpicker.crawl.throttle")
    routes = {
        **{f"/bad/{i}": Route(pause=0.2, statuses=(503,)) for i in range(6)},
        **{f"/ok/{i}": Route(pause=0.15) for i in range(48)},
    }
    with ThrottleSite(routes) as site:
        await crawl_site(tmp_path, site, throttled(NITPICKER_THROTTLE_BATCH=4), parallels=6)
        hits = site.hits
    assert changes(caplog) == [
        "concurrency 6 -> 3",
        "concurrency 3 -> 2",
        "concurrency 2 -> 3",
        "concurrency 3 -> 4",
        "concurrency 4 -> 5",
        "concurrency 5 -> 6",
    ]
    ok = [h for h in hits if h.path.startswith("/ok/")]
    assert max(h.in_flight for h in ok[:4]) <= 2  # still at the floor
    assert max(h.in_flight for h in ok[-16:]) == 6  # back at the ceiling, and no further
    assert probes[0].concurrency(HOST) == 6
    assert probes[0].stats.get_value("nitpicker/throttle/grow") == 4
