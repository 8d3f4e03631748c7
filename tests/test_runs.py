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
from nitpicker.archive.schema import migrate
from nitpicker.crawl.run_failure import (
    ERROR_CODES,
    RunFailure,
    classify_exception,
    outcome_of_close,
)
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
    ("fetched", "errors", "too_large", "expected"),
    [
        (2, 2, 2, ("failed", "too_large", ("all 2 URL(s) were larger than the download max size "
                                          "(DOWNLOAD_MAXSIZE)"))),
        (3, 3, 1, ("failed", "network", "all 3 URL(s) failed to fetch (1 of them too large)")),
        (3, 1, 1, ("finished", None, None)),  # another URL answered
    ],
)
def test_outcome_of_close_with_bodies_too_large(fetched: int, errors: int, too_large: int,
                                                expected: tuple[str, str | None, str | None]
                                                ) -> None:
    assert outcome_of_close("finished", pending=0, failure=None, fetched=fetched,
                            fetch_errors=errors, too_large=too_large) == expected


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
    # room for a few pages beyond an empty archive (whose size grows with the schema)
    archive = await crawl(tmp_path, [site.url("/wide/")], parallels=2,
                          max_archive_mb=(_empty_archive_bytes(tmp_path) + 120 * 1024) / 2**20)
    _, status, _, code, phase = runs(archive.path)[-1]
    assert (status, code, phase) == ("failed", "disk_full", "crawl")
    assert archive.rows("PRAGMA integrity_check")[0][0] == "ok"
    recorded = len(archive.urls("status = 200"))
    assert 0 < recorded < 121


def _empty_archive_bytes(folder: Path) -> int:
    conn = sqlite3.connect(folder / "empty.nitpicker", isolation_level=None)
    try:
        migrate(conn)
        return int(conn.execute("PRAGMA page_count").fetchone()[0]) * int(
            conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


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


# -- a full archive: every phase ends the run with its code, its phase and an Error: line -----

PAGE = 4096
FULL = "Error: run failed (disk_full, {phase} phase): OperationalError: database or disk is full"

DISK_FULL_AT_CLOSE = """
import sys
from nitpicker.archive.writer import ArchiveWriter
build = ArchiveWriter.build_inbound_index
def build_on_a_full_disk(self):
    # the disk fills up as the archive closes: not one page more than the file has now
    pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
    self.conn.execute(f"PRAGMA max_page_count = {pages}")
    build(self)
ArchiveWriter.build_inbound_index = build_on_a_full_disk
from nitpicker.cli import app
sys.argv[0] = "nitpicker"
app()
"""


def _nitpicker(*args: str, cwd: Path, code: str | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    program = ["-c", code] if code else ["-m", "nitpicker.cli"]
    return subprocess.run([sys.executable, *program, *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          capture_output=True,
                          text=True, timeout=120, check=False)


def _has_inbound_index(path: Path) -> bool:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'anchors_href_page'"
                            ).fetchone()[0] == 1
    finally:
        conn.close()


def _one_file(path: Path) -> None:
    """The archive closed: no WAL, no shared memory, no lock left beside it."""
    for suffix in ("-wal", "-shm", ".lock"):
        assert not Path(f"{path}{suffix}").exists(), suffix


def test_a_budget_the_close_would_overrun_stops_the_crawl_instead(
    site: FixtureSite, tmp_path: Path
) -> None:
    # without the site checks: their findings, written after the close, are not what the
    # budget of the crawl's close is about
    whole = _nitpicker("crawl", site.url("/wide/"), "-o", "whole", "--no-render", "-P", "2",
                       "--silent", cwd=tmp_path, env={"NITPICKER_SITE_CHECKS": "False"})
    assert whole.returncode == 0, whole.stderr
    size = (tmp_path / "whole.nitpicker").stat().st_size
    # two pages less than the finished archive: room for the pages, not for what the close
    # adds (inbound index, URL order). It used to close past the budget and say "finished".
    budget = size - 2 * PAGE
    done = _nitpicker("crawl", site.url("/wide/"), "-o", "tight", "--no-render", "-P", "2",
                      "--max-archive-mb", f"{budget / 1024 / 1024:.6f}", cwd=tmp_path,
                      env={"NITPICKER_SITE_CHECKS": "False"})
    archive = tmp_path / "tight.nitpicker"
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == FULL.format(phase="crawl")
    assert "run failed (failed, disk_full)" in done.stderr
    assert runs(archive)[-1][1:] == ("failed", "failed", "disk_full", "crawl")
    # the crawl stopped early enough for the close to finish within the budget
    assert archive.stat().st_size <= budget
    assert _has_inbound_index(archive)
    _one_file(archive)


def test_disk_full_while_closing_fails_the_run_in_the_close_phase(
    site: FixtureSite, tmp_path: Path
) -> None:
    done = _nitpicker("crawl", site.url("/wide/"), "-o", "closing", "--no-render", "-P", "2",
                      cwd=tmp_path, code=DISK_FULL_AT_CLOSE)
    archive = tmp_path / "closing.nitpicker"
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == FULL.format(phase="close")
    assert "run failed (finished, disk_full)" in done.stderr  # the summary reads the run row
    assert runs(archive)[-1][1:] == ("failed", "finished", "disk_full", "close")
    _one_file(archive)
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # every page crawled is there; only the index the close could not build is missing
        assert conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0] == 121
    finally:
        conn.close()
    assert not _has_inbound_index(archive)


def test_disk_full_while_opening_fails_the_run_in_the_open_phase(
    site: FixtureSite, tmp_path: Path
) -> None:
    assert _nitpicker("crawl", site.url("/wide/"), "-o", "killed", "--no-render", "--silent",
                      cwd=tmp_path).returncode == 0
    archive = tmp_path / "killed.nitpicker"
    # as a crawl killed after its last commit leaves it: the inbound index never built
    conn = sqlite3.connect(archive)
    conn.execute("DROP INDEX anchors_href_page")
    conn.execute("VACUUM")
    conn.close()
    size = archive.stat().st_size
    # nothing left to crawl, so the resume builds the index as it opens: past the budget
    done = _nitpicker("crawl", "--resume", str(archive), "--silent",
                      "--max-archive-mb", f"{size / 1024 / 1024:.6f}", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"Error: {archive}: {FULL.format(phase='open')[7:]}"
    assert runs(archive)[-1][:2] == ("resume", "failed")
    assert runs(archive)[-1][3:] == ("disk_full", "open")
    assert archive.stat().st_size <= size
    _one_file(archive)
