"""A crawl killed with SIGKILL part-way resumes to exactly the page set of an uninterrupted one."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.site import WIDE_MAX, FixtureSite
from tests.helpers import kill_after, recorded

ROOT = Path(__file__).resolve().parent.parent


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", *args, "--silent", *([] if "--resume" in args else ["--no-render"])],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )


def snapshot(path: Path) -> dict[str, tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT p.url, p.status, p.title, p.is_target, p.is_external,"
            " (SELECT count(*) FROM anchors a WHERE a.page_id = p.id),"
            " (SELECT count(*) FROM snapshots s WHERE s.page_id = p.id)"
            " FROM pages p"
        ).fetchall()
        return {r[0]: tuple(r[1:]) for r in rows}
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_twice_then_resume_equals_uninterrupted_crawl(tmp_path: Path) -> None:
    with FixtureSite(delay=0.01) as site:
        root = site.url("/wide/")
        reference = start(root, "-o", "reference", "-P", "4", cwd=tmp_path)
        assert reference.wait(timeout=120) == 0, reference.stderr.read() if reference.stderr else ""
        expected = snapshot(tmp_path / "reference.nitpicker")
        assert len([u for u, v in expected.items() if v[2] == 1]) == 121  # /wide/ + 120 pages

        archive = tmp_path / "killed.nitpicker"
        kill_after(start(root, "-o", "killed", "-P", "4", cwd=tmp_path), archive, 30)
        assert (tmp_path / "killed.nitpicker.lock").exists()  # left behind by the dead process
        committed = kill_after(start("--resume", str(archive), "-P", "4", cwd=tmp_path), archive, 80)
        site.clear_log()
        final = start("--resume", str(archive), "-P", "4", cwd=tmp_path)
        assert final.wait(timeout=120) == 0, final.stderr.read() if final.stderr else ""
        pages = [p for m, _, p in site.request_log if m == "GET"
                 and re.fullmatch(r"/wide/p/(\d+)", p) and int(p.rsplit("/", 1)[1]) <= WIDE_MAX]
        refetched = len(pages)

    assert snapshot(archive) == expected
    # the last run fetched exactly the pages not committed before the kill: none twice
    # (predicted pages past the last, /wide/p/121…, are fetched too: 404, not recorded)
    assert refetched == 121 - committed
    assert len(set(pages)) == len(pages)
    conn = sqlite3.connect(archive)
    runs = conn.execute("SELECT kind, status FROM runs ORDER BY id").fetchall()
    assert runs[-1] == ("resume", "finished")
    assert len(runs) == 3


@pytest.mark.slow
def test_sigint_closes_the_archive_resumable(tmp_path: Path) -> None:
    with FixtureSite(delay=0.02) as site:
        archive = tmp_path / "interrupted.nitpicker"
        proc = start(site.url("/wide/"), "-o", "interrupted", "-P", "2", cwd=tmp_path)
        while recorded(archive) < 20:
            assert proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert not (tmp_path / "interrupted.nitpicker.lock").exists()
        assert not (tmp_path / "interrupted.nitpicker-wal").exists()
        conn = sqlite3.connect(archive)
        status, reason, code = conn.execute("SELECT status, stop_reason, error_code FROM runs").fetchone()
        left = conn.execute("SELECT count(*) FROM frontier WHERE state < 2").fetchone()[0]
        conn.close()
        assert (status, reason, code) == ("stopped", "shutdown", "killed")
        assert left > 0
        resumed = start("--resume", str(archive), cwd=tmp_path)
        assert resumed.wait(timeout=120) == 0
    assert len([v for v in snapshot(archive).values() if v[2] == 1]) == 121


@pytest.mark.slow
def test_sigkill_at_random_points_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    import collections
    import random

    rng = random.Random(20261129)
    with FixtureSite(delay=0.005) as site:
        root = site.url("/wide/")
        reference = start(root, "-o", "reference", "-P", "4", cwd=tmp_path)
        assert reference.wait(timeout=120) == 0
        expected = snapshot(tmp_path / "reference.nitpicker")
        site.clear_log()

        archive = tmp_path / "random.nitpicker"
        wal = tmp_path / "random.nitpicker-wal"
        proc = start(root, "-o", "random", "-P", "4", cwd=tmp_path)
        kills = 0
        for threshold in sorted(rng.sample(range(5, 110), 4)):
            if recorded(archive) >= threshold:
                continue
            # wait for the threshold, then for the WAL to grow again: a batch is being written
            while recorded(archive) < threshold and proc.poll() is None:
                time.sleep(0.002)
            size = wal.stat().st_size if wal.exists() else 0
            deadline = time.monotonic() + 2
            while (wal.exists() and wal.stat().st_size == size) and time.monotonic() < deadline:
                if proc.poll() is not None:
                    break
            time.sleep(rng.random() / 500)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
            proc = start("--resume", str(archive), "-P", "4", cwd=tmp_path)
        assert proc.wait(timeout=120) == 0
        gets = collections.Counter(p for m, _, p in site.request_log if m == "GET" and "/wide/" in p)

    assert kills >= 2
    assert snapshot(archive) == expected  # includes PRAGMA integrity_check == ok
    refetched = sum(n - 1 for n in gets.values())
    # each kill loses at most the uncommitted batch: ≤ 100 pages or 200 ms of crawling
    assert refetched <= kills * 100
