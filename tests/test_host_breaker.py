"""HostBreaker (nitpicker/middlewares/host_breaker.py, issue 27 item 2): a host that fails at
the connection K times in a row is given up on, its other URLs recorded with the same error,
untried; one probe after N seconds may bring it back. The middleware driven with Scrapy's own
requests and exceptions, and real crawls of a site linking a port that accepts and never
answers (:class:`fixtures.graph_site.SilentHost`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler
from twisted.internet import reactor
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TimeoutError
from twisted.internet.task import deferLater

from fixtures.graph_site import GraphSite, SilentHost
from nitpicker.crawl.fetch_errors import HostGivenUp
from nitpicker.crawl.meta import META_HOST_PROBE, META_MODE
from nitpicker.default_settings import defaults
from nitpicker.items import FollowMode
from nitpicker.middlewares.host_breaker import HostBreaker, host_key
from tests.helpers import crawl

if TYPE_CHECKING:
    from pathlib import Path


def breaker(**settings: Any) -> HostBreaker:
    return HostBreaker.from_crawler(get_crawler(settings_dict={**defaults(), **settings}))


def robots_txt(host: str) -> Request:
    """The robots.txt request of Scrapy's robots.txt middleware."""
    return Request(f"http://{host}/robots.txt", meta={"dont_obey_robotstxt": True})


def request(path: str, host: str = "dead.test", mode: FollowMode = FollowMode.METADATA
            ) -> Request:
    """A request as the scheduler builds it: an out-of-scope check by default."""
    return Request(f"http://{host}{path}", meta={META_MODE: int(mode)})


def go(middleware: HostBreaker, req: Request) -> None:
    """``process_request`` when it does not wait: it returns (the request goes) or raises."""
    coro = middleware.process_request(req)
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()
    raise AssertionError(f"{req.url} waits")


async def turn() -> None:
    """Let the reactor run what is ready (a waiting request's coroutine)."""
    await deferLater(reactor, 0, lambda: None)


def fail(middleware: HostBreaker, count: int, host: str = "dead.test") -> None:
    for n in range(count):
        req = request(f"/f{n}", host)
        go(middleware, req)
        middleware.process_exception(req, TimeoutError(string="took longer than 30.0 seconds"))


@pytest.mark.parametrize(("url", "key"), [
    ("http://Example.COM/a", "example.com:80"), ("https://example.com/", "example.com:443"),
    ("http://127.0.0.1:8080/x?y", "127.0.0.1:8080"), ("https://[::1]:8443/", "::1:8443"),
])
def test_the_host_is_its_name_and_port(url: str, key: str) -> None:
    assert host_key(Request(url)) == key


def test_given_up_after_k_connection_failures_in_a_row() -> None:
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=3)
    fail(middleware, 2)
    third = request("/third")
    go(middleware, third)  # 2 failures: it still goes
    middleware.process_exception(third, TimeoutError(string="took longer than 30.0 seconds"))
    with pytest.raises(HostGivenUp) as given_up:
        go(middleware, request("/next"))
    assert given_up.value.untried
    assert given_up.value.error.startswith("Timeout: ")
    assert "after 3 connection failures in a row" in given_up.value.error
    go(middleware, request("/other", "alive.test"))  # other hosts go on
    retried = request("/retried")
    retried.meta["retry_times"] = 1
    with pytest.raises(HostGivenUp) as again:
        go(middleware, retried)
    assert not again.value.untried, "a retry's URL was requested before"
    assert middleware.stats.get_value("nitpicker/host_breaker/opened") == 1
    assert middleware.stats.get_value("nitpicker/host_breaker/given_up") == 2


@pytest_twisted.ensureDeferred
async def test_a_failing_host_gets_no_more_requests_than_it_takes_to_give_it_up() -> None:
    """After one failure, two requests go (3 failures give the host up); a third waits for
    their outcome: given up when they fail, sent when one answers."""
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=3)
    fail(middleware, 1)
    first, second = request("/1"), request("/2")
    go(middleware, first)
    go(middleware, second)
    waiting = deferred_from_coro(middleware.process_request(request("/3")))
    await turn()
    assert not waiting.called, "two in flight: as many as the failures still needed"
    middleware.process_exception(first, TimeoutError())
    await turn()
    assert not waiting.called, "still one in flight: 2 failures of 3"
    middleware.process_exception(second, TimeoutError())
    with pytest.raises(HostGivenUp):
        await waiting
    fail(middleware, 1, "slow.test")
    sent = [request(f"/s{n}", "slow.test") for n in range(2)]
    for req in sent:
        go(middleware, req)
    late = deferred_from_coro(middleware.process_request(request("/late", "slow.test")))
    await turn()
    assert not late.called
    middleware.process_response(sent[0], Response(sent[0].url, status=200))
    assert await late is None, "the host answered: the request goes"


def test_an_answer_resets_the_count_and_other_failures_do_not_count() -> None:
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=3)
    fail(middleware, 2)
    answered = request("/ok")
    middleware.process_response(answered, Response(answered.url, status=404))
    fail(middleware, 2)
    other = request("/b")
    go(middleware, other)
    middleware.process_exception(other, ValueError("not the connection's"))
    refused = request("/d")
    go(middleware, refused)
    middleware.process_exception(refused, ConnectionRefusedError())
    with pytest.raises(HostGivenUp, match="^Connection refused"):
        go(middleware, request("/e"))


def test_one_probe_after_the_wait_reopens_or_keeps_it_given_up() -> None:
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=1, NITPICKER_HOST_BREAKER_PROBE_AFTER=0)
    fail(middleware, 1)
    probe = request("/probe")
    go(middleware, probe)  # the wait (0 s) is over: one probe goes
    assert probe.meta[META_HOST_PROBE]
    with pytest.raises(HostGivenUp):
        go(middleware, request("/while-probing"))
    middleware.process_exception(probe, DNSLookupError("no such host"))
    second = request("/probe-2")
    go(middleware, second)  # failed probe: given up again, probed again after 0 s
    middleware.process_response(second, Response(second.url, status=200))
    for n in range(3):
        go(middleware, request(f"/back{n}"))  # answered: no longer given up
    assert middleware.stats.get_value("nitpicker/host_breaker/probes") == 2


def test_the_site_s_own_pages_are_never_held_and_count_for_nothing() -> None:
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=1)
    for n in range(3):
        page = request(f"/page{n}", "site.test", FollowMode.FULL)
        go(middleware, page)
        middleware.process_exception(page, TimeoutError())
    go(middleware, request("/check", "site.test"))  # no failure counted: checks go
    fail(middleware, 1, "site.test")  # a check's failure gives the host up, for checks
    go(middleware, request("/page", "site.test", FollowMode.FULL))
    with pytest.raises(HostGivenUp):
        go(middleware, request("/check-2", "site.test"))


def test_a_probe_waits_probe_after_seconds() -> None:
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=1)  # 60 s
    fail(middleware, 1)
    with pytest.raises(HostGivenUp):
        go(middleware, request("/too-soon"))


def test_a_robots_txt_that_fails_at_the_connection_gives_its_host_up_at_once() -> None:
    """robots.txt is a host's first contact: one failure of it gives the host up (not three),
    and a retry of it is not sent, so that the checks waiting for it are answered now."""
    middleware = breaker(NITPICKER_HOST_BREAKER_FAILURES=3)
    robots = robots_txt("dead.test")
    go(middleware, robots)
    middleware.process_exception(robots, TimeoutError(string="took longer than 5.0 seconds"))
    with pytest.raises(HostGivenUp) as given_up:
        go(middleware, request("/a-check"))
    assert given_up.value.untried
    assert given_up.value.error.endswith(
        "(host given up on after its robots.txt failed: not requested)")
    assert middleware.stats.get_value("nitpicker/host_breaker/opened") == 1
    retried = robots_txt("dead.test")
    retried.meta["retry_times"] = 1
    with pytest.raises(IgnoreRequest, match="robots.txt of a host given up on"):
        go(middleware, retried)
    go(middleware, robots_txt("other.test"))  # another host's robots.txt goes


def test_a_root_s_robots_txt_counts_as_one_failure() -> None:
    """The robots.txt of a root's host is the site's: one failure of three, as any request."""
    middleware = HostBreaker.from_crawler(get_crawler(settings_dict=defaults()))
    middleware.site_hosts = frozenset({"site.test:80"})
    robots = robots_txt("site.test")
    go(middleware, robots)
    middleware.process_exception(robots, TimeoutError())
    go(middleware, request("/check", "site.test"))  # 1 failure of 3: checks still go
    assert middleware.hosts["site.test:80"].failures == 1


@pytest.mark.parametrize(("settings", "message"), [
    ({"NITPICKER_HOST_BREAKER_ENABLED": False}, "NITPICKER_HOST_BREAKER_ENABLED is false"),
    ({"NITPICKER_HOST_BREAKER_FAILURES": 0}, "NITPICKER_HOST_BREAKER_FAILURES must be at least 1"),
    ({"NITPICKER_HOST_BREAKER_PROBE_AFTER": -1},
     "NITPICKER_HOST_BREAKER_PROBE_AFTER must not be negative"),
])
def test_off_or_bad_settings_say_so(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(NotConfigured, match=message):
        breaker(**settings)


DEAD_LINKS = 12


def dead_links_site(dead: SilentHost) -> GraphSite:
    return GraphSite({"/": ["/about", *(dead.url(f"/x{n}") for n in range(DEAD_LINKS))],
                      "/about": ["/"]})


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_a_dead_host_s_urls_are_recorded_untried(tmp_path: Path) -> None:
    """Its robots.txt times out: the host is given up on, and none of its URLs is requested."""
    with SilentHost() as dead, dead_links_site(dead) as site:
        archive = await crawl(tmp_path, [site.url("/")], parallels=4,
                              settings={"DOWNLOAD_TIMEOUT": 1})
        accepted = dead.accepted
    rows = archive.rows("SELECT url, status, status_text, untried FROM pages"
                        " WHERE url LIKE ?", dead.url("/x%"))
    assert len(rows) == DEAD_LINKS and {row["status"] for row in rows} == {-1}
    assert accepted == 1, "robots.txt only"
    assert all(row["untried"] for row in rows)
    assert all(row["status_text"].startswith("Timeout: ") for row in rows)
    assert all(row["status_text"].endswith("after its robots.txt failed: not requested)")
               for row in rows)
    assert archive.page(site.url("/about"))["status"] == 200


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_without_robots_txt_a_dead_host_is_given_up_after_its_failures(
        tmp_path: Path) -> None:
    with SilentHost() as dead, dead_links_site(dead) as site:
        archive = await crawl(tmp_path, [site.url("/")], parallels=4, ignore_robots=True,
                              settings={"DOWNLOAD_TIMEOUT": 1})
        accepted = dead.accepted
    rows = archive.rows("SELECT url, status, status_text, untried FROM pages"
                        " WHERE url LIKE ?", dead.url("/x%"))
    assert len(rows) == DEAD_LINKS and {row["status"] for row in rows} == {-1}
    untried = [row for row in rows if row["untried"]]
    # at most the --parallels URLs in flight at the first failure and the 2 failures still
    # needed then were requested; the breaker answered the rest
    assert accepted <= 4 + 2 and len(untried) >= DEAD_LINKS - 4 - 2
    assert all("after 3 connection failures in a row: not requested" in row["status_text"]
               for row in untried)


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_without_the_breaker_every_url_is_requested(tmp_path: Path) -> None:
    with SilentHost() as dead, dead_links_site(dead) as site:
        archive = await crawl(tmp_path, [site.url("/")], parallels=12, host_breaker=False,
                              settings={"DOWNLOAD_TIMEOUT": 1})
        accepted = dead.accepted
    assert accepted == 1 + DEAD_LINKS
    assert archive.rows("SELECT count(*) AS n FROM pages WHERE untried = 1")[0]["n"] == 0
