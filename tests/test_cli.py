"""The ``nitpicker crawl`` command in a subprocess: exit codes, output naming, bad input."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers import run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


def count(path: Path, sql: str) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_clean_crawl_exits_0_with_default_name_and_summary(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/recursive/"), "--retry", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archives = list(tmp_path.glob("*.nitpicker"))
    assert len(archives) == 1
    assert archives[0].name.startswith("localhost-")
    assert len(archives[0].stem.split("-")[-1]) == 17  # YYYYMMDDHHmmssSSS
    assert "4 pages in scope" in result.stderr
    assert count(archives[0], "SELECT count(*) FROM pages WHERE is_target = 1") == 4
    assert not list(tmp_path.glob("*.lock")) and not list(tmp_path.glob("*-wal"))


def test_output_name_gets_suffix_and_silent_prints_nothing(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/about"), "-o", "my-report", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and result.stdout == ""
    assert [p.name for p in tmp_path.glob("*.nitpicker")] == ["my-report.nitpicker"]
    conn = sqlite3.connect(tmp_path / "my-report.nitpicker")
    assert conn.execute("SELECT name FROM info").fetchone()[0] == "my-report"


def test_in_scope_error_exits_1(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/errors/reset"), "--retry", "0", "-o", "x", cwd=tmp_path)
    assert result.returncode == 1
    assert "1 internal" in result.stderr


def test_only_external_errors_exit_2_or_1_with_strict(site: FixtureSite, tmp_path: Path) -> None:
    # /errors/ links to a refused external URL and to /errors/reset; exclude the reset page.
    args = ("crawl", site.url("/errors/"), "--retry", "0", "--exclude", "/errors/reset")
    result = run(*args, "-o", "a", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "1 external" in result.stderr
    strict = run(*args, "-o", "b", "--strict", cwd=tmp_path)
    assert strict.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["not a url"], 'Invalid URL: "not a url"'),
        (["ftp://example.com/"], 'Invalid URL: "ftp://example.com/"'),
        ([], "Give a URL to crawl"),
        (["http://localhost:1/", "-o", "missing-dir/out"], "Output directory does not exist"),
        (["http://localhost:1/a", "http://localhost:1/b", "--single"],
         "--single cannot be combined with multiple positional URLs"),
        (["--resume", "x.nitpicker", "-o", "y"], "--output flag is not supported with --resume"),
        (["--resume", "absent.nitpicker"], "Archive not found"),
        (["--list-file", "absent.txt"], "Cannot read list file"),
        (["http://localhost:1/", "--parallels", "0"], "--parallels must be at least 1"),
        (["http://localhost:1/", "--exclude-keyword", "/x/q"], "unsupported regex flag"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(args: list[str], message: str, tmp_path: Path) -> None:
    result = run("crawl", *args, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and message in lines[0]
    assert not list(tmp_path.glob("*.nitpicker"))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://exa mple.com/", 'Error: Invalid URL: "http://exa mple.com/"'),
        ("http://localhost:1/" + "x" * 9000, "Error: URL too long (9019 characters, at most 8190)"),
    ],
)
def test_unusable_root_is_one_line_and_exit_1(url: str, message: str, tmp_path: Path) -> None:
    """A space in the host, a root longer than the overlong-URL guard: refused before a crawl."""
    result = run("crawl", url, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(message)
    assert not list(tmp_path.glob("*.nitpicker"))


def test_empty_list_file_and_not_an_archive(tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_text("# only a comment\n\n")
    result = run("crawl", "--list-file", "urls.txt", cwd=tmp_path)
    assert result.returncode == 1
    assert "No URLs found in list file" in result.stderr
    (tmp_path / "notes.nitpicker").write_text("hello")
    result = run("crawl", "--resume", "notes.nitpicker", cwd=tmp_path)
    assert result.returncode == 1
    assert "Not a nitpicker archive" in result.stderr
    assert (tmp_path / "notes.nitpicker").read_text() == "hello"


def test_existing_output_is_not_overwritten(site: FixtureSite, tmp_path: Path) -> None:
    (tmp_path / "keep.nitpicker").write_bytes(b"precious")
    result = run("crawl", site.url("/about"), "-o", "keep", cwd=tmp_path)
    assert result.returncode == 1
    assert "Output file already exists" in result.stderr
    assert (tmp_path / "keep.nitpicker").read_bytes() == b"precious"


def test_archive_held_by_a_live_process_is_refused(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/about"), "-o", "held", "--max-pages", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "held.nitpicker.lock").write_text(str(holder.pid))
        result = run("crawl", "--resume", "held.nitpicker", cwd=tmp_path)
        assert result.returncode == 1
        assert f"PID {holder.pid}" in result.stderr
    finally:
        holder.kill()
        holder.wait()
    # a lock left by a dead process is taken over
    resumed = run("crawl", "--resume", "held.nitpicker", "--silent", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert not (tmp_path / "held.nitpicker.lock").exists()


def test_list_file_ignores_comments_and_blank_lines(site: FixtureSite, tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_text(
        f"# pages to check\n{site.url('/list/a')}\n\n{site.url('/list/b')}  # second\n"
    )
    result = run("crawl", "--list-file", "urls.txt", "-o", "list", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert count(tmp_path / "list.nitpicker", "SELECT count(*) FROM pages WHERE is_target = 1") == 2


def test_max_pages_then_resume_completes(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/deep/"), "-o", "deep", "--max-pages", "10", "-P", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "continue with: nitpicker crawl --resume" in first.stderr
    archive = tmp_path / "deep.nitpicker"
    assert count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL") == 10
    second = run("crawl", "--resume", str(archive), "--silent", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert count(archive, "SELECT count(*) FROM pages WHERE title LIKE 'Deep %'") == 31
    assert count(archive, "SELECT count(*) FROM frontier WHERE state < 2") == 0
    assert count(archive, "SELECT count(*) FROM runs") == 2
