"""Stopping a crawl with SIGINT/SIGTERM (``nitpicker.middlewares.stop``), as a user does it.

Each test runs ``nitpicker crawl`` (or ``scrapy crawl site``) in a process of its own against a
fixture server on 127.0.0.1, signals it, and checks from the server's request log that nothing
was fetched after the signal but the downloads in flight, that the process ended well within
the bound (``STOP_BOUND``, far below what the old behaviour took: a whole ``--interval`` or
``Retry-After`` per queued request, the whole download timeout in a tarpit), and that the
archive closed resumable: no lock, no WAL, the run ``stopped`` / ``killed``, the unfetched
rows pending, and ``--resume`` fetches exactly the remaining pages.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from fixtures.hostile import HostileSite
from fixtures.site import WIDE_MAX, FixtureSite
from fixtures.throttle_site import Route, ThrottleSite
from nitpicker.default_settings import defaults
from nitpicker.middlewares.stop import GracefulStop, StopSettings
from nitpicker.render.chromium import find_chromium
from tests.components import open_session, unit_crawler

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
SCRAPY = Path(sys.executable).parent / "scrapy"
STOP_BOUND = 20.0
"""Seconds a signalled crawl may take to end (the grace is 3 s; the old code took 27-600 s)."""
START_BOUND = 60.0


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT"):
        env.pop(name, None)
    return env


class Crawl:
    """A crawl process; its stderr goes to a file (Scrapy's log would fill a pipe)."""

    def __init__(self, args: list[str], cwd: Path, log: Path) -> None:
        self.log = log
        with log.open("w") as stderr:
            self.proc = subprocess.Popen(args, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL,
                                         stderr=stderr, text=True)

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait_until(self, ready: Callable[[], bool]) -> None:
        end = time.monotonic() + START_BOUND
        while not ready():
            if self.proc.poll() is not None:
                pytest.fail(f"the crawl ended before the signal:\n{self.stderr()}")
            if time.monotonic() > end:
                self.proc.kill()
                pytest.fail("the crawl did not get there")
            time.sleep(0.02)

    def ends_within(self, bound: float = STOP_BOUND) -> None:
        """Fails (and kills the process) if it is still running ``bound`` seconds from now."""
        try:
            self.proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"still running {bound:.0f} s after the signal")

    def finishes(self) -> None:
        assert self.proc.wait(timeout=120) == 0, self.stderr()


def nitpicker_crawl(*args: str, cwd: Path, log: str = "crawl.log") -> Crawl:
    return Crawl([sys.executable, "-m", "nitpicker.cli", "crawl", *args, "--silent"],
                 cwd, cwd / log)


def scrapy_crawl(*args: str, log: Path) -> Crawl:
    return Crawl([str(SCRAPY), "crawl", "site", *args], ROOT, log)


def read(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        return conn.execute(sql, params).fetchall()


def assert_closed_resumable(path: Path) -> None:
    """The archive was closed by the stopped run: one file, its run ``stopped`` / ``killed``."""
    assert not Path(f"{path}.lock").exists()
    assert not Path(f"{path}-wal").exists()
    assert read(path, "PRAGMA integrity_check") == [("ok",)]
    status, reason, code = read(path, "SELECT status, stop_reason, error_code FROM runs")[-1]
    assert (status, reason, code) == ("stopped", "shutdown", "killed")
    assert read(path, "SELECT count(*) FROM frontier WHERE state = 1") == [(0,)]  # no lease left


def recorded_urls(path: Path) -> list[str]:
    return [str(url) for (url,) in read(path, "SELECT url FROM pages WHERE status IS NOT NULL")]


def pending_urls(path: Path) -> set[str]:
    return {str(url) for (url,) in read(path, "SELECT url FROM frontier WHERE state = 0")}


def wide_gets(site: FixtureSite) -> list[str]:
    return [target for method, _, target in site.request_log
            if method == "GET" and target.startswith("/wide/")]


@pytest.mark.parametrize(
    ("sig", "interval", "entry"),
    [(signal.SIGINT, 1000, "nitpicker"), (signal.SIGTERM, 60000, "scrapy")],
    ids=["sigint-interval-1s", "sigterm-interval-60s-scrapy-crawl"],
)
def test_stop_with_an_interval_starts_no_queued_request_and_resume_completes(
    tmp_path: Path, sig: signal.Signals, interval: int, entry: str
) -> None:
    """``-I``: up to ``--parallels`` requests wait in the downloader's slot, one starting per
    interval; they used to be fetched after the signal (-I 1000: 10 more pages; -I 60000: one
    a minute). Now they go back to the frontier and ``--resume`` fetches them."""
    archive = tmp_path / "stopped.nitpicker"
    with FixtureSite() as site:
        if entry == "scrapy":
            crawl = scrapy_crawl("-a", f"roots={site.url('/wide/')}", "-a", f"output={archive}",
                                 "-a", "render=false", "-a", f"interval={interval}",
                                 "-a", "predict_pagination=false",  # the order is checked
                                 log=tmp_path / "scrapy.log")
            # robots.txt is the first request; the root and /sitemap.xml then wait a minute.
            crawl.wait_until(lambda: len(site.request_log) >= 1)
            time.sleep(1.0)
        else:
            crawl = nitpicker_crawl(site.url("/wide/"), "-o", str(archive), "--no-render",
                                    "-I", str(interval), "-P", "10",
                                    "--no-predict-pagination", cwd=tmp_path)
            crawl.wait_until(lambda: len(wide_gets(site)) >= 4)  # /wide/ and three pages
        before = len(site.request_log)
        crawl.signal(sig)
        crawl.ends_within()
        after_signal = site.request_log[before:]
        assert len(after_signal) <= 1, f"fetched after the signal: {after_signal}"
        assert_closed_resumable(archive)
        stopped_with = set(recorded_urls(archive))
        assert pending_urls(archive)  # the dropped requests' rows, among others

        site.clear_log()
        nitpicker_crawl("--resume", str(archive), "-I", "0", "-P", "4", cwd=tmp_path,
                        log="resume.log").finishes()
        resumed_gets = wide_gets(site)

    expected = {site.url("/wide/")} | {site.url(f"/wide/p/{n}") for n in range(1, WIDE_MAX + 1)}
    urls = recorded_urls(archive)
    assert len(urls) == len(set(urls)), "a URL recorded twice"
    assert set(urls) == expected
    assert read(archive, "SELECT count(*) FROM frontier WHERE state < 2") == [(0,)]
    # the resumed run fetched exactly the pages the stopped one had not recorded, each once
    assert sorted(resumed_gets) == sorted(site_path(u) for u in expected - stopped_with)
    assert [kind for (kind,) in read(archive, "SELECT kind FROM runs ORDER BY id")] == [
        "crawl", "resume"]


def site_path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_stop_while_a_request_is_held_for_retry_resumes_it(tmp_path: Path) -> None:
    """``--retry 1000000`` against a route that always answers 503 with ``Retry-After: 60``:
    the retry and the requests queued behind it wait for the host; a stop used to wait with
    them (about a minute). Now none of them is fetched after the signal, and the retried URL
    is pending, not recorded."""
    routes = {"/busy": Route(statuses=(503,), retry_after="60")}
    routes.update({f"/ok/{n}": Route() for n in range(1, 6)})
    archive = tmp_path / "retried.nitpicker"
    with ThrottleSite(routes) as site:
        crawl = nitpicker_crawl(site.url("/"), "-o", str(archive), "--no-render", "--retry",
                                "1000000", "-P", "2", "--no-predict-pagination", cwd=tmp_path)
        crawl.wait_until(lambda: any(hit.path == "/busy" for hit in site.hits))
        time.sleep(1.0)  # the retry and the other pages are now queued behind the hold
        before = len(site.hits)
        crawl.signal(signal.SIGINT)
        crawl.ends_within()
        assert [hit.path for hit in site.hits[before:]] == []
        assert_closed_resumable(archive)
        assert site.url("/busy") in pending_urls(archive)
        assert site.url("/busy") not in recorded_urls(archive)
        stopped_with = set(recorded_urls(archive))

        site.set_route("/busy", Route())  # the host recovered
        after_stop = len(site.hits)
        nitpicker_crawl("--resume", str(archive), "-P", "2", cwd=tmp_path,
                        log="resume.log").finishes()
        resumed = [hit.path for hit in site.hits[after_stop:] if hit.path != "/robots.txt"]

    expected = {site.url(path) for path in ("/", "/busy", *(f"/ok/{n}" for n in range(1, 6)))}
    urls = recorded_urls(archive)
    assert len(urls) == len(set(urls)), "a URL recorded twice"
    assert set(urls) == expected
    assert sorted(resumed) == sorted(site_path(u) for u in expected - stopped_with)
    assert read(archive, "SELECT status FROM pages WHERE url = ?", site.url("/busy")) == [(200,)]


def test_ctrl_c_in_a_tarpit_waits_only_the_grace(tmp_path: Path) -> None:
    """A server that accepts the request and never answers: the stop waited the whole download
    timeout (about 27 s). Now the download is cancelled after the grace and left pending (not
    recorded as a timeout)."""
    archive = tmp_path / "tarpit.nitpicker"
    with HostileSite() as site:
        crawl = nitpicker_crawl(site.url("/tarpit"), "-o", str(archive), "--no-render",
                                "--no-sitemap", cwd=tmp_path)
        crawl.wait_until(lambda: site.hits("/tarpit") >= 1)
        time.sleep(0.3)
        crawl.signal(signal.SIGINT)
        crawl.ends_within()
        assert site.hits("/tarpit") == 1
    assert_closed_resumable(archive)
    assert recorded_urls(archive) == []
    assert pending_urls(archive) == {site.url("/tarpit")}


@pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed")
def test_ctrl_c_cancels_browser_downloads_and_frees_their_pages(tmp_path: Path) -> None:
    """Six pages whose body trickles forever, rendered by four pooled browser pages: four
    navigations hang, two requests wait for a page. After the grace the four are cancelled and
    their pages go back to the pool; the two waiting requests then start nothing."""
    archive = tmp_path / "drip.nitpicker"
    with HostileSite() as site:
        roots = [site.url(f"/drip?n={n}") for n in range(1, 7)]
        crawl = nitpicker_crawl(*roots, "-o", str(archive), "-P", "6", "--no-sitemap",
                                cwd=tmp_path)
        # six HTTP preflights (stopped after the headers), then four browser navigations
        crawl.wait_until(lambda: site.hits("/drip") >= 10)
        time.sleep(0.5)
        crawl.signal(signal.SIGINT)
        crawl.ends_within()
        assert site.hits("/drip") == 10
    assert_closed_resumable(archive)
    assert recorded_urls(archive) == []
    assert pending_urls(archive) == set(roots)


def test_second_signal_stops_at_once_and_still_closes_the_archive(tmp_path: Path) -> None:
    """``scrapy crawl site`` with a 60 s grace, stuck in a tarpit: the first Ctrl-C would wait;
    the second ends the process at once, and the archive is still closed (the run ``stopped``,
    no lock left), not left as a crash."""
    archive = tmp_path / "twice.nitpicker"
    with HostileSite() as site:
        crawl = scrapy_crawl("-a", f"roots={site.url('/tarpit')}", "-a", f"output={archive}",
                             "-a", "render=false", "-a", "sitemap=false",
                             "-s", "NITPICKER_STOP_GRACE=60", log=tmp_path / "scrapy.log")
        crawl.wait_until(lambda: site.hits("/tarpit") >= 1)
        time.sleep(0.3)
        crawl.signal(signal.SIGINT)
        time.sleep(1.0)
        assert crawl.running()  # in its grace
        crawl.signal(signal.SIGINT)
        crawl.ends_within(bound=10)
    assert_closed_resumable(archive)
    assert pending_urls(archive) == {site.url("/tarpit")}


@pytest.mark.parametrize("grace", ["-1", "nan", "inf"])
def test_grace_setting_must_be_a_finite_number_of_seconds(grace: str) -> None:
    with pytest.raises(ValueError, match=f"NITPICKER_STOP_GRACE must be 0 or more seconds, got {grace}"):
        StopSettings.from_settings(Settings({"NITPICKER_STOP_GRACE": grace}))


def test_grace_setting_defaults_to_three_seconds() -> None:
    assert StopSettings.from_settings(Settings(defaults())).grace == 3.0  # the add-on's
    assert StopSettings.from_settings(Settings({"NITPICKER_STOP_GRACE": "0"})).grace == 0.0


def test_a_second_signal_closes_the_crawl_sessions_archive(tmp_path: Path) -> None:
    """The reactor stops before the spider closed: the stop closes the archive on its way out
    (unit: a real crawl session, no engine)."""
    crawler = unit_crawler(tmp_path)
    stop = GracefulStop.from_crawler(crawler)
    session = open_session(crawler)
    assert stop.session is session
    stop.reactor_stopping()
    assert session.writer is None and session.closed_reason == "shutdown"
    assert not Path(f"{session.config.output}.lock").exists()


def test_the_stop_holds_for_a_spider_without_a_crawl_session() -> None:
    stop = GracefulStop.from_crawler(get_crawler(settings_dict=defaults()))
    assert stop.session is None
    stop.reactor_stopping()  # nothing to close
# -- the --max-duration deadline ------------------------------------------------------------------

DEADLINE_BOUND = 25.0
"""Seconds a crawl with a deadline of a few seconds may take in all, start-up included (the old
code: one ``--interval`` per queued request past the deadline, minutes with ``-I 60000``)."""
LATE = 1.0
"""Seconds past the deadline after which a request reaching the server was started after it."""


class TimedSite(FixtureSite):
    """The fixture site, with each request's arrival time (``time.monotonic()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[tuple[float, str]] = []

    def _log(self, method: str, host: str, target: str,
             language: str | None = None, agent: str | None = None) -> None:
        super()._log(method, host, target, language, agent)
        self.arrivals.append((time.monotonic(), target))


@pytest.mark.parametrize(
    ("interval", "deadline"), [(60000, 2.0), (1000, 4.5)], ids=["interval-60s", "interval-1s"]
)
def test_max_duration_starts_no_queued_request_after_the_deadline(
    tmp_path: Path, interval: int, deadline: float
) -> None:
    """``--max-duration`` halted the frontier, but the requests queued in the downloader's slot
    still started one per interval (``-I 60000``: minutes past the deadline; ``-I 1000``: ten
    more pages: at 4.5 s, /wide/ is fetched and its 120 links fill the slot). Now the deadline
    stops like a signal: nothing starts after it, the queued requests go back to the frontier
    and ``--resume`` fetches exactly the pages left."""
    archive = tmp_path / "deadline.nitpicker"
    with TimedSite() as site:
        crawl = nitpicker_crawl(site.url("/wide/"), "-o", str(archive), "--no-render",
                                "--max-duration", str(deadline), "-I", str(interval),
                                "-P", "10", "--no-predict-pagination", cwd=tmp_path)
        crawl.ends_within(DEADLINE_BOUND)
        assert crawl.proc.returncode == 0, crawl.stderr()
        # The deadline is set when the spider opens, before its first request (robots.txt).
        first = site.arrivals[0][0]
        late = [target for at, target in site.arrivals if at > first + deadline + LATE]
        assert late == [], f"fetched after the deadline: {late}"
        assert not Path(f"{archive}.lock").exists()
        assert not Path(f"{archive}-wal").exists()
        status, code = read(archive, "SELECT status, error_code FROM runs")[-1]
        assert (status, code) == ("stopped", "deadline")
        assert read(archive, "SELECT count(*) FROM frontier WHERE state = 1") == [(0,)]
        stopped_with = set(recorded_urls(archive))

        site.clear_log()
        nitpicker_crawl("--resume", str(archive), "-I", "0", "-P", "4", cwd=tmp_path,
                        log="resume.log").finishes()
        resumed_gets = wide_gets(site)

    expected = {site.url("/wide/")} | {site.url(f"/wide/p/{n}") for n in range(1, WIDE_MAX + 1)}
    urls = recorded_urls(archive)
    assert len(urls) == len(set(urls)), "a URL recorded twice"
    assert set(urls) == expected
    assert sorted(resumed_gets) == sorted(site_path(u) for u in expected - stopped_with)


def test_max_pages_lets_the_queued_requests_finish(tmp_path: Path) -> None:
    """``--max-pages`` is no stop: the requests queued in the downloader when the budget is
    spent were leased within it, and they are fetched and recorded, one per interval."""
    archive = tmp_path / "budget.nitpicker"
    with FixtureSite() as site:
        nitpicker_crawl(site.url("/wide/"), "-o", str(archive), "--no-render",
                        "--max-pages", "6", "-I", "300", "-P", "10", cwd=tmp_path).finishes()
    assert len(recorded_urls(archive)) == 6
    status, code = read(archive, "SELECT status, error_code FROM runs")[-1]
    assert (status, code) == ("stopped", "page_limit")


# -- Ctrl-C during start-up -----------------------------------------------------------------------

START_DELAYS = (0.3, 0.8, 1.5, 2.5, 4.0, 6.0)
"""Seconds after the spawn at which Ctrl-C comes: the first ones land while the modules import
(the start-up takes seconds), the later ones while Scrapy sets up or the crawl runs."""


@pytest.mark.slow
def test_ctrl_c_during_start_up_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """Ctrl-C before the crawl ran printed a ``KeyboardInterrupt`` traceback (or
    ``Error: KeyboardInterrupt``, or nothing at all with exit 130 or -2). Now it is one line and
    exit 130 with nothing written; once the crawl runs, it is a stopped, resumable crawl."""
    outcomes: list[str] = []
    with FixtureSite() as site:
        for n, delay in enumerate(START_DELAYS):
            archive = tmp_path / f"early{n}.nitpicker"
            crawl = nitpicker_crawl(site.url("/wide/"), "-o", str(archive), "--no-render",
                                    "-I", "500", "-P", "2", cwd=tmp_path, log=f"early{n}.log")
            time.sleep(delay)
            crawl.signal(signal.SIGINT)
            crawl.ends_within()
            stderr = crawl.stderr()
            assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
            if crawl.proc.returncode == 130:
                assert stderr == "Interrupted: nothing was written\n"
                assert not archive.exists()
                assert not Path(f"{archive}.lock").exists()
                outcomes.append("interrupted")
            else:  # the crawl had started: a stopped crawl, its archive closed resumable
                assert crawl.proc.returncode == 0, stderr
                assert_closed_resumable(archive)
                outcomes.append("stopped")
    assert outcomes[0] == "interrupted", outcomes  # 0.3 s: still importing
