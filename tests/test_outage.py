"""nitpicker/middlewares/outage.py: a network outage pauses the crawl; its URLs are fetched
again once a probe answers, never recorded as failed; past the give-up time the run fails with
``error_code = outage``, resumable. Through the CLI against a fixture site that goes dark."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
    NotConfigured,
)
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from twisted.internet import error as net_error
from twisted.internet.defer import Deferred
from twisted.web._newclient import ResponseNeverReceived

from fixtures.site import WIDE_MAX, FixtureSite
from nitpicker.crawl.fetch_errors import is_connection_failure
from nitpicker.crawl.meta import META_DEPTH, META_FRONTIER_ID, META_MODE, META_OUTAGE_PROBE
from nitpicker.default_settings import from_environment
from nitpicker.middlewares import outage as outage_module
from nitpicker.middlewares.outage import OutageGuard, OutageSettings
from nitpicker.query.outages import OUTAGE_OUTCOMES, list_outages
from tests.components import ROOT, open_session, unit_crawler
from tests.helpers import ROOT as REPO

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

WIDE_PAGES = WIDE_MAX + 1
"""``/wide/`` and its pages ``/wide/p/1`` … ``/wide/p/120``."""

FAST = {"NITPICKER_OUTAGE_PROBE_INTERVAL": "0.2", "NITPICKER_OUTAGE_PROBE_MAX_INTERVAL": "0.4"}
"""Probes every 0.2 s to 0.4 s: a test's outage ends within half a second of the site's return."""


# -- the settings -------------------------------------------------------------------------------


def test_the_settings_default_to_probing_every_five_seconds_for_half_an_hour() -> None:
    assert OutageSettings.from_settings(Settings({
        "NITPICKER_OUTAGE_PROBE_INTERVAL": 5.0, "NITPICKER_OUTAGE_PROBE_MAX_INTERVAL": 60.0,
        "NITPICKER_OUTAGE_PROBE_TIMEOUT": 10.0, "NITPICKER_OUTAGE_GIVE_UP": 1800.0,
        "NITPICKER_OUTAGE_PROBE_URL": ""})) == OutageSettings()


def test_the_settings_read_strings_from_the_environment() -> None:
    settings = Settings({**from_environment({"NITPICKER_OUTAGE_GIVE_UP": "2.5",
                                             "NITPICKER_OUTAGE_PROBE_URL": " http://a.test/ok ",
                                             "HOME": "/root"})})
    for name in ("PROBE_INTERVAL", "PROBE_MAX_INTERVAL", "PROBE_TIMEOUT"):
        settings.set(f"NITPICKER_OUTAGE_{name}", "1")
    parsed = OutageSettings.from_settings(settings)
    assert (parsed.give_up, parsed.probe_url) == (2.5, "http://a.test/ok")


def test_only_the_settings_of_the_table_are_read_from_the_environment() -> None:
    assert from_environment({"NITPICKER_OUTAGE_ENABLED": "0", "NITPICKER_CHROMIUM": "/c",
                             "NITPICKER_NOT_A_SETTING": "1"}) == {"NITPICKER_OUTAGE_ENABLED": "0"}


@pytest.mark.parametrize(("settings", "message"), [
    ({"NITPICKER_OUTAGE_GIVE_UP": "soon"},
     "NITPICKER_OUTAGE_GIVE_UP must be a number of seconds, got 'soon'"),
    ({"NITPICKER_OUTAGE_GIVE_UP": "0"},
     "NITPICKER_OUTAGE_GIVE_UP must be a number of seconds above 0, got 0.0"),
    ({"NITPICKER_OUTAGE_PROBE_TIMEOUT": "inf"},
     "NITPICKER_OUTAGE_PROBE_TIMEOUT must be a number of seconds above 0, got inf"),
    ({"NITPICKER_OUTAGE_PROBE_INTERVAL": "nan"},
     "NITPICKER_OUTAGE_PROBE_INTERVAL must be a number of seconds above 0, got nan"),
    ({"NITPICKER_OUTAGE_PROBE_INTERVAL": "90"},
     "NITPICKER_OUTAGE_PROBE_INTERVAL (90) exceeds NITPICKER_OUTAGE_PROBE_MAX_INTERVAL (60)"),
    ({"NITPICKER_OUTAGE_PROBE_URL": "ftp://a.test/"},
     "NITPICKER_OUTAGE_PROBE_URL must be an http(s) URL, got 'ftp://a.test/'"),
])
def test_a_bad_setting_is_refused_naming_it(settings: dict[str, str], message: str) -> None:
    base = {"NITPICKER_OUTAGE_PROBE_INTERVAL": 5, "NITPICKER_OUTAGE_PROBE_MAX_INTERVAL": 60,
            "NITPICKER_OUTAGE_PROBE_TIMEOUT": 10, "NITPICKER_OUTAGE_GIVE_UP": 1800,
            "NITPICKER_OUTAGE_PROBE_URL": ""}
    with pytest.raises(ValueError) as raised:
        OutageSettings.from_settings(Settings({**base, **settings}))
    assert str(raised.value) == message


def test_off_the_guard_is_not_configured(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path, settings={"NITPICKER_OUTAGE_ENABLED": False})
    with pytest.raises(NotConfigured, match="NITPICKER_OUTAGE_ENABLED is false"):
        OutageGuard.from_crawler(crawler)


# -- what a connection failure is -----------------------------------------------------------------


@pytest.mark.parametrize(("exception", "expected"), [
    (CannotResolveHostError("no such host"), True),
    (net_error.DNSLookupError("no such host"), True),
    (DownloadConnectionRefusedError("refused"), True),
    (net_error.ConnectionRefusedError(), True),
    (DownloadTimeoutError("took longer than 30 s"), True),
    (net_error.TCPTimedOutError(), True),
    (net_error.ConnectionLost(), True),
    (ResponseNeverReceived([]), True),
    (net_error.ConnectionLost("SSL routines: certificate verify failed"), False),  # TLS
    (IgnoreRequest("robots.txt"), False),
    (ValueError("not a download error"), False),
], ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else str(value))
def test_connection_failures_are_dns_refused_timeout_and_reset(exception: BaseException,
                                                                expected: bool) -> None:
    assert is_connection_failure(exception) is expected


# -- the guard, one component ---------------------------------------------------------------------


def page(url: str, frontier_id: int = 1, **meta: Any) -> Request:
    return Request(url, meta={META_FRONTIER_ID: frontier_id, META_DEPTH: 1, META_MODE: 0, **meta})


def answer(request: Request, status: int = 200) -> HtmlResponse:
    return HtmlResponse(request.url, status=status, body=b"<p>ok</p>", request=request)


async def turn() -> None:
    """Let the event loop run what is ready (the held failures' tasks)."""
    await Deferred.fromFuture(asyncio.ensure_future(asyncio.sleep(0.01)))


def hold(guard: OutageGuard, request: Request, exception: Exception) -> Deferred[Any]:
    """The guard's verdict on a failed download, as a Deferred the test can await."""
    return Deferred.fromFuture(asyncio.ensure_future(guard.process_exception(request, exception)))


class FakeEngine:
    """Probes answer or fail as the test says; the requests it was asked for are kept."""

    def __init__(self) -> None:
        self.site_up = False
        self.probes: list[Request] = []

    async def download_async(self, request: Request) -> HtmlResponse:
        self.probes.append(request)
        if not self.site_up:
            raise DownloadConnectionRefusedError("Connection was refused by other side")
        return answer(request, 503)


def guard_of(tmp_path: Path, **settings: Any) -> tuple[Crawler, OutageGuard, FakeEngine]:
    crawler = unit_crawler(tmp_path, settings={**FAST, **settings})
    engine = FakeEngine()
    crawler.engine = engine  # type: ignore[assignment]
    crawler.crawling = True
    open_session(crawler)
    return crawler, OutageGuard.from_crawler(crawler), engine


@pytest_twisted.ensureDeferred
async def test_a_failure_before_anything_answered_is_not_held(tmp_path: Path) -> None:
    crawler, guard, engine = guard_of(tmp_path)
    assert await hold(guard, page(ROOT), DownloadConnectionRefusedError("refused")) is None
    assert engine.probes == []
    crawl_session_of(crawler).close("finished")


@pytest_twisted.ensureDeferred
async def test_an_in_scope_answer_after_a_failure_releases_it_without_a_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outage_module, "CONFIRM_WAIT", 60.0)  # no probe while the test runs
    crawler, guard, engine = guard_of(tmp_path)
    guard.process_response(page(ROOT + "a"), answer(page(ROOT + "a")))
    held = hold(guard, page(ROOT + "gone", 2), CannotResolveHostError("no such host"))
    await turn()
    assert not held.called  # held: it may be an outage
    sent_before = page(ROOT + "slow", 3, download_latency=5.0)  # sent before the failure
    guard.process_response(sent_before, answer(sent_before))
    await turn()
    assert not held.called  # a page that was on its way says nothing of the site now
    sent_after = page(ROOT + "b", 4, download_latency=0.0)
    guard.process_response(sent_after, answer(sent_after, 404))
    assert await held is None  # the site answers: the URL's own failure, retried and recorded
    assert engine.probes == []
    assert crawler.stats.get_value("nitpicker/outage/checks") == 1
    crawl_session_of(crawler).close("finished")


@pytest_twisted.ensureDeferred
async def test_a_browser_download_is_not_held(tmp_path: Path) -> None:
    crawler, guard, engine = guard_of(tmp_path)
    guard.process_response(page(ROOT + "a"), answer(page(ROOT + "a")))
    rendered = page(ROOT + "b", 2, playwright=True)
    assert await hold(guard, rendered, DownloadTimeoutError("timeout")) is None
    assert engine.probes == []
    crawl_session_of(crawler).close("finished")


@pytest_twisted.ensureDeferred
async def test_a_probe_that_answers_releases_the_failure(tmp_path: Path) -> None:
    crawler, guard, engine = guard_of(tmp_path)
    engine.site_up = True
    guard.process_response(page(ROOT + "a"), answer(page(ROOT + "a")))
    assert await hold(guard, page(ROOT + "reset", 2), ResponseNeverReceived([])) is None
    [probe] = engine.probes
    assert (probe.method, probe.url, probe.meta[META_OUTAGE_PROBE]) == ("HEAD", ROOT + "a", True)
    assert crawl_session_of(crawler).paused is None
    crawl_session_of(crawler).close("finished")


@pytest_twisted.ensureDeferred
async def test_an_outage_pauses_the_crawl_and_fetches_the_failed_url_again(
        tmp_path: Path) -> None:
    crawler, guard, engine = guard_of(tmp_path)
    session = crawl_session_of(crawler)
    guard.process_response(page(ROOT + "a"), answer(page(ROOT + "a")))
    failed = page(ROOT + "b", 2, retry_times=3)
    held = hold(guard, failed, DownloadConnectionRefusedError("refused"))
    later = hold(guard, page(ROOT + "c", 3), DownloadTimeoutError("timeout"))
    for _ in range(1000):
        await turn()
        if session.paused:
            break
    assert session.paused == "outage"
    assert not held.called and not later.called
    engine.site_up = True
    again = await held
    assert isinstance(again, Request) and again.url == failed.url
    assert "retry_times" not in again.meta and again.meta[META_FRONTIER_ID] == 2
    assert (await later).url == ROOT + "c"
    assert session.paused is None
    rows = session.archive.conn.execute(
        "SELECT outcome, requeued, probes >= 2, error, probe_url FROM outages").fetchall()
    assert rows == [("resumed", 2, 1, "Connection refused: refused", ROOT + "a")]
    assert crawler.stats.get_value("nitpicker/outage/requeued") == 2
    session.close("finished")


def crawl_session_of(crawler: Crawler) -> Any:
    return crawler.spider.session  # type: ignore[union-attr]


def test_an_archive_from_before_the_outages_table_has_none() -> None:
    conn = sqlite3.connect(":memory:")
    assert list_outages(conn, limit=5) == {"items": [], "total": 0, "offset": 0, "limit": 5}


# -- through the CLI: a fixture site that goes dark -----------------------------------------------


def crawl(site: FixtureSite, out: Path, *args: str, env: dict[str, str] | None = None
          ) -> subprocess.Popen[str]:
    """``nitpicker crawl /wide/`` in the background (two requests at a time)."""
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/wide/"), "-o", str(out),
         "--no-render", "--parallels", "2", "--no-predict-pagination", *args],
        cwd=out.parent, env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300",
                             **FAST, **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def go_dark(site: FixtureSite, after: int, crawler: subprocess.Popen[str]) -> None:
    """Once ``after`` wide pages were asked for, stop the server: connections refused, the
    open ones closed."""
    deadline = time.monotonic() + 60
    while sum(target.startswith("/wide/p/") for _, _, target in site.request_log) < after:
        assert crawler.poll() is None and time.monotonic() < deadline, "the crawl ended first"
        time.sleep(0.01)
    site.stop()


def statuses(path: Path) -> dict[int | None, int]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT status, count(*) FROM pages GROUP BY status"))


def query(path: Path, sub_command: str) -> Any:
    result = subprocess.run([sys.executable, "-m", "nitpicker.cli", "query", str(path),
                             sub_command], env={**os.environ, "PYTHONPATH": str(REPO)},
                            capture_output=True, text=True, check=True, timeout=60)
    return json.loads(result.stdout)


@pytest.fixture
def dark_site() -> Any:
    """A fixture site of its own (the test stops and restarts it), slow enough to go dark in."""
    with FixtureSite(delay=0.03) as site:
        yield site


def test_a_site_that_goes_dark_and_comes_back_is_crawled_whole(
        tmp_path: Path, dark_site: FixtureSite) -> None:
    out = tmp_path / "dark.nitpicker"
    crawler = crawl(dark_site, out)
    go_dark(dark_site, 30, crawler)
    time.sleep(1.5)
    dark_site.start()
    _, stderr = crawler.communicate(timeout=120)
    assert crawler.returncode == 0, stderr
    assert statuses(out) == {200: WIDE_PAGES}  # each page once, none a fetch error
    [outage] = query(out, "outages")["items"]
    assert outage["outcome"] == "resumed" and outage["outcome"] in OUTAGE_OUTCOMES
    assert outage["requeued"] >= 1 and outage["probes"] >= 2 and outage["seconds"] >= 1.0
    assert outage["error"].startswith(("Connection refused", "Connection reset"))
    assert outage["run_id"] == 1 and outage["worker"] is None
    assert query(out, "runs")["items"][0]["status"] == "finished"
    assert "1 network outage: paused " in stderr
    assert f"URL(s) fetched again (nitpicker query {out} outages)" in stderr


def test_an_outage_past_the_give_up_time_fails_the_run_and_resume_finishes_it(
        tmp_path: Path, dark_site: FixtureSite) -> None:
    out = tmp_path / "gone.nitpicker"
    crawler = crawl(dark_site, out, env={"NITPICKER_OUTAGE_GIVE_UP": "1.5"})
    go_dark(dark_site, 30, crawler)
    started = time.monotonic()
    _, stderr = crawler.communicate(timeout=120)
    assert time.monotonic() - started < 30
    assert crawler.returncode == 1
    assert stderr.splitlines()[-1].startswith(
        "Error: run failed (outage, crawl phase): no answer from http://localhost:")
    assert "(NITPICKER_OUTAGE_GIVE_UP 1.5 s); it started with Connection" in stderr
    recorded = statuses(out)
    assert -1 not in recorded and 20 <= recorded[200] < WIDE_PAGES  # those before the dark
    [run] = query(out, "runs")["items"]
    assert (run["status"], run["error_code"]) == ("failed", "outage")
    [outage] = query(out, "outages")["items"]
    assert outage["outcome"] == "gave_up" and outage["requeued"] >= 1
    assert f"URL(s) fetched again, {outage['requeued']} left for --resume" in stderr
    dark_site.start()
    resumed = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "crawl", "--resume", str(out), "--silent"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert statuses(out) == {200: WIDE_PAGES}


def test_with_detection_off_the_dark_pages_are_fetch_errors(
        tmp_path: Path, dark_site: FixtureSite) -> None:
    out = tmp_path / "off.nitpicker"
    crawler = crawl(dark_site, out, "--retry", "0", env={"NITPICKER_OUTAGE_ENABLED": "false"})
    go_dark(dark_site, 30, crawler)
    time.sleep(1.5)
    dark_site.start()
    _, stderr = crawler.communicate(timeout=120)
    assert crawler.returncode == 1, stderr
    assert statuses(out).get(-1, 0) >= 1
    assert query(out, "outages")["total"] == 0


def test_a_url_that_resets_on_a_live_site_is_a_fetch_error_not_an_outage(
        tmp_path: Path, site: FixtureSite) -> None:
    out = tmp_path / "flaky.nitpicker"
    result = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/flaky/"), "-o", str(out),
         "--no-render", "--retry", "1", "--silent"],
        env={**os.environ, "PYTHONPATH": str(REPO), **FAST}, capture_output=True, text=True,
        timeout=120, check=False)
    assert result.returncode == 1, result.stderr
    with sqlite3.connect(out) as conn:
        (status, text), = conn.execute("SELECT status, status_text FROM pages WHERE url = ?",
                                       (site.url("/flaky/reset"),))
    assert (status, text.split(":")[0]) == (-1, "Connection reset")
    assert query(out, "outages")["total"] == 0


def test_a_site_unreachable_from_the_start_fails_at_once(tmp_path: Path) -> None:
    with FixtureSite() as gone:
        url = gone.url("/")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "crawl", url, "-o", str(tmp_path / "none"),
         "--no-render", "--retry", "0", "--silent"],
        env={**os.environ, "PYTHONPATH": str(REPO), **FAST}, capture_output=True, text=True,
        timeout=120, check=False)
    assert time.monotonic() - started < 60
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith("Error: run failed (network, crawl phase)")


def test_a_bad_setting_in_the_environment_is_one_line_and_writes_nothing(
        tmp_path: Path, site: FixtureSite) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/"), "-o",
         str(tmp_path / "bad"), "--no-render"],
        env={**os.environ, "PYTHONPATH": str(REPO), "NITPICKER_OUTAGE_GIVE_UP": "soon"},
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: NITPICKER_OUTAGE_GIVE_UP must be a number of seconds, got 'soon'")
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_workers_pause_and_fetch_again_each_by_itself(
        tmp_path: Path, dark_site: FixtureSite) -> None:
    out = tmp_path / "workers.nitpicker"
    crawler = crawl(dark_site, out, "--workers", "2")
    go_dark(dark_site, 30, crawler)
    time.sleep(1.5)
    dark_site.start()
    _, stderr = crawler.communicate(timeout=180)
    assert crawler.returncode == 0, stderr
    assert statuses(out) == {200: WIDE_PAGES}
    outages = query(out, "outages")["items"]
    assert 1 <= len(outages) <= 2
    assert {outage["outcome"] for outage in outages} == {"resumed"}
    assert {outage["worker"] for outage in outages} <= {0, 1}
    assert {outage["run_id"] for outage in outages} == {1}
