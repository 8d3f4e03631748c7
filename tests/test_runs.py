"""Runs and failure codes: every crawl says how it ended, and why when it did not finish."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_twisted

from fixtures.site import FixtureSite
from nitpicker.failure import ERROR_CODES, RunFailure, classify_exception, outcome_of_close
from tests.helpers import crawl, kill_after

ROOT = Path(__file__).resolve().parent.parent


def runs(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT kind, status, stop_reason, error_code, phase FROM runs ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("reason", "pending", "failure", "fetched", "errors", "expected"),
    [
        ("finished", 0, None, 10, 0, ("finished", None)),
        ("finished", 0, None, 3, 3, ("failed", "network")),
        ("max_pages", 5, None, 5, 0, ("stopped", "page_limit")),
        ("max_duration", 5, None, 5, 0, ("stopped", "deadline")),
        ("shutdown", 5, None, 5, 0, ("stopped", "killed")),
        ("closespider_timeout", 5, None, 5, 0, ("stopped", "timeout")),
        ("memusage_exceeded", 5, None, 5, 0, ("stopped", "memory")),
        ("failed", 5, RunFailure("disk_full", "x"), 5, 0, ("failed", "disk_full")),
        ("something_else", 5, None, 5, 0, ("failed", "unknown")),
    ],
)
def test_outcome_of_close(reason: str, pending: int, failure: RunFailure | None,
                          fetched: int, errors: int, expected: tuple[str, str | None]) -> None:
    status, code, _ = outcome_of_close(reason, pending=pending, failure=failure,
                                       fetched=fetched, fetch_errors=errors)
    assert (status, code) == expected
    assert code is None or code in ERROR_CODES


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (sqlite3.OperationalError("database or disk is full"), "disk_full"),
        (sqlite3.DatabaseError("database disk image is malformed"), "db_error"),
        (OSError(28, "No space left on device"), "disk_full"),
        (MemoryError(), "memory"),
        (RuntimeError("boom"), "unknown"),
    ],
)
def test_classify_exception(exc: BaseException, code: str) -> None:
    assert classify_exception(exc).code == code


@pytest_twisted.ensureDeferred
async def test_max_duration_stops_with_deadline(tmp_path: Path) -> None:
    with FixtureSite(delay=0.2) as site:
        started = time.monotonic()
        archive = await crawl(tmp_path, [site.url("/wide/")], parallels=2, max_duration=1.5)
        elapsed = time.monotonic() - started
    assert elapsed < 10
    assert runs(archive.path)[-1][:4] == ("crawl", "stopped", "max_duration", "deadline")
    left = archive.rows("SELECT count(*) AS n FROM frontier WHERE state < 2")[0]["n"]
    leased = archive.rows("SELECT count(*) AS n FROM frontier WHERE state = 1")[0]["n"]
    assert left > 0 and leased == 0
    # every page recorded before the deadline is queryable
    assert len(archive.urls("status = 200")) >= 3


@pytest_twisted.ensureDeferred
async def test_max_pages_run_code(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/deep/")], max_pages=3, parallels=1)
    assert runs(archive.path)[-1][:4] == ("crawl", "stopped", "max_pages", "page_limit")


@pytest_twisted.ensureDeferred
async def test_unreachable_root_is_a_network_failure(tmp_path: Path) -> None:
    archive = await crawl(tmp_path, ["http://127.0.0.1:1/"])
    assert runs(archive.path)[-1][1:4] == ("failed", "finished", "network")


@pytest_twisted.ensureDeferred
async def test_full_archive_fails_with_disk_full_and_keeps_committed_pages(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/wide/")], parallels=2, max_archive_mb=0.22)
    _, status, _, code, phase = runs(archive.path)[-1]
    assert (status, code, phase) == ("failed", "disk_full", "crawl")
    assert archive.rows("PRAGMA integrity_check")[0][0] == "ok"
    recorded = len(archive.urls("status = 200"))
    assert 0 < recorded < 121


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", *args, "--silent"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )


def test_watchdog_marks_a_killed_run_instance_lost(tmp_path: Path) -> None:
    with FixtureSite(delay=0.02) as site:
        archive = tmp_path / "lost.nitpicker"
        proc = _start(site.url("/wide/"), "-o", "lost", "-P", "2", "--no-render", cwd=tmp_path)
        kill_after(proc, archive, 20)
        assert [r[1] for r in runs(archive)] == ["running"]
        resumed = _start("--resume", str(archive), cwd=tmp_path)
        assert resumed.wait(timeout=120) == 0
    assert [(r[0], r[1], r[3]) for r in runs(archive)] == [
        ("crawl", "failed", "instance_lost"), ("resume", "finished", None)]


def test_cli_exit_code_of_a_failed_run(tmp_path: Path) -> None:
    with FixtureSite() as site:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/wide/"), "-o", "full",
             "--no-render", "-P", "2", "--max-archive-mb", "0.22"],
            cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "Crawl failed (disk_full)" in done.stderr
