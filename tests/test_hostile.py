"""Hostile sites: every trap is bounded in time and memory, and every trapped URL has a row
with the reason it failed (``fixtures/hostile.py``).

The crawls run in-process with ``render=False``. Tests that lower a Scrapy setting to stay
fast (``DOWNLOAD_TIMEOUT``) have a twin that runs with nitpicker's real defaults
(``nitpicker.addon.Addon``): Scrapy's own defaults (1 GiB max size, 180 s timeout) would not
bound these crawls. Known defects in how nitpicker records a hostile case are strict xfails,
each naming the defect.
"""

from __future__ import annotations

import itertools
import resource
import socket
import struct
import time
import zlib
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from fixtures.hostile import (
    CHARSET_TITLES,
    DROPPED_SENT,
    GZIP_BOMB_SIZE,
    HOSTILE_ROUTES,
    MALFORMED_TITLE,
    OK_PAGES,
    RATE_LIMIT_REFUSALS,
    HostileSite,
    gzip_bomb,
)
from nitpicker.crawl.config import CrawlConfig
from tests.helpers import Archive, crawl, run

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from sqlite3 import Row


MiB = 1024 * 1024
DEFAULT_MAXSIZE = 32 * MiB  # nitpicker.addon: DOWNLOAD_MAXSIZE
DEFAULT_TIMEOUT = 30  # nitpicker.addon: DOWNLOAD_TIMEOUT
DEFAULT_REDIRECTS = 10  # nitpicker.addon: REDIRECT_MAX_TIMES
DEFAULT_RETRY: int = CrawlConfig.__dataclass_fields__["retry"].default  # --retry (3)
MAX_PAGES = 60
RSS_BOUND_MB = 300

# Routes whose URL never yields a page: each must have a row that says why.
FAILING = ("/tarpit", "/drip", "/loop/a", "/huge", "/huge-unsized", "/gzip-bomb", "/dropped")


@pytest.fixture
def hostile() -> Iterator[HostileSite]:
    with HostileSite() as site:
        yield site


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def _timed_crawl(
    roots: list[str], tmp_path: Path, **kwargs: Any
) -> tuple[Archive, float, float]:
    """Crawl; return the archive, the wall time (s) and the growth of the peak RSS (MB)."""
    rss_before = _maxrss_mb()
    started = time.monotonic()
    archive = await crawl(tmp_path, roots, **kwargs)
    elapsed = time.monotonic() - started
    print(f"crawl of {roots} took {elapsed:.1f} s, peak RSS +{_maxrss_mb() - rss_before:.0f} MB")
    return archive, elapsed, _maxrss_mb() - rss_before


def _row(archive: Archive, site: HostileSite, path: str) -> Row:
    row = archive.page(site.url(path))
    assert row is not None, f"{path}: no row at all"
    return row


def _reason(row: Row) -> str:
    """Why a URL yielded no page: the fetch error or the skip reason."""
    return (row["status_text"] or "") + (row["skip_reason"] or "")


def _assert_failed_with_reason(archive: Archive, site: HostileSite, path: str,
                               *words: str) -> Row:
    row = _row(archive, site, path)
    assert row["scraped"] == 1, f"{path}: row never filled in: {dict(row)}"
    assert row["is_target"] == 0, f"{path}: counted as a page: {dict(row)}"
    reason = _reason(row)
    assert reason.strip(), f"{path}: no recorded reason: {dict(row)}"
    for word in words:
        assert word.lower() in reason.lower(), f"{path}: {word!r} not in {reason!r}"
    return row


def _assert_normal_pages(archive: Archive, site: HostileSite) -> None:
    assert _row(archive, site, "/")["title"] == "Hostile Site"
    for n in range(1, OK_PAGES + 1):
        row = _row(archive, site, f"/ok/{n}")
        assert (row["status"], row["title"], row["is_target"]) == (200, f"OK {n}", 1)


def _assert_content_pages(archive: Archive, site: HostileSite) -> None:
    malformed = _row(archive, site, "/malformed")
    assert (malformed["status"], malformed["title"], malformed["is_target"]) == (
        200, MALFORMED_TITLE, 1,
    )
    assert archive.anchors_of(site.url("/malformed")) == [site.url("/ok/1"), site.url("/ok/2")]
    assert archive.rows(
        "SELECT 1 FROM snapshots s JOIN pages p ON p.id = s.page_id WHERE p.url = ?",
        site.url("/malformed"),
    ), "no snapshot of the malformed page"
    for path, title in CHARSET_TITLES.items():
        row = _row(archive, site, path)
        assert (row["status"], row["title"]) == (200, title), path


# --------------------------------------------------------------------------------------------
# The fixture itself
# --------------------------------------------------------------------------------------------


def test_fixture_bomb_is_small_and_inflates_to_a_gibibyte() -> None:
    bomb = gzip_bomb()
    assert len(bomb) < 2 * MiB
    assert struct.unpack("<I", bomb[-4:])[0] == GZIP_BOMB_SIZE  # ISIZE: 1 GiB
    inflater = zlib.decompressobj(31)
    head = inflater.decompress(bomb, 64 * MiB)
    assert head == bytes(64 * MiB) and not inflater.eof  # 64 MiB in, still going


def test_fixture_stops_promptly_with_clients_stuck_in_traps() -> None:
    site = HostileSite().start()
    clients = []
    for path in ("/tarpit", "/drip", "/huge"):
        client = socket.create_connection(("127.0.0.1", site.port))
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        clients.append(client)
    time.sleep(0.5)
    started = time.monotonic()
    site.stop()
    assert time.monotonic() - started < 3
    for client in clients:
        client.close()
    assert site.hits("/tarpit") == site.hits("/drip") == site.hits("/huge") == 1
    assert site.bytes_sent["/drip"] <= 2


# --------------------------------------------------------------------------------------------
# The whole hostile site
# --------------------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_hostile_site_is_crawled_in_bounded_time_with_every_trap_recorded(
    hostile: HostileSite, tmp_path: Path
) -> None:
    """Every route at once. DOWNLOAD_TIMEOUT is lowered to 5 s to keep this fast; the 30 s
    default is exercised by test_default_timeout_bounds_tarpit_and_drip."""
    # Without predictive pagination: its predicted /ok/3… and months past December would be
    # fetched misses, spending the --max-pages budget this test counts.
    archive, elapsed, rss_growth = await _timed_crawl(
        [hostile.url("/")], tmp_path, max_pages=MAX_PAGES, settings={"DOWNLOAD_TIMEOUT": 5},
        predict_pagination=False,
    )
    assert elapsed < 90

    # The normal pages all made it, whatever the traps did.
    _assert_normal_pages(archive, hostile)
    _assert_content_pages(archive, hostile)

    # Every hostile URL has a row, filled in, with the reason.
    for path in HOSTILE_ROUTES:
        assert _row(archive, hostile, path)["scraped"] == 1, path
    for path in ("/tarpit", "/drip"):
        row = _assert_failed_with_reason(archive, hostile, path, "Timeout", "5.0 seconds")
        assert row["status"] == -1
    row = _assert_failed_with_reason(archive, hostile, "/huge", "max size")
    assert row["status"] == -1
    row = _assert_failed_with_reason(archive, hostile, "/huge-unsized")
    assert row["status"] == -1
    _assert_failed_with_reason(archive, hostile, "/gzip-bomb", "DOWNLOAD_MAXSIZE")
    row = _assert_failed_with_reason(archive, hostile, "/dropped", "Connection reset")
    assert row["status"] == -1
    _assert_failed_with_reason(archive, hostile, "/loop/a", "redirect")
    # --retry 0 here: the 429 is the recorded answer.
    rate = _row(archive, hostile, "/rate-limited")
    assert (rate["status"], rate["status_text"]) == (429, "Too Many Requests")

    # The endless calendar is cut by --max-pages; the run says so and can be resumed.
    run = archive.rows("SELECT * FROM runs")[-1]
    assert (run["status"], run["stop_reason"]) == ("stopped", "max_pages")
    assert run["pages_done"] == MAX_PAGES
    fetched = archive.urls("scraped = 1 AND redirect_dest_id IS NULL")  # hops aside
    assert len(fetched) <= MAX_PAGES
    calendar = archive.urls("url LIKE ? AND scraped = 1", hostile.url("/calendar/%"))
    assert len(calendar) > 20
    assert archive.rows("SELECT count(*) AS n FROM frontier WHERE state = 0")[0]["n"] > 0

    # Bytes read from the bodies that never end are bounded.
    assert hostile.bytes_sent.get("/huge", 0) < 8 * MiB
    assert hostile.bytes_sent.get("/huge-unsized", 0) < DEFAULT_MAXSIZE + 8 * MiB
    assert hostile.bytes_sent.get("/drip", 0) < 5 + 3
    assert rss_growth < RSS_BOUND_MB


@pytest_twisted.ensureDeferred
async def test_defaults_bound_huge_bodies_bombs_drops_and_redirect_loops(
    hostile: HostileSite, tmp_path: Path
) -> None:
    """No Scrapy setting overridden, and the CLI's default --retry: nitpicker's own defaults
    (32 MiB max size, 10 redirects) are what bound these traps. Tarpit and drip are excluded
    here (their 30 s default timeout is the next test); the calendar is cut by --max-pages."""
    archive, elapsed, rss_growth = await _timed_crawl(
        [hostile.url("/")], tmp_path, retry=DEFAULT_RETRY, max_pages=MAX_PAGES,
        excludes=("/tarpit", "/drip"), predict_pagination=False,  # as above: hits are counted
    )
    assert elapsed < 60
    _assert_normal_pages(archive, hostile)
    _assert_content_pages(archive, hostile)
    for path in ("/tarpit", "/drip"):
        assert _row(archive, hostile, path)["skip_reason"] == "excluded"

    # 1 GiB announced: refused at the headers, by the 32 MiB default.
    row = _assert_failed_with_reason(archive, hostile, "/huge", "max size", str(DEFAULT_MAXSIZE))
    assert row["status"] == -1
    assert hostile.hits("/huge") == 1  # not retried
    assert hostile.bytes_sent.get("/huge", 0) < 8 * MiB
    # 1 GiB not announced: cut once 32 MiB were read.
    row = _assert_failed_with_reason(archive, hostile, "/huge-unsized")
    assert row["status"] == -1
    assert hostile.bytes_sent.get("/huge-unsized", 0) < DEFAULT_MAXSIZE + 8 * MiB
    # The bomb inflates to 1 GiB: decompression stops at 32 MiB.
    _assert_failed_with_reason(archive, hostile, "/gzip-bomb", str(DEFAULT_MAXSIZE))
    assert hostile.hits("/gzip-bomb") == 1
    # A truncated body is a connection reset, retried --retry times.
    row = _assert_failed_with_reason(archive, hostile, "/dropped", "Connection reset")
    assert row["status"] == -1
    assert hostile.hits("/dropped") == DEFAULT_RETRY + 1
    assert hostile.bytes_sent["/dropped"] == DROPPED_SENT * (DEFAULT_RETRY + 1)
    # The loop is followed REDIRECT_MAX_TIMES times, then given up with a reason.
    _assert_failed_with_reason(archive, hostile, "/loop/a", "redirect")
    assert hostile.hits("/loop/a") + hostile.hits("/loop/b") == DEFAULT_REDIRECTS + 1
    # 429 is retried (--retry 3): the fourth answer is the 200 recorded.
    rate = _row(archive, hostile, "/rate-limited")
    assert (rate["status"], rate["title"]) == (200, "Rate Limited OK")
    # Four requests; five once in a while on a loaded machine: Twisted's connection pool
    # (Scrapy's, retryAutomatically) sends a GET again, once, when a kept-alive connection
    # fails before its answer, and the server counts both (one full make test in three saw it).
    assert hostile.hits("/rate-limited") in (RATE_LIMIT_REFUSALS + 1, RATE_LIMIT_REFUSALS + 2)

    run = archive.rows("SELECT * FROM runs")[-1]
    assert (run["status"], run["stop_reason"]) == ("stopped", "max_pages")
    assert rss_growth < RSS_BOUND_MB


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_default_timeout_bounds_tarpit_and_drip(hostile: HostileSite, tmp_path: Path) -> None:
    """The real DOWNLOAD_TIMEOUT (30 s) ends a silent connection and a 1-byte/s body alike:
    the timeout covers the whole download, not only the wait for the first byte."""
    archive, elapsed, _ = await _timed_crawl(
        [hostile.url("/tarpit"), hostile.url("/drip")], tmp_path
    )
    assert DEFAULT_TIMEOUT - 1 < elapsed < DEFAULT_TIMEOUT + 30
    for path in ("/tarpit", "/drip"):
        row = _assert_failed_with_reason(
            archive, hostile, path, "Timeout", f"took longer than {DEFAULT_TIMEOUT}.0 seconds"
        )
        assert row["status"] == -1
    assert hostile.bytes_sent["/drip"] <= DEFAULT_TIMEOUT + 2


@pytest_twisted.ensureDeferred
async def test_timeouts_are_retried_so_the_bound_is_timeout_times_tries(
    hostile: HostileSite, tmp_path: Path
) -> None:
    """A tarpit costs DOWNLOAD_TIMEOUT × (--retry + 1): 2 s × 4 here, 30 s × 4 = 2 min with
    the defaults."""
    archive, elapsed, _ = await _timed_crawl(
        [hostile.url("/tarpit")], tmp_path, retry=DEFAULT_RETRY, settings={"DOWNLOAD_TIMEOUT": 2}
    )
    tries = DEFAULT_RETRY + 1
    assert 2 * tries - 1 < elapsed < 2 * tries + 20
    assert hostile.hits("/tarpit") == tries
    row = _assert_failed_with_reason(archive, hostile, "/tarpit", "Timeout")
    assert row["status"] == -1


@pytest_twisted.ensureDeferred
async def test_endless_calendar_is_bounded_by_scope_and_by_max_pages(
    hostile: HostileSite, tmp_path: Path
) -> None:
    # A directory root is its own scope: the neighbouring months are out of it, checked
    # metadata-only, and their links are not followed.
    archive, elapsed, _ = await _timed_crawl([hostile.url("/calendar/2020/01/")], tmp_path)
    assert elapsed < 30
    assert archive.urls("is_target = 1") == {hostile.url("/calendar/2020/01/")}
    assert archive.urls("scraped = 1 AND is_target = 0") == {
        hostile.url("/calendar/2019/12/"), hostile.url("/calendar/2020/02/"),
    }
    assert archive.rows("SELECT * FROM runs")[-1]["status"] == "finished"

    # Rooted above the months, the calendar is endless in scope: --max-pages stops it,
    # with every other setting at its default.
    hostile.clear_log()
    archive, elapsed, _ = await _timed_crawl(
        [hostile.url("/calendar/")], tmp_path, retry=DEFAULT_RETRY, max_pages=25
    )
    assert elapsed < 30
    run = archive.rows("SELECT * FROM runs")[-1]
    assert (run["status"], run["stop_reason"]) == ("stopped", "max_pages")
    # 25 URLs fetched; those recorded are fewer by the predicted months that missed
    # (October and November predict /calendar/2020/12/ … /calendar/2020/21/: from 13 on, 404s
    # not recorded).
    fetched = [t for m, _, t in hostile.request_log if m == "GET" and t.startswith("/calendar/")]
    assert len(set(fetched)) == 25, " ".join(fetched)
    # --max-pages counts URLs: a predicted month that missed while a real link reached it is
    # fetched once more as a normal page (FrontierStore.drop_prediction), so a URL may be
    # fetched twice: such a month (13 and on: the ones that 404). A real month is fetched
    # twice only when its first try failed in transport: in about one run in six, one or two
    # kept-alive connections to this fixture server end under requests in flight
    # ("Connection was closed cleanly", seen with Twisted's own resend switched off) and the
    # request is sent again. Either way each URL is recorded once (below).
    twice = {t for t in fetched if fetched.count(t) > 1}
    resent = {t for t in twice if int(t.rstrip("/").rsplit("/", 1)[1]) <= 12}
    assert len(resent) <= 2, twice
    done = run["pages_done"]
    assert 10 < done <= 25
    assert {hostile.url(t) for t in fetched} >= archive.urls("scraped = 1")
    assert len(archive.urls("scraped = 1")) == done
    assert not archive.urls("status = 404")
    months = archive.urls("is_target = 1 AND url LIKE ?", hostile.url("/calendar/____/__/"))
    assert len(months) == done - 1  # and /calendar/ itself
    assert archive.rows("SELECT count(*) AS n FROM frontier WHERE state = 0")[0]["n"] > 0


@pytest_twisted.ensureDeferred
async def test_malformed_and_misdeclared_pages_are_read(
    hostile: HostileSite, tmp_path: Path
) -> None:
    roots = ["/malformed", "/latin1-declared", "/sjis-meta", "/undeclared-cp1252"]
    archive, _, _ = await _timed_crawl([hostile.url(p) for p in roots], tmp_path)
    _assert_content_pages(archive, hostile)
    for path in ("/ok/1", "/ok/2"):  # the two links of /malformed (out of its scope)
        assert _row(archive, hostile, path)["title"] == path.replace("/ok/", "OK ")


# --------------------------------------------------------------------------------------------
# Recorded right (these were defects once: the redirect chain's linked URL, loops, bombs,
# unsized bodies, Retry-After ignored)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "linked", "settings"),
    [
        ("/chain/", "/chain/0", {}),
        ("/loop/", "/loop/a", {"REDIRECT_MAX_TIMES": 9}),
    ],
    ids=["chain-longer-than-max", "loop-odd-max"],
)
@pytest_twisted.ensureDeferred
async def test_redirect_give_up_is_recorded_under_the_linked_url(
    hostile: HostileSite, tmp_path: Path, index: str, linked: str, settings: dict[str, Any]
) -> None:
    archive, _, _ = await _timed_crawl([hostile.url(index)], tmp_path, settings=settings)
    _assert_failed_with_reason(archive, hostile, linked, "redirect")
    # No hop is recorded as if it were the page that failed.
    scraped = archive.urls("scraped = 1 AND redirect_dest_id IS NULL")
    assert scraped == {hostile.url(index), hostile.url(linked)}


@pytest_twisted.ensureDeferred
async def test_redirect_loop_is_a_fetch_error(hostile: HostileSite, tmp_path: Path) -> None:
    archive, _, _ = await _timed_crawl([hostile.url("/loop/")], tmp_path)
    row = _assert_failed_with_reason(archive, hostile, "/loop/a", "redirect")
    assert (row["status"], row["is_skipped"]) == (-1, 0)
    assert archive.rows("SELECT * FROM runs")[-1]["errors"] == 1


@pytest_twisted.ensureDeferred
async def test_gzip_bomb_is_a_fetch_error_like_huge(hostile: HostileSite, tmp_path: Path) -> None:
    archive, _, _ = await _timed_crawl(
        [hostile.url("/gzip-bomb"), hostile.url("/huge")], tmp_path
    )
    huge = _assert_failed_with_reason(archive, hostile, "/huge", "max size")
    bomb = _assert_failed_with_reason(archive, hostile, "/gzip-bomb", "DOWNLOAD_MAXSIZE")
    assert (huge["status"], huge["is_skipped"]) == (-1, 0)
    assert (bomb["status"], bomb["is_skipped"]) == (-1, 0)
    assert archive.rows("SELECT * FROM runs")[-1]["errors"] == 2


@pytest_twisted.ensureDeferred
async def test_unsized_oversized_body_says_it_was_too_large(
    hostile: HostileSite, tmp_path: Path
) -> None:
    archive, _, _ = await _timed_crawl([hostile.url("/huge-unsized")], tmp_path)
    row = _assert_failed_with_reason(archive, hostile, "/huge-unsized")
    assert row["status"] == -1
    assert "max size" in row["status_text"].lower() or "too large" in row["status_text"].lower()
    assert str(DEFAULT_MAXSIZE) in row["status_text"]


def test_a_run_whose_every_url_is_too_large_fails_as_too_large(hostile: HostileSite,
                                                              tmp_path: Path) -> None:
    """A 1 GiB page, with and without Content-Length, is over the 32 MiB body limit: each is
    an error row saying so, and the run fails with too_large (it failed with network: the
    server answered)."""
    result = run("crawl", "--list", hostile.url("/huge"), "--list", hostile.url("/huge-unsized"),
                 "-o", "huge", "--retry", "0", cwd=tmp_path, timeout=180)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: run failed (too_large, crawl phase): all 2 URL(s) were larger than the download "
        "max size (DOWNLOAD_MAXSIZE)")
    archive = Archive(tmp_path / "huge.nitpicker")
    rows = {r["url"]: (r["status"], r["status_text"])
            for r in archive.rows("SELECT url, status, status_text FROM pages")}
    assert rows[hostile.url("/huge")] == (-1, ("Too large: 1073741824 bytes, more than the "
                                          f"download max size (DOWNLOAD_MAXSIZE, {DEFAULT_MAXSIZE} bytes)"))
    status, text = rows[hostile.url("/huge-unsized")]
    assert status == -1 and text.startswith("Too large: ") and str(DEFAULT_MAXSIZE) in text
    [run_row] = archive.rows("SELECT status, error_code, phase FROM runs")
    assert tuple(run_row) == ("failed", "too_large", "crawl")


@pytest_twisted.ensureDeferred
async def test_rate_limited_retries_wait_for_retry_after(
    hostile: HostileSite, tmp_path: Path
) -> None:
    archive, _, _ = await _timed_crawl(
        [hostile.url("/rate-limited")], tmp_path, retry=DEFAULT_RETRY
    )
    assert _row(archive, hostile, "/rate-limited")["status"] == 200
    times = [t for t, _, _ in hostile.rate_limit_log]
    assert len(times) == RATE_LIMIT_REFUSALS + 1
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.9, f"retries {gaps} s apart despite Retry-After: 1"
