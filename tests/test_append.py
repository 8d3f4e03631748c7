"""``nitpicker crawl --append FILE URL…``: more roots, re-promotion, backup and restore."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.append import AppendError, ArchiveBackup
from tests.helpers import run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_append_adds_a_root_and_repromotes_its_rows(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/scope/blog/"), "-o", "blog", "--silent", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "blog.nitpicker"
    docs_before = rows(archive, "SELECT id, is_external, is_target FROM pages WHERE url = ?",
                       site.url("/scope/docs/"))
    assert docs_before[0][1:] == (1, 0)
    appended = run("crawl", "--append", str(archive), site.url("/scope/docs/"), "--silent",
                   cwd=tmp_path)
    assert appended.returncode == 0, appended.stderr
    docs = rows(archive, "SELECT id, is_external, is_target, title FROM pages WHERE url = ?",
                site.url("/scope/docs/"))
    assert docs == [(docs_before[0][0], 0, 1, "Docs Top")]  # same id, now a page in scope
    api = rows(archive, "SELECT is_target, title FROM pages WHERE url = ?", site.url("/scope/docs/api"))
    assert api == [(1, "API Docs")]
    roots = rows(archive, "SELECT roots FROM info")[0][0]
    assert roots == f'["{site.url("/scope/blog/")}", "{site.url("/scope/docs/")}"]'
    assert [r[0] for r in rows(archive, "SELECT kind FROM runs ORDER BY id")] == ["crawl", "append"]
    assert not (tmp_path / "blog.nitpicker.bak").exists()
    # the old pages are still there, with their snapshots
    assert rows(archive, "SELECT count(*) FROM snapshots s JOIN pages p ON p.id = s.page_id"
                         " WHERE p.url = ?", site.url("/scope/blog/post-1"))[0][0] == 1


def test_failed_append_restores_the_archive(site: FixtureSite, tmp_path: Path) -> None:
    assert run("crawl", site.url("/scope/blog/"), "-o", "blog", "--silent",
               cwd=tmp_path).returncode == 0
    archive = tmp_path / "blog.nitpicker"
    before = archive.read_bytes()
    size_mb = len(before) / 1024 / 1024
    # a storage budget just above the current size: the append run fails with disk_full
    failed = run("crawl", "--append", str(archive), site.url("/wide/"), "--silent",
                 "--max-archive-mb", f"{size_mb + 0.01:.3f}", cwd=tmp_path)
    assert failed.returncode == 1
    assert "append failed, the archive was restored" in failed.stderr
    assert "disk_full" in failed.stderr
    assert archive.read_bytes() == before
    assert not (tmp_path / "blog.nitpicker.bak").exists()
    assert not list(tmp_path.glob("*.lock"))
    # and it opens for another crawl: the lock was released
    again = run("crawl", "--append", str(archive), site.url("/scope/docs/"), "--silent",
                cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_failed_restore_reports_both_errors(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    archive.write_bytes(b"x")
    backup = ArchiveBackup(archive)  # no backup was taken: the restore cannot work
    with pytest.raises(AppendError) as raised:
        backup.restore("disk_full: database or disk is full")
    message = str(raised.value)
    assert "append failed AND restore from backup failed" in message
    assert "disk_full" in message and str(backup.backup) in message


def test_list_mode_archive_refuses_append(site: FixtureSite, tmp_path: Path) -> None:
    assert run("crawl", "--list", site.url("/list/a"), "-o", "listed", "--silent",
               cwd=tmp_path).returncode == 0
    archive = tmp_path / "listed.nitpicker"
    before = archive.read_bytes()
    refused = run("crawl", "--append", str(archive), site.url("/list/b"), cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Error: Cannot append to a list-mode archive: this archive was created with "
        "--list/--list-file and contains metadata-only pages. Create a fresh archive instead."
    )
    assert archive.read_bytes() == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-o", "x"], "--output flag is not supported with --append"),
        (["--resume", "y.nitpicker"], "--resume and --append cannot be used together"),
        ([], "--append needs at least one URL to add"),
    ],
)
def test_append_bad_input(site: FixtureSite, tmp_path: Path, extra: list[str], message: str) -> None:
    assert run("crawl", site.url("/about"), "-o", "base", "--silent", cwd=tmp_path).returncode == 0
    urls = [] if not extra else [site.url("/scope/docs/")]
    result = run("crawl", "--append", "base.nitpicker", *urls, *extra, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_append_to_a_missing_or_foreign_file(tmp_path: Path) -> None:
    missing = run("crawl", "--append", "nope.nitpicker", "http://localhost:1/", cwd=tmp_path)
    assert missing.returncode == 1 and "Archive not found" in missing.stderr
    (tmp_path / "text.nitpicker").write_text("not sqlite")
    foreign = run("crawl", "--append", "text.nitpicker", "http://localhost:1/", cwd=tmp_path)
    assert foreign.returncode == 1 and "Not a nitpicker archive" in foreign.stderr


def test_append_to_a_locked_or_corrupt_archive_changes_nothing(site: FixtureSite,
                                                               tmp_path: Path) -> None:
    import subprocess
    import sys

    assert run("crawl", site.url("/about"), "-o", "held", "--silent", cwd=tmp_path).returncode == 0
    archive = tmp_path / "held.nitpicker"
    before = archive.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "held.nitpicker.lock").write_text(str(holder.pid))
        locked = run("crawl", "--append", str(archive), site.url("/scope/docs/"), cwd=tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert locked.returncode == 1
    assert f"PID {holder.pid}" in locked.stderr
    assert archive.read_bytes() == before
    assert not (tmp_path / "held.nitpicker.bak").exists()

    corrupt = tmp_path / "corrupt.nitpicker"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4000)
    result = run("crawl", "--append", str(corrupt), site.url("/scope/docs/"), cwd=tmp_path)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "corrupt" in result.stderr.lower() or "not a" in result.stderr.lower()
    assert corrupt.read_bytes() == b"SQLite format 3\x00" + b"\x13" * 4000
