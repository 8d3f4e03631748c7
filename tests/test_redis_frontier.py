"""RedisFrontier against a real redis-server: dedup, chunk leases, acknowledgement after the
shard's commit, lease expiry, idempotent re-claims, claims, counts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nitpicker.archive.frontier_port import FrontierPort, FrontierUnavailable
from nitpicker.archive.frontier_store import FrontierStore
from nitpicker.archive.shared_frontier import SharedFrontierStore
from nitpicker.archive.writer import ArchiveWriter
from nitpicker.crawl.redis_frontier import (
    FrontierSettings,
    RedisFrontier,
    connect_frontier,
    parse_frontier_url,
)
from nitpicker.items import FollowMode, PageItem
from tests.redis_server import RedisServer, free_port, running_redis

FULL = int(FollowMode.FULL)
PREDICTED = int(FollowMode.PREDICTED)
CHECK = int(FollowMode.METADATA)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def settings(redis_server: RedisServer, request: pytest.FixtureRequest) -> FrontierSettings:
    """Settings of a crawl of its own (named after the test) in the module's server."""
    return parse_frontier_url(f"{redis_server.url}?crawl={request.node.name}", "unused",
                              chunk=5, lease_seconds=30)


def worker(settings: FrontierSettings, **changes: float) -> RedisFrontier:
    if changes:
        settings = FrontierSettings(settings.url, settings.crawl,
                                    **{"chunk": settings.chunk, **changes})  # type: ignore[arg-type]
    return RedisFrontier(connect_frontier(settings), settings)


def entry(path: str, depth: int = 1, mode: int = FULL) -> tuple[str, str, int, int]:
    return (f"//site.test{path}", f"http://site.test{path}", depth, mode)


def seeded(settings: FrontierSettings, entries: list[tuple[str, str, int, int]]) -> RedisFrontier:
    frontier = worker(settings)
    frontier.add(entries)
    frontier.committed()
    return frontier


def test_every_store_implements_the_port(writer: ArchiveWriter, settings: FrontierSettings) -> None:
    stores = [FrontierStore(writer), SharedFrontierStore(writer, "w1", 30.0), worker(settings)]
    assert all(isinstance(store, FrontierPort) for store in stores)
    # only --workers N's store asks, per page, whether its lease still holds
    assert [store.checks_leases for store in stores] == [False, True, False]


def test_the_page_recorder_asks_the_store_it_is_given(writer: ArchiveWriter,
                                                      settings: FrontierSettings) -> None:
    """``use_frontier`` swaps the store the recorder checks leases with, not only the one it
    acknowledges through: a page whose lease another writer holds is dropped."""
    writer.frontier.add([entry("/held")])
    writer.commit()
    writer.use_frontier(SharedFrontierStore(writer, "w1", 30.0), writer.commit)
    frontier_id = writer.conn.execute("SELECT id FROM frontier").fetchone()[0]
    page = PageItem(url="http://site.test/held", frontier_id=frontier_id, depth=1,
                    is_external=False, is_target=True, status=200)
    assert writer.pages.record(page, []) == 0  # leased by no one: not w1's to record
    writer.use_frontier(worker(settings), lambda: None)
    assert writer.pages.record(page, []) > 0  # Redis: recorded, duplicates are merge's


@pytest.mark.parametrize(("raw", "error"), [
    ("http://127.0.0.1:6379/0", "not a Redis URL: 'http://127.0.0.1:6379/0'"),
    ("redis://127.0.0.1:6379/zero", "the database is a number"),
    ("redis://127.0.0.1:notaport/0", "not a Redis URL"),
])
def test_bad_frontier_url_is_named(raw: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_frontier_url(raw, "x")


def test_crawl_name_comes_from_the_url_or_the_default() -> None:
    assert parse_frontier_url("redis://h:1/2?crawl=shop", "d").prefix == "nitpicker:shop"
    named = parse_frontier_url("redis://:secret@h:1/2", "d")
    assert named.prefix == "nitpicker:d"
    assert "secret" not in named.shown


def test_unreachable_redis_is_one_line_naming_it() -> None:
    port = free_port()
    settings = parse_frontier_url(f"redis://127.0.0.1:{port}/0", "x")
    with pytest.raises(FrontierUnavailable, match=f"cannot reach the frontier at "
                                                  f"redis://127.0.0.1:{port}/0") as caught:
        connect_frontier(settings)
    assert "\n" not in str(caught.value)


def test_adds_are_deduplicated_across_workers(settings: FrontierSettings) -> None:
    one, two = worker(settings), worker(settings)
    one.add([entry("/a"), entry("/b")])
    two.add([entry("/b"), entry("/c")])
    assert one.refresh().pending == 0, "nothing is sent before the shard commits"
    one.committed()
    two.committed()
    assert one.refresh().pending == 3


def test_a_chunk_is_leased_once_shallowest_first(settings: FrontierSettings) -> None:
    seeded(settings, [entry(f"/d{d}-{i}", depth=d) for d in (3, 1, 2) for i in range(4)])
    one, two = worker(settings), worker(settings)
    first = one.lease(2)
    assert [row[2] for row in first] == [1, 1]
    assert one.counts.leased == 5, "a whole chunk (NITPICKER_FRONTIER_CHUNK) is leased"
    rest_of_chunk = one.lease(10)
    assert len(rest_of_chunk) == 3
    others = two.lease(10)
    ones = {row[0] for row in first + rest_of_chunk}
    assert len(others) == 5 and ones.isdisjoint(row[0] for row in others)
    assert sorted(row[2] for row in first + rest_of_chunk) == [1, 1, 1, 1, 2]


def test_the_site_is_leased_before_the_checks(settings: FrontierSettings) -> None:
    """A chunk takes the site's entries first; site entries queued later go before the checks
    this worker still holds (a new chunk is leased for them)."""
    seeded(settings, [entry(f"/x{i}", depth=1, mode=CHECK) for i in range(4)]
           + [entry("/deep", depth=3)])
    one = worker(settings)
    first = one.lease(2)
    assert [(row[1], row[3]) for row in first] == [
        ("http://site.test/deep", FULL), ("http://site.test/x0", CHECK)]
    assert one.counts.checks == 0 and one.pending_checks == 0
    seeded(settings, [entry("/late", depth=4)])
    one.refresh()
    assert one.pending_site == 1
    assert [row[1] for row in one.lease(10)] == [
        "http://site.test/late", "http://site.test/x1", "http://site.test/x2",
        "http://site.test/x3"]


def test_acknowledgement_is_sent_after_the_shard_commits(
        tmp_path: Path, writer: ArchiveWriter, settings: FrontierSettings) -> None:
    seeded(settings, [entry("/a"), entry("/b")])
    frontier = worker(settings)
    frontier.attach(writer)
    writer.use_frontier(frontier, frontier.committed)
    rows = frontier.lease(2)
    writer.begin()
    frontier.acknowledge(rows[0][0])
    frontier.add([entry("/new", depth=2)])
    assert frontier.refresh().done == 0 and frontier.counts.pending == 0
    writer.commit()
    assert frontier.counts.done == 1
    assert frontier.counts.pending == 1  # /new
    assert frontier.counts.leased == 1  # /b


def test_a_rolled_back_batch_sends_nothing(writer: ArchiveWriter,
                                           settings: FrontierSettings) -> None:
    seeded(settings, [entry("/a")])
    frontier = worker(settings)
    frontier.attach(writer)
    writer.use_frontier(frontier, frontier.committed)
    (row,) = frontier.lease(1)
    writer.begin()
    frontier.acknowledge(row[0])
    writer.rollback()
    writer.commit()
    assert frontier.refresh().done == 0 and frontier.counts.leased == 1


def test_an_expired_lease_returns_to_pending(settings: FrontierSettings) -> None:
    seeded(settings, [entry(f"/p{i}") for i in range(3)])
    dead = worker(settings, lease_seconds=0.3)
    taken = dead.lease(10)
    assert len(taken) == 3
    survivor = worker(settings)
    assert survivor.lease(10) == [], "a live lease is nobody else's"
    time.sleep(0.5)
    survivor._idle_until = 0.0
    again = survivor.lease(10)
    assert sorted(again) == sorted(taken)
    assert survivor.counts.leased == 3


def test_acknowledging_renews_the_lease(settings: FrontierSettings) -> None:
    seeded(settings, [entry(f"/r{i}") for i in range(4)])
    busy = worker(settings, lease_seconds=0.6)
    rows = busy.lease(10)
    for row in rows[:3]:
        time.sleep(0.3)
        busy.acknowledge(row[0])
        busy.committed()
    other = worker(settings)
    assert other.lease(10) == [], "the lease was renewed by each acknowledgement"


def test_a_retried_lease_gets_the_same_chunk_and_a_spent_token_nothing(
        settings: FrontierSettings) -> None:
    seeded(settings, [entry(f"/i{i}") for i in range(8)])
    frontier = worker(settings)
    first = frontier._run("LEASE", "w:0", 5, 30_000)
    retried = frontier._run("LEASE", "w:0", 5, 30_000)
    assert sorted(first[4::2]) == sorted(retried[4::2]) and len(first[4::2]) == 5
    assert frontier.refresh().leased == 5 and frontier.counts.pending == 3
    frontier._acks = [int(i) for i in first[4::2]]
    frontier.committed()
    assert frontier._run("LEASE", "w:0", 5, 30_000)[4:] == [], "a crawled chunk is not re-granted"
    assert frontier.refresh().pending == 3


def test_claim_is_one_worker_s_and_idempotent(settings: FrontierSettings) -> None:
    one, two = worker(settings), worker(settings)
    key, url = entry("/target")[:2]
    assert one.claim(key, url, 1)
    assert not two.claim(key, url, 1)
    assert one._run("CLAIM", key, url, 1, FULL, f"{one.worker}:c0", 1000) == 1, (
        "a retried claim by its holder is granted again")
    one.release(key)
    assert two.claim(key, url, 1), "a released claim is pending again"
    two.release(key, fetch_again=False)
    assert not one.claim(key, url, 1)
    assert one.refresh().done == 1


def test_release_leases_puts_back_what_was_not_done(settings: FrontierSettings) -> None:
    seeded(settings, [entry(f"/l{i}") for i in range(4)])
    frontier = worker(settings)
    rows = frontier.lease(1)
    frontier.acknowledge(rows[0][0])
    frontier.committed()
    frontier.release_leases()
    assert frontier.counts.pending == 3 and frontier.counts.leased == 0
    assert frontier.counts.done == 1


def test_pending_under_a_prefix(settings: FrontierSettings) -> None:
    frontier = seeded(settings, [entry("/trap/1"), entry("/other")])
    assert frontier.has_pending_under("//site.test/trap/")
    assert not frontier.has_pending_under("//site.test/none/")
    rows = frontier.lease(10)
    for row in rows:
        if "/trap/" in row[1]:
            frontier.acknowledge(row[0])
    frontier.committed()
    assert not frontier.has_pending_under("//site.test/trap/")


def test_a_missed_prediction_is_dropped_and_may_be_queued_again(
        settings: FrontierSettings) -> None:
    frontier = seeded(settings, [entry("/page/2", mode=PREDICTED)])
    (row,) = frontier.lease(1)
    assert frontier.drop_prediction(row[0]) is False
    assert frontier.pending_count() == 0
    frontier.add([entry("/page/2", mode=PREDICTED)])
    frontier.committed()
    assert frontier.refresh().pending == 0, "a missed prediction is not predicted again"
    frontier.add([entry("/page/2")])
    frontier.committed()
    assert frontier.refresh().pending == 1, "a real link queues the URL afresh"


def test_join_refuses_another_crawl_under_the_name(settings: FrontierSettings) -> None:
    worker(settings).join(["http://site.test/"])
    worker(settings).join(["http://site.test/"])
    with pytest.raises(ValueError, match=r"has other roots .* \?crawl=NAME"):
        worker(settings).join(["http://other.test/"])


def test_calls_survive_a_redis_restart(tmp_path: Path) -> None:
    with running_redis(tmp_path / "restart") as server:
        settings = parse_frontier_url(server.url, "restart", chunk=2)
        frontier = seeded(settings, [entry(f"/s{i}") for i in range(3)])
        rows = frontier.lease(5)
        server.restart()
        frontier.acknowledge(rows[0][0])
        frontier.committed()
        counts = frontier.refresh()
        assert (counts.pending, counts.leased, counts.done) == (1, 1, 1), (
            "the state survived the restart (append-only file)")
