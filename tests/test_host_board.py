"""HostBoard (nitpicker/archive/host_board.py, issue 27 item 2): the hosts one worker's breaker
gave up on are given up on by the other workers, learnt with the round trips their frontier
makes anyway — the archive's shared frontier of ``--workers N`` (its lease) and a Redis frontier
against a real redis-server (``FLUSH``, ``COUNTS``): two workers' breakers driven over each
store, then real crawls of two workers in this reactor against a port that accepts and never
answers (:class:`fixtures.graph_site.SilentHost`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.crawler import CrawlerRunner
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.defer import DeferredList
from twisted.internet.error import TimeoutError

from fixtures.graph_site import GraphSite, SilentHost
from nitpicker.archive import ArchiveWriter
from nitpicker.archive.host_board import GivenUpHost, HostBoard
from nitpicker.archive.shared_writer import SharedArchiveWriter
from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.fetch_errors import HostGivenUp
from nitpicker.crawl.meta import META_MODE
from nitpicker.crawl.redis_frontier import RedisFrontier, connect_frontier, parse_frontier_url
from nitpicker.crawl.session import CrawlSession
from nitpicker.crawl.shared_scheduler import SCHEDULER
from nitpicker.crawl.worker_role import WorkerRole
from nitpicker.default_settings import defaults
from nitpicker.items import FollowMode
from nitpicker.middlewares.host_breaker import HostBreaker
from nitpicker.spiders.site import SiteSpider
from tests.helpers import Archive, crawl_settings, writer_config
from tests.redis_server import RedisServer, running_redis

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

FAILURES = 3
DEAD = "dead.test"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


class Worker:
    """One worker's host breaker, and the exchange its frontier makes anyway (a lease, a
    flush); :attr:`sent` counts the requests to the dead host that went."""

    def __init__(self, board: HostBoard, exchange: Callable[[], Any]) -> None:
        self.breaker = HostBreaker.from_crawler(get_crawler(settings_dict={
            **defaults(), "NITPICKER_HOST_BREAKER_FAILURES": FAILURES}))
        self.breaker.board = board
        self.exchange = exchange
        self.sent = 0
        self.given_up: list[HostGivenUp] = []

    def check(self, count: int) -> None:
        """``count`` checks of the dead host, one after the other: each that goes times out."""
        for n in range(count):
            req = Request(f"http://{DEAD}/{n}", meta={META_MODE: int(FollowMode.METADATA)})
            coro = self.breaker.process_request(req)
            try:
                coro.send(None)
            except StopIteration:
                self.sent += 1
                self.breaker.process_exception(req, TimeoutError(string="took too long"))
            except HostGivenUp as exc:
                self.given_up.append(exc)
            else:
                raise AssertionError("a check waits: none is in flight here")

    def answered(self) -> None:
        """A request to the dead host got an answer after all (a probe)."""
        req = Request(f"http://{DEAD}/probe", meta={META_MODE: int(FollowMode.METADATA)})
        self.breaker.process_response(req, Response(req.url, status=200))


@pytest.fixture(params=["workers", pytest.param("redis", marks=pytest.mark.integration)])
def workers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Worker]]:
    """Workers of one crawl: of ``--workers N`` (each attached to the archive, exchanging at its
    lease) or of a Redis frontier (exchanging at its flush and its counts)."""
    made: list[Any] = []
    if request.param == "workers":
        coordinator = ArchiveWriter.create(writer_config(tmp_path))
        coordinator.commit()

        def worker() -> Worker:
            writer = SharedArchiveWriter.attach(coordinator.path, owner=f"w{len(made)}",
                                                lease_seconds=60)
            made.append(writer)
            board = writer.frontier.board = HostBoard()
            board.shared = True
            return Worker(board, lambda: writer.frontier.lease(1))

        yield worker
        for writer in made:
            writer.detach()
        coordinator.abandon()
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    settings = parse_frontier_url(f"{server.url}?crawl={request.node.name}", "unused")

    def redis_worker() -> Worker:
        frontier = RedisFrontier(connect_frontier(settings), settings)
        made.append(frontier)
        board = frontier.board = HostBoard()
        board.shared = True
        return Worker(board, lambda: (frontier.committed(), frontier.refresh()))

    yield redis_worker


def test_two_workers_give_a_dead_host_up_as_one_breaker(workers: Callable[[], Worker]) -> None:
    """The second worker learns the host with its next exchange and sends nothing to it:
    the two cost the dead host FAILURES requests in all, not FAILURES each."""
    one, two = workers(), workers()
    two.exchange()  # nothing given up yet
    two.check(1)  # the other worker's URLs go meanwhile
    one.check(10)
    assert one.sent == FAILURES
    one.exchange()  # published
    two.exchange()  # learnt
    two.check(10)
    assert one.sent + two.sent == FAILURES + 1, "like one breaker (and the check sent before)"
    assert len(two.given_up) == 10 and all(exc.untried for exc in two.given_up)
    recorded_by_one = one.breaker.given_up_error(one.breaker.hosts[f"{DEAD}:80"])
    assert two.given_up[0].error == recorded_by_one
    assert recorded_by_one.endswith("after 3 connection failures in a row: not requested)")
    assert two.breaker.stats.get_value("nitpicker/host_breaker/learnt") == 1
    assert two.breaker.stats.get_value("nitpicker/host_breaker/opened") is None


def test_a_host_that_answers_again_is_withdrawn(workers: Callable[[], Worker]) -> None:
    one, two, three = workers(), workers(), workers()
    one.check(FAILURES)
    one.exchange()
    two.exchange()
    two.check(1)
    assert two.sent == 0
    two.answered()  # its probe, say
    two.exchange()  # withdrawn
    three.exchange()
    three.check(1)
    assert three.sent == 1, "no worker learns it any more"
    one.check(1)
    assert one.sent == FAILURES, "the worker that gave it up keeps it until its own probe"


def test_a_crawl_of_its_own_publishes_nothing() -> None:
    board = HostBoard()
    board.publish(GivenUpHost(f"{DEAD}:80", "Timeout", "after 3", 60.0))
    board.withdraw("alive.test:80")
    assert not board.has_outgoing() and board.outgoing() == ([], [])


def test_the_board_s_version_changes_with_what_is_learnt() -> None:
    board = HostBoard()
    host = GivenUpHost("dead.test:80", "Timeout", "after 3", 60.0, until=100.0)
    board.learn([host])
    assert board.version == 1
    board.learn([GivenUpHost("dead.test:80", "Timeout", "after 3", 59.0, until=100.0)])
    assert board.version == 1, "the same host, the same probe time: nothing to look at"
    board.learn([GivenUpHost("dead.test:80", "Timeout", "after 3", 60.0, until=160.0)])
    assert board.version == 2, "published again (a failed probe): a later probe time"
    board.learn([])
    assert board.version == 3 and board.learnt() == {}


LATER = 40
CHAIN = 8
SLOW = {f"/s{n}": 0.6 for n in range(1, CHAIN + 1)}
"""Seconds each page of the chain takes (under the download timeout, 1 s): the other worker
has ~4 s past the dead host's robots.txt timeout to learn it, time a loaded machine needs (a
chain of four failed once under the full suite)."""


def slow_chain(dead: SilentHost) -> dict[str, list[str]]:
    """``/`` links the dead host's first URL and a chain of :data:`CHAIN` slow pages
    (:data:`SLOW`), the last of which links its :data:`LATER` others."""
    pages: dict[str, list[str]] = {"/": ["/s1", dead.url("/x0")]}
    for n in range(1, CHAIN):
        pages[f"/s{n}"] = [f"/s{n + 1}"]
    pages[f"/s{CHAIN}"] = [dead.url(f"/x{n}") for n in range(1, LATER + 1)]
    return pages


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_two_workers_of_a_redis_frontier_cost_a_dead_host_one_connection(
        tmp_path: Path, redis_server: RedisServer) -> None:
    """Two crawlers (in this reactor) of one Redis frontier: the page linking a dead host's
    first URL comes first, the page linking its 40 others after eight slow pages. The worker
    whose check met the host first gives it up (its robots.txt timed out) and the other learns
    it with its frontier's next exchange: one connection in all, whichever worker gets which
    checks (without the board, each worker fetches robots.txt itself)."""
    with SilentHost() as dead, GraphSite(slow_chain(dead), delays=SLOW) as site:
        root = site.url("/")
        settings = crawl_settings()
        settings.setdict({"DOWNLOAD_TIMEOUT": 1, "NITPICKER_FRONTIER_CHUNK": 4},
                         priority="cmdline")
        frontier = f"{redis_server.url}?crawl=dead-host"
        runner = CrawlerRunner(settings)
        shards = [tmp_path / f"shard-{n}.nitpicker" for n in range(2)]
        await DeferredList([
            runner.crawl(SiteSpider, config=CrawlConfig(roots=(root,), output=str(shard),
                                                        retry=0, render=False),
                         frontier=frontier)
            for shard in shards])
        accepted = dead.accepted
    rows = [row for shard in shards for row in Archive(shard).rows(
        "SELECT url, status, untried FROM pages WHERE url LIKE ? AND scraped = 1",
        dead.url("/x%"))]  # recorded (a shard holds the links it found as stubs too)
    assert sorted(row["url"] for row in rows) == sorted(
        dead.url(f"/x{n}") for n in range(LATER + 1))
    assert {row["status"] for row in rows} == {-1}
    assert accepted == 1, "one robots.txt: the host given up on by both workers"
    learnt = [Archive(shard).rows("SELECT count(*) AS n FROM pages WHERE url LIKE ?"
                                  " AND untried = 1", dead.url("/x%"))[0]["n"] for shard in shards]
    assert all(learnt), "each worker recorded some of the host's URLs untried"


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_two_workers_of_one_archive_cost_a_dead_host_one_connection(
        tmp_path: Path) -> None:
    """The same with ``--workers 2``'s frontier (the archive's table), its two workers
    crawling in this reactor as the coordinator's processes do."""
    with SilentHost() as dead, GraphSite(slow_chain(dead), delays=SLOW) as site:
        config = CrawlConfig(roots=(site.url("/"),), output=str(tmp_path / "w.nitpicker"),
                             retry=0, render=False)
        coordinator = CrawlSession(config)
        coordinator.open()  # the archive, the run, the roots: as `crawl --workers` does
        coordinator.archive.commit()
        settings = crawl_settings()
        settings.setdict({"DOWNLOAD_TIMEOUT": 1, "SCHEDULER": SCHEDULER}, priority="cmdline")
        runner = CrawlerRunner(settings)
        await DeferredList([
            runner.crawl(SiteSpider, config=config,
                         worker_role=WorkerRole(n, 2, owner=f"test.{n}", lease_seconds=30))
            for n in range(2)])
        accepted = dead.accepted
        coordinator.archive.abandon()
    rows = Archive(tmp_path / "w.nitpicker").rows(
        "SELECT url, status, untried FROM pages WHERE url LIKE ? AND scraped = 1",
        dead.url("/x%"))
    assert len(rows) == LATER + 1 and {row["status"] for row in rows} == {-1}
    assert accepted == 1, "one robots.txt: the host given up on by both workers"
