"""``nitpicker crawl --resume`` / ``--append`` with more flags: a flag is honoured or refused
with one line naming it, never dropped silently (nitpicker/crawl/config_builder.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.session import CrawlSession
from tests.helpers import ROOT, count, run

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite

NON_RUNTIME_FLAGS = [
    ["--single"],
    ["--no-recursive"],
    ["--no-fetch-external"],
    ["--no-image"],
    ["--render"],
    ["--exclude", "/private/**"],
    ["--exclude-keyword", "secret"],
    ["--exclude-url", "https://ads.example/"],
    ["--disable-queries"],
    ["-Q"],  # named by its long form
    ["--user-agent", "OtherBot/2"],
    ["--ignore-robots"],
    ["--dedupe-cap", "50"],
    ["--dedupe-cap", "0"],
    ["--dedupe-age-window", "7000"],
    ["--dedupe-map-cap", "5000"],
    ["--no-sitemap"],
    ["--deny-private-networks"],
]
"""Every crawl flag that is not a runtime option, each with a value the archive does not have."""


def stored_archive(tmp_path: Path, root: str = "http://localhost:1/") -> Path:
    """An archive of a crawl with default options over HTTP, its root still to fetch."""
    path = tmp_path / "site.nitpicker"
    session = CrawlSession(CrawlConfig(roots=(root,), output=str(path), render=False))
    session.open()
    session.close("shutdown")
    return path


def nitpicker(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line as given (``tests.test_cli.run`` adds ``--no-render``)."""
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120, check=False)


def files(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}


@pytest.mark.parametrize("flag", NON_RUNTIME_FLAGS, ids=lambda flag: flag[0])
@pytest.mark.parametrize("mode", ["--resume", "--append"])
def test_a_flag_that_would_change_the_crawl_is_refused(tmp_path: Path, mode: str,
                                                       flag: list[str]) -> None:
    archive = stored_archive(tmp_path)
    before = files(tmp_path)
    urls = ["http://localhost:1/docs/"] if mode == "--append" else []
    result = nitpicker("crawl", mode, str(archive), *urls, *flag, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    name = "--disable-queries" if flag == ["-Q"] else flag[0]
    if mode == "--append" and name == "--single":  # refused before: an append crawls fully
        assert lines[0] == "Error: --append cannot be combined with --list, --list-file or --single"
    else:
        assert lines[0].startswith(f"Error: {name} cannot change with {mode}: "), lines[0]
        assert lines[0].endswith("; only --parallels, --interval, --retry, --max-pages, "
                                 "--max-duration, --max-archive-mb, --strict may be given anew")
    assert files(tmp_path) == before  # the archive untouched, no lock, backup or WAL left


def test_a_flag_the_archive_already_has_is_honoured(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/deep/"), "-o", "deep", "--max-pages", "3", "-P", "1",
                "--exclude", "/nowhere/**", "--silent", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "deep.nitpicker"
    again = run("crawl", "--resume", str(archive), "--no-render", "--exclude", "/nowhere/**",
                "--max-pages", "2", "-P", "1", "--silent", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL") == 5


def test_runtime_flags_are_this_runs(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/deep/"), "-o", "deep", "--max-pages", "2", "--silent",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "deep.nitpicker"
    again = run("crawl", "--resume", str(archive), "--max-pages", "4", "-P", "2", "--retry",
                "0", "--max-archive-mb", "500", "--strict", "--silent", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL") == 6
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    try:
        stored = json.loads(conn.execute("SELECT config FROM info").fetchone()[0])
    finally:
        conn.close()
    assert stored["max_pages"] == 2  # a resume does not rewrite the crawl's stored options


def test_an_append_honours_its_runtime_flags(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/about"), "-o", "base", "--silent", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "base.nitpicker"
    done = count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL")
    appended = run("crawl", "--append", str(archive), site.url("/deep/"), "--max-pages", "2",
                   "-P", "1", "--silent", cwd=tmp_path)
    assert appended.returncode == 0, appended.stderr
    assert count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL") == done + 2
