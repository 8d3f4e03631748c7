"""``nitpicker crawl --workers N``: real worker processes on the fixture sites.

Each test runs the command in a subprocess, as a user does; the coordinator starts its
workers with the ``spawn`` start method. The archive a multi-process crawl leaves must be the
one a single process leaves: the same pages, links and redirects.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.site import FixtureSite
from fixtures.templated import TEMPLATES, TemplatedSite
from fixtures.throttle_site import Route, ThrottleSite
from fixtures.traps import TrapSite
from nitpicker.archive.template_store import record_templates
from nitpicker.policy.trapcap import OG_URL_ELSEWHERE, TrapCap, TrapSignals
from tests.helpers import count, recorded, rows, run

ROOT = Path(__file__).resolve().parent.parent
ROOTS = ("/wide/", "/redirect/", "/recursive/")


def start(*args: str, cwd: Path, lease: float | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
    if lease is not None:
        env["NITPICKER_LEASE_SECONDS"] = str(lease)
    extra = [] if "--resume" in args else ["--no-render"]
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", *args, "--silent", *extra],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> int:
    code = proc.wait(timeout=timeout)
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    return code


def worker_pids(parent: int) -> list[int]:
    """The crawler processes the coordinator ``parent`` started (not multiprocessing's helper)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and "spawn_main" in cmdline:
            pids.append(int(entry.name))
    return pids


def snapshot(path: Path) -> dict[str, object]:
    """The archive's pages, links and redirects, by URL (no ids, no times)."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        pages = {r[0]: r[1:] for r in conn.execute(
            "SELECT url, status, title, is_target, is_external, scraped, skip_reason,"
            " (SELECT count(*) FROM snapshots s WHERE s.page_id = p.id) FROM pages p")}
        links = collections.Counter(conn.execute(
            "SELECT p.url, h.url FROM anchors a JOIN pages p ON p.id = a.page_id"
            " JOIN pages h ON h.id = a.href_id"))
        redirects = set(conn.execute(
            "SELECT p.url, d.url, p.redirect_kind FROM pages p JOIN pages d"
            " ON d.id = p.redirect_dest_id"))
        return {"pages": pages, "links": links, "redirects": redirects}
    finally:
        conn.close()


def frontier_left(path: Path) -> dict[int, int]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT state, count(*) FROM frontier GROUP BY state"))
    finally:
        conn.close()


def page_gets(site: FixtureSite) -> collections.Counter[str]:
    return collections.Counter(
        p for m, _, p in site.request_log
        if m == "GET" and not p.startswith(("/robots.txt", "/sitemap"))
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One process crawling the site's wide, redirect and recursive sections."""
    tmp = tmp_path_factory.mktemp("reference")
    with FixtureSite(delay=0.005) as site:
        finish(start(*(site.url(r) for r in ROOTS), "-o", "one", "-P", "4", cwd=tmp))
        return {"snapshot": _portable(snapshot(tmp / "one.nitpicker"), site)}


def _portable(snap: dict[str, object], site: FixtureSite) -> dict[str, object]:
    """The snapshot with the site's origins taken out (each test serves it on its own port)."""
    port = str(site.url("/")).rsplit(":", 1)[1].split("/", 1)[0]

    def strip(value: object) -> object:
        if isinstance(value, str):
            return value.replace(f":{port}", ":PORT")
        if isinstance(value, tuple):
            return tuple(strip(v) for v in value)
        return value

    pages = snap["pages"]
    links = snap["links"]
    redirects = snap["redirects"]
    assert isinstance(pages, dict) and isinstance(links, collections.Counter)
    assert isinstance(redirects, set)
    return {
        "pages": {strip(k): strip(v) for k, v in pages.items()},
        "links": collections.Counter({strip(k): v for k, v in links.items()}),
        "redirects": {strip(r) for r in redirects},
    }


def test_two_workers_record_exactly_what_one_process_records(
    reference: dict[str, object], tmp_path: Path,
) -> None:
    with FixtureSite(delay=0.005) as site:
        finish(start(*(site.url(r) for r in ROOTS), "-o", "two", "-P", "4", "--workers", "2",
                     cwd=tmp_path))
        gets = page_gets(site)
        archive = tmp_path / "two.nitpicker"
        assert _portable(snapshot(archive), site) == reference["snapshot"]
    assert [path for path, n in gets.items() if n > 1] == []  # no URL fetched twice
    assert frontier_left(archive).keys() == {2}
    conn = sqlite3.connect(archive)
    owners = {r[0] for r in conn.execute("SELECT DISTINCT lease_owner FROM frontier")}
    runs = conn.execute("SELECT kind, status FROM runs").fetchall()
    conn.close()
    assert len(owners - {None}) == 2  # both workers leased rows
    assert runs == [("crawl", "finished")]
    assert not (tmp_path / "two.nitpicker.lock").exists()
    assert not (tmp_path / "two.nitpicker-wal").exists()


def test_kill_9_of_one_worker_the_others_finish_its_rows(
    reference: dict[str, object], tmp_path: Path,
) -> None:
    with FixtureSite(delay=0.05) as site:
        archive = tmp_path / "killed.nitpicker"
        proc = start(*(site.url(r) for r in ROOTS), "-o", "killed", "-P", "4",
                     "--workers", "2", cwd=tmp_path, lease=2)
        deadline = time.monotonic() + 120
        while recorded(archive) < 20 or len(worker_pids(proc.pid)) < 2:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        victim = worker_pids(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert proc.wait(timeout=240) == 0, proc.stderr.read() if proc.stderr else ""
        assert _portable(snapshot(archive), site) == reference["snapshot"]
    assert frontier_left(archive).keys() == {2}  # nothing pending or leased is left
    conn = sqlite3.connect(archive)
    assert conn.execute("SELECT status FROM runs").fetchall() == [("finished",)]


def start_and_wait_for_pages(site: FixtureSite, name: str, tmp_path: Path, *,
                             workers_up: int = 0) -> tuple[Path, subprocess.Popen[str]]:
    """A ``--workers 2`` crawl of ROOTS into ``<name>.nitpicker``, once it recorded 20 pages
    and ``workers_up`` workers run."""
    archive = tmp_path / f"{name}.nitpicker"
    proc = start(*(site.url(r) for r in ROOTS), "-o", name, "-P", "4", "--workers", "2",
                 cwd=tmp_path)
    deadline = time.monotonic() + 120
    while recorded(archive) < 20 or len(worker_pids(proc.pid)) < workers_up:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return archive, proc


def test_ctrl_c_stops_every_worker_cleanly_and_resume_finishes(
    reference: dict[str, object], tmp_path: Path,
) -> None:
    with FixtureSite(delay=0.05) as site:
        archive, proc = start_and_wait_for_pages(site, "stopped", tmp_path)
        workers = worker_pids(proc.pid)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
        assert not (tmp_path / "stopped.nitpicker.lock").exists()
        assert not (tmp_path / "stopped.nitpicker-wal").exists()
        left = frontier_left(archive)
        assert 1 not in left and left.get(0, 0) > 0  # no lease left behind; work left
        conn = sqlite3.connect(archive)
        assert conn.execute("SELECT status, stop_reason FROM runs").fetchall() == [
            ("stopped", "shutdown")]
        conn.close()
        finish(start("--resume", str(archive), "--workers", "2", cwd=tmp_path))
        assert _portable(snapshot(archive), site) == reference["snapshot"]


def test_kill_9_of_the_whole_crawl_then_resume_with_workers_records_each_page_once(
    reference: dict[str, object], tmp_path: Path,
) -> None:
    # The coordinator and both workers die at once, with page writes queued, grouped in an
    # open transaction or waiting for the write lock: what was committed stays, the rest is
    # fetched again by the resumed workers, and the archive is the one-process crawl's.
    with FixtureSite(delay=0.05) as site:
        archive, proc = start_and_wait_for_pages(site, "crashed", tmp_path, workers_up=2)
        workers = worker_pids(proc.pid)
        for pid in (*workers, proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert frontier_left(archive).get(1, 0) > 0  # rows were leased when it died
        finish(start("--resume", str(archive), "--workers", "2", cwd=tmp_path))
        assert _portable(snapshot(archive), site) == reference["snapshot"]
    assert frontier_left(archive).keys() == {2}
    conn = sqlite3.connect(archive)
    runs = conn.execute("SELECT kind, status, error_code FROM runs ORDER BY id").fetchall()
    conn.close()
    assert runs == [("crawl", "failed", "instance_lost"), ("resume", "finished", None)]


def test_every_worker_killed_fails_the_run_with_workers_lost_and_resume_finishes(
    reference: dict[str, object], tmp_path: Path,
) -> None:
    """kill -9 of every worker (the coordinator lives): the run is failed, code
    workers_lost, exit 1 with one Error: line; it was recorded as stopped/unknown, exit 0."""
    with FixtureSite(delay=0.05) as site:
        archive, proc = start_and_wait_for_pages(site, "orphaned", tmp_path, workers_up=2)
        for pid in worker_pids(proc.pid):
            os.kill(pid, signal.SIGKILL)
        assert proc.wait(timeout=120) == 1
        stderr = proc.stderr.read() if proc.stderr else ""
        assert stderr.splitlines()[-1].startswith(
            "Error: run failed (workers_lost, crawl phase): 2 of 2 worker process(es) died "
            "(worker 0: -9, worker 1: -9) with "), stderr
        conn = sqlite3.connect(archive)
        assert conn.execute("SELECT status, error_code, phase FROM runs").fetchall() == [
            ("failed", "workers_lost", "crawl")]
        conn.close()
        assert not (tmp_path / "orphaned.nitpicker.lock").exists()
        finish(start("--resume", str(archive), "--workers", "2", cwd=tmp_path))
        assert _portable(snapshot(archive), site) == reference["snapshot"]


def test_max_pages_is_one_budget_for_all_workers(tmp_path: Path) -> None:
    with FixtureSite(delay=0.01) as site:
        finish(start(site.url("/wide/"), "-o", "capped", "-P", "4", "--workers", "2",
                     "--max-pages", "30", "--no-predict-pagination", cwd=tmp_path))
        fetched = sum(page_gets(site).values())
    conn = sqlite3.connect(tmp_path / "capped.nitpicker")
    assert conn.execute("SELECT count(*) FROM pages WHERE status IS NOT NULL").fetchone()[0] == 30
    assert conn.execute("SELECT status, stop_reason FROM runs").fetchone() == (
        "stopped", "max_pages")
    assert fetched == 30


@pytest.mark.slow
def test_parallels_and_interval_hold_for_the_host_across_workers(tmp_path: Path) -> None:
    # More routes than one lease (32 rows), so that both workers fetch at once.
    routes = {f"/slow/{n}": Route(pause=0.2) for n in range(80)}
    with ThrottleSite(routes) as site:
        finish(start(site.url("/"), "-o", "polite", "-P", "2", "--workers", "2",
                     "--ignore-robots", "--no-predict-pagination", cwd=tmp_path))
        hits = list(site.hits)
    assert sorted(h.path for h in hits if h.path.startswith("/slow/")) == sorted(routes)
    assert max(h.in_flight for h in hits) <= 2  # 2 workers × 2 each would reach 4

    routes = {f"/paced/{n}": Route() for n in range(40)}
    with ThrottleSite(routes) as site:
        finish(start(site.url("/"), "-o", "paced", "-P", "4", "-I", "150", "--workers", "2",
                     "--ignore-robots", "--no-predict-pagination", cwd=tmp_path))
        paced = sorted(h.arrived for h in site.hits if h.path.startswith("/paced/"))
    assert len(paced) == len(routes)
    # One request every 150 ms on average for the host, not one per worker: 40 requests take
    # about 39 intervals (less one per worker for the workers' first requests).
    assert paced[-1] - paced[0] >= 0.15 * (len(paced) - 2) * 0.9


def test_a_trap_is_capped_once_whichever_worker_sees_it(tmp_path: Path) -> None:
    cap = 100
    threshold = TrapCap(cap).threshold(TrapSignals(trap=(OG_URL_ELSEWHERE,)))
    with TrapSite() as traps:
        finish(start(traps.url("/trap/"), "-o", "traps", "--workers", "2", "--dedupe-cap",
                     str(cap), "--max-pages", "3000", "--no-predict-pagination",
                     "--no-fetch-external", "--retry", "0", "--exclude", "/trap/query",
                     "--exclude", "/trap/session", "--exclude", "/trap/plain/**",
                     cwd=tmp_path))
        fetched = traps.fetched("/trap/date/")
    conn = sqlite3.connect(tmp_path / "traps.nitpicker")
    events = conn.execute("SELECT parent_path, count FROM trap_events").fetchall()
    status = conn.execute("SELECT status FROM runs").fetchone()[0]
    conn.close()
    # fired once, at the count of both workers: the page that reached the threshold, or (when
    # the other worker counted its page between that count and the firing) the one after it
    ((parent, count),) = events
    assert parent == "/trap/date"
    assert threshold <= count <= threshold + 1
    assert threshold <= len(fetched) <= 1 + 2 * (threshold - 1)
    assert status == "finished"


def test_bad_input_is_reported_once_before_any_worker_starts(tmp_path: Path) -> None:
    result = run("crawl", "http://127.0.0.1:9/", "-o", "zero", "--workers", "0", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == "Error: --workers must be at least 1, got 0"
    result = run("crawl", "ftp://example.com/", "-o", "bad", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.count("Error:") == 1 and "ftp://example.com/" in result.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_more_workers_than_cores_is_allowed_with_a_note(tmp_path: Path) -> None:
    workers = (os.cpu_count() or 1) + 1
    with FixtureSite() as site:
        result = run("crawl", site.url("/recursive/"), "-o", "many", "--workers", str(workers),
                     "-P", str(workers), cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert f"Note: --workers {workers} is more than this machine's" in result.stderr
    conn = sqlite3.connect(tmp_path / "many.nitpicker")
    status, done = conn.execute("SELECT status, pages_done FROM runs").fetchone()
    recorded_urls = conn.execute("SELECT count(*) FROM pages WHERE fetched_at IS NOT NULL"
                                 ).fetchone()[0]
    assert status == "finished"
    # One progress line for all the workers: the URLs every worker recorded, summed.
    line = re.findall(rf"(\d+)/(\d+) site (\d+)/(\d+) · external (\d+)/(\d+) · queued 0 · "
                      rf"errors \d+ · [\d.]+ URLs/s · {workers} workers", result.stderr)
    assert line and line[-1][:2] == (str(done), str(done))
    site_done, site_known, external_done, external_known = map(int, line[-1][2:])
    assert site_done == site_known and external_done == external_known
    assert site_done + external_done == done and external_done > 0
    assert done == recorded_urls > 1


def test_ctrl_c_while_the_workers_start_is_a_clean_stop(tmp_path: Path) -> None:
    # Each page answers slowly: on a loaded machine the workers may be seen spawned only after
    # they started crawling, and the crawl must still be running when Ctrl-C comes.
    with FixtureSite(delay=0.5) as site:
        archive = tmp_path / "early.nitpicker"
        proc = start(site.url("/wide/"), "-o", "early", "-P", "4", "--workers", "2",
                     cwd=tmp_path)
        deadline = time.monotonic() + 120
        while not archive.exists():  # the coordinator has made it: the workers are starting
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        while len(worker_pids(proc.pid)) < 2:  # both spawned, still importing (a full suite's
            assert proc.poll() is None and time.monotonic() < deadline  # load can take > 0.2 s)
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "stopped with exit code" not in stderr, stderr
    assert not (tmp_path / "early.nitpicker.lock").exists()
    conn = sqlite3.connect(archive)
    assert conn.execute("SELECT status, stop_reason FROM runs").fetchall() == [
        ("stopped", "shutdown")]
    assert 1 not in frontier_left(archive)


def test_the_close_clusters_the_templates_from_the_workers_own_parse(tmp_path: Path) -> None:
    """Each worker's final report carries the skeletons of the pages it recorded: the
    coordinator's close reads no snapshot to cluster them, and the clusters are those the
    snapshots give (``nitpicker analyze --sample`` computes them from the snapshots)."""
    pages = 30
    with TemplatedSite(pages=pages) as site:
        done = run("crawl", site.url("/"), "-o", "t", "--workers", "2", "--verbose",
                   cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (f"template clusters: {pages + 1} pages in {len(TEMPLATES) + 1} clusters, 0 snapshots"
            " read") in done.stderr, done.stderr[-3000:]
    archive = tmp_path / "t.nitpicker"
    tables = ("SELECT page_id, template_id, similarity FROM page_templates ORDER BY page_id",
              "SELECT id, signature, pages, example_page_id, paths FROM templates ORDER BY id")
    at_close = [rows(archive, sql) for sql in tables]
    assert len(at_close[0]) == pages + 1
    conn = sqlite3.connect(archive)
    summary = record_templates(conn)  # from the snapshots
    conn.commit()
    conn.close()
    assert summary.snapshots_read == pages + 1
    assert [rows(archive, sql) for sql in tables] == at_close


def test_the_close_of_a_workers_crawl_follows_the_crawls_settings(tmp_path: Path) -> None:
    """The coordinator closes the run with the settings the workers crawl with: the site
    checks off (``NITPICKER_SITE_CHECKS``) means none run at the close, as in a single crawl."""
    with FixtureSite() as site:
        for name, checks in (("on", "True"), ("off", "False")):
            done = run("crawl", site.url("/recursive/"), "-o", name, "--workers", "2",
                       "--silent", cwd=tmp_path, timeout=240,
                       env={"NITPICKER_SITE_CHECKS": checks})
            assert done.returncode == 0, done.stderr
    assert count(tmp_path / "on.nitpicker", "SELECT count(*) FROM check_runs") == 1
    assert count(tmp_path / "off.nitpicker", "SELECT count(*) FROM check_runs") == 0
