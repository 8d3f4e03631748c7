"""PrivateNetworkGuard (nitpicker/middlewares/ssrf.py): unit checks with a fake resolver, and
real crawls of the fixture site on 127.0.0.1 (which the guard must refuse)."""

from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from nitpicker.crawl.config import CrawlConfig
from nitpicker.middlewares.ssrf import BLOCKED, SETTING, PrivateNetworkGuard
from tests.components import projected_settings
from tests.helpers import FakeDNS, crawl

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from fixtures.site import FixtureSite
    from nitpicker.policy.netguard import IPAddress, Refusal

GUARD_PATH = "nitpicker.middlewares.ssrf.PrivateNetworkGuard"
GUARD = {"DOWNLOADER_MIDDLEWARES": {GUARD_PATH: 75}}
DNS = {
    "public.example": ["93.184.215.14"],
    "metadata.attacker.example": ["169.254.169.254"],
    "rebind.attacker.example": ["93.184.215.14", "127.0.0.1"],
}


def make_guard(dns: FakeDNS, clock: Any = None, **settings: Any) -> PrivateNetworkGuard:
    crawler = get_crawler(settings_dict={SETTING: True, **settings})
    if clock is None:
        return PrivateNetworkGuard(crawler.stats, resolver=dns)
    return PrivateNetworkGuard(crawler.stats, resolver=dns, clock=clock)


async def check(guard: PrivateNetworkGuard, request: Request) -> None:
    """``process_request`` the way Scrapy awaits it (an asyncio task under the asyncio reactor)."""
    await deferred_from_coro(guard.process_request(request))


def blocked(guard: PrivateNetworkGuard) -> int:
    return int(guard.stats.get_value("nitpicker/ssrf/blocked", 0))


# -- enabling ---------------------------------------------------------------------------------


def _crawler(tmp_path: Path, setting: bool | None, option: bool, priority: str) -> Crawler:
    """The operator's setting (at ``priority``) and a job's crawl option, as a crawl has them."""
    config = CrawlConfig(roots=("http://site.test/",), output=str(tmp_path / "a.nitpicker"),
                         render=False, deny_private_networks=option)
    operator = {} if setting is None else {SETTING: setting}
    return get_crawler(settings_dict=projected_settings(config, operator, priority))


@pytest.mark.parametrize("priority", ["project", "cmdline"])
@pytest.mark.parametrize(
    ("setting", "option", "enabled"),
    [
        (None, False, False),
        (False, False, False),
        (True, False, True),  # the operator's setting: a job's option cannot turn it off
        (None, True, True),
        (False, True, True),  # the job's option turns it on, whatever the setting's priority
        (True, True, True),
    ],
)
def test_enabled_by_the_setting_or_the_crawl_option(
    tmp_path: Path, setting: bool | None, option: bool, enabled: bool, priority: str
) -> None:
    crawler = _crawler(tmp_path, setting, option, priority)
    if enabled:
        assert isinstance(PrivateNetworkGuard.from_crawler(crawler), PrivateNetworkGuard)
    else:
        with pytest.raises(NotConfigured):
            PrivateNetworkGuard.from_crawler(crawler)


# -- process_request --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (
            "http://metadata.attacker.example/latest/",
            "metadata.attacker.example resolves to 169.254.169.254 (cloud metadata)",
        ),
        (
            "http://rebind.attacker.example/",
            "rebind.attacker.example resolves to 127.0.0.1 (loopback)",
        ),
        ("http://127.0.0.1:8080/admin", "127.0.0.1 resolves to 127.0.0.1 (loopback)"),
        ("http://2130706433/", "2130706433 resolves to 127.0.0.1 (loopback)"),
        ("http://0x7f.1/", "0x7f.1 resolves to 127.0.0.1 (loopback)"),
        (
            "https://[::ffff:169.254.169.254]/",
            "::ffff:169.254.169.254 resolves to ::ffff:a9fe:a9fe (IPv4-mapped cloud metadata)",
        ),
        (
            "http://[fd00:ec2::254]/latest/",
            "fd00:ec2::254 resolves to fd00:ec2::254 (cloud metadata)",
        ),
        ("http://100.100.100.200/", "100.100.100.200 resolves to 100.100.100.200 (cloud metadata)"),
        ("http://10.1.2.3/robots.txt", "10.1.2.3 resolves to 10.1.2.3 (private (RFC 1918))"),
        ("file:///etc/passwd", "file: URLs are not fetched"),
        ("ftp://public.example/file", "ftp: URLs are not fetched"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_forbidden_destinations_are_ignored(url: str, reason: str) -> None:
    guard = make_guard(FakeDNS(DNS))
    with pytest.raises(IgnoreRequest) as raised:
        await check(guard, Request(url))
    assert str(raised.value) == f"{BLOCKED}: {reason}"
    assert blocked(guard) == 1


@pytest_twisted.ensureDeferred
async def test_public_destination_passes() -> None:
    dns = FakeDNS(DNS)
    guard = make_guard(dns)
    await check(guard, Request("https://public.example/page"))  # neither raised nor answered
    assert dns.asked == ["public.example"]
    assert blocked(guard) == 0


@pytest_twisted.ensureDeferred
async def test_every_redirect_hop_is_checked_again() -> None:
    """Scrapy's RedirectMiddleware turns a 3xx into a new Request; the guard judges each hop."""
    dns = FakeDNS(DNS)
    guard = make_guard(dns)
    redirect = RedirectMiddleware.from_crawler(guard_crawler := get_crawler())
    assert guard_crawler.settings.getbool("REDIRECT_ENABLED")
    start = Request("https://public.example/start")
    await check(guard, start)

    def hop(location: str) -> Request:
        response = Response(start.url, status=302, headers={"Location": location}, request=start)
        next_request = redirect.process_response(start, response)
        assert isinstance(next_request, Request)
        assert next_request.meta["redirect_urls"] == [start.url]
        return next_request

    public_hop = hop("https://public.example/moved")
    await check(guard, public_hop)  # a public hop passes
    assert blocked(guard) == 0

    for location, reason in [
        (
            "http://metadata.attacker.example/latest/meta-data/",
            "metadata.attacker.example resolves to 169.254.169.254 (cloud metadata)",
        ),
        ("http://2130706433/", "2130706433 resolves to 127.0.0.1 (loopback)"),
    ]:
        with pytest.raises(IgnoreRequest, match=re.escape(f"{BLOCKED}: {reason}")):
            await check(guard, hop(location))
    assert blocked(guard) == 2
    assert dns.asked == ["public.example", "metadata.attacker.example"]  # public.example cached


@pytest_twisted.ensureDeferred
async def test_resolution_runs_in_a_thread_and_is_cached_for_the_ttl() -> None:
    threads: list[threading.Thread] = []
    dns = FakeDNS(DNS)

    def resolver(*args: Any) -> Any:
        threads.append(threading.current_thread())
        return dns(*args)

    now = [1000.0]
    guard = make_guard(resolver, clock=lambda: now[0])  # type: ignore[arg-type]
    for _ in range(3):
        await check(guard, Request("http://public.example/"))
    assert dns.asked == ["public.example"]
    assert threads and threading.main_thread() not in threads  # never on the reactor thread
    now[0] += PrivateNetworkGuard.dns_ttl + 1
    await check(guard, Request("http://public.example/again"))
    assert dns.asked == ["public.example", "public.example"]


@pytest_twisted.ensureDeferred
async def test_unresolvable_host_is_a_dns_failure_without_connecting() -> None:
    guard = make_guard(FakeDNS(DNS))
    with pytest.raises(CannotResolveHostError, match="nowhere.example"):
        await check(guard, Request("http://nowhere.example/"))
    assert guard.stats.get_value("nitpicker/ssrf/unresolved") == 1
    assert blocked(guard) == 0


@pytest_twisted.ensureDeferred
async def test_blocked_host_is_logged_once_and_counted_every_time(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    guard = make_guard(FakeDNS(DNS))
    # a logging.config.dictConfig run earlier in this worker (uvicorn's, by a viewer test)
    # disables the loggers that existed then: this one must log
    monkeypatch.setattr(logging.getLogger("nitpicker.middlewares.ssrf"), "disabled", False)
    with caplog.at_level(logging.WARNING, logger="nitpicker.middlewares.ssrf"):
        for path in ("/a", "/b", "/c"):
            with pytest.raises(IgnoreRequest):
                await check(guard, Request(f"http://metadata.attacker.example{path}"))
    assert blocked(guard) == 3
    # the guard's records only: a crawler made first in this worker logs Scrapy's add-ons
    assert [r.getMessage() for r in caplog.records
            if r.name == "nitpicker.middlewares.ssrf"] == [
        (
            f"{BLOCKED}: metadata.attacker.example resolves to 169.254.169.254 (cloud metadata)"
            " (first URL: http://metadata.attacker.example/a)"
        )
    ]


# -- real crawls of the fixture site (127.0.0.1) ------------------------------------------------


def _reason(archive: Any, url: str) -> str:
    row = archive.page(url)
    assert row is not None, url
    assert row["is_skipped"] == 1, dict(row)
    assert row["status"] is None
    return str(row["skip_reason"])


@pytest_twisted.ensureDeferred
async def test_crawl_of_a_loopback_site_is_blocked_and_sends_nothing(
    site: FixtureSite, tmp_path: Path
) -> None:
    site.clear_log()
    archive = await crawl(
        tmp_path,
        [site.url("/recursive/")],
        settings=GUARD,
        deny_private_networks=True,
        render=False,
    )
    assert re.fullmatch(
        rf"{BLOCKED}: localhost resolves to (127\.0\.0\.1|::1) \(loopback\)",
        _reason(archive, site.url("/recursive/")),
    )
    assert archive.urls() == {site.url("/recursive/")}
    assert site.request_log == []  # not the page, not robots.txt


@pytest_twisted.ensureDeferred
async def test_same_crawl_without_the_option_works(site: FixtureSite, tmp_path: Path) -> None:
    site.clear_log()
    archive = await crawl(
        tmp_path,
        [site.url("/recursive/")],
        settings=GUARD,
        deny_private_networks=False,
        render=False,
    )
    root = archive.page(site.url("/recursive/"))
    assert (root["status"], root["is_skipped"]) == (200, 0)
    assert ("GET", f"localhost:{site.port}", "/recursive/") in site.request_log


@pytest_twisted.ensureDeferred
async def test_the_setting_enables_the_guard_for_every_job(
    site: FixtureSite, tmp_path: Path
) -> None:
    site.clear_log()
    archive = await crawl(
        tmp_path,
        [f"http://2130706433:{site.port}/recursive/"],
        settings={**GUARD, SETTING: True},
        render=False,
    )
    reason = _reason(archive, f"http://2130706433:{site.port}/recursive/")
    assert reason == f"{BLOCKED}: 2130706433 resolves to 127.0.0.1 (loopback)"
    assert site.request_log == []


class LocalhostAllowed(PrivateNetworkGuard):
    """The fixture site is reachable as ``localhost`` (allowed here on purpose) and as
    ``127.0.0.1`` (its out-of-scope alias, still refused)."""

    def refusal(self, host: str, addresses: Sequence[IPAddress]) -> Refusal | None:
        return None if host == "localhost" else super().refusal(host, addresses)


@pytest_twisted.ensureDeferred
async def test_redirect_hops_and_robots_txt_pass_through_the_guard(
    site: FixtureSite, tmp_path: Path
) -> None:
    seen: list[str] = []

    class Recording(LocalhostAllowed):
        async def process_request(self, request: Request) -> None:
            seen.append(request.url)
            await super().process_request(request)

    await crawl(
        tmp_path,
        [site.url("/redirect/start")],
        settings={"DOWNLOADER_MIDDLEWARES": {GUARD_PATH: None, Recording: 75}},
        deny_private_networks=True,
    )
    hops = [url for url in seen if "/redirect/" in url]
    assert hops[:3] == [site.url(f"/redirect/{p}") for p in ("start", "middle", "dest")]
    assert site.url("/robots.txt") in seen


@pytest_twisted.ensureDeferred
async def test_link_to_a_forbidden_host_is_skipped_while_the_site_is_crawled(
    site: FixtureSite, tmp_path: Path
) -> None:
    site.clear_log()
    archive = await crawl(
        tmp_path,
        [site.url("/recursive/")],
        settings={"DOWNLOADER_MIDDLEWARES": {GUARD_PATH: None, LocalhostAllowed: 75}},
        deny_private_networks=True,
    )
    assert archive.page(site.url("/recursive/page-b"))["status"] == 200
    external = f"{site.external_url}/external-like"
    assert _reason(archive, external) == f"{BLOCKED}: 127.0.0.1 resolves to 127.0.0.1 (loopback)"
    hosts = {host for _, host, _ in site.request_log}
    assert hosts == {f"localhost:{site.port}"}  # neither the page nor robots.txt of 127.0.0.1


@pytest_twisted.ensureDeferred
async def test_an_answer_that_changes_after_the_check_is_refused_when_connecting(
    site: FixtureSite, tmp_path: Path
) -> None:
    """DNS rebinding: the check sees a public address, the connection would get 127.0.0.1."""
    from twisted.internet import reactor

    class Rebound(PrivateNetworkGuard):
        def __init__(self, stats: StatsCollector) -> None:
            super().__init__(stats, resolver=FakeDNS({"localhost": ["93.184.215.14"]}))

    resolver_before = reactor.nameResolver
    site.clear_log()
    archive = await crawl(
        tmp_path,
        [site.url("/recursive/")],
        settings={"DOWNLOADER_MIDDLEWARES": {GUARD_PATH: None, Rebound: 75}},
        deny_private_networks=True,
    )
    assert re.fullmatch(
        rf"{BLOCKED}: localhost resolves to (127\.0\.0\.1|::1) \(loopback\) when connecting",
        _reason(archive, site.url("/recursive/")),
    )
    assert site.request_log == []
    assert reactor.nameResolver is resolver_before  # the wrapper is gone after the crawl
