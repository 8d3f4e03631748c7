"""``nitpicker crawl --append FILE URL…``: more roots, re-promotion, backup and restore."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.archive import ArchiveLock
from nitpicker.crawl.append import AppendError, ArchiveBackup
from tests.helpers import ROOT, run
from tests.helpers import archive_rows as rows

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


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
    lock = ArchiveLock(archive)
    lock.acquire()
    try:
        backup = ArchiveBackup(archive, lock)  # no backup was taken: the restore cannot work
        with pytest.raises(AppendError) as raised:
            backup.restore("disk_full: database or disk is full")
    finally:
        lock.release()
    message = str(raised.value)
    assert "append failed AND restore from backup failed" in message
    assert "disk_full" in message and str(backup.backup) in message


def test_a_backup_is_neither_taken_nor_restored_without_the_lock(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    archive.write_bytes(b"live")
    Path(f"{archive}-wal").write_bytes(b"live wal")
    (tmp_path / "a.nitpicker.bak").write_bytes(b"old")
    backup = ArchiveBackup(archive, ArchiveLock(archive))  # the lock is not held
    with pytest.raises(AppendError, match="does not hold its lock"):
        backup.take()
    with pytest.raises(AppendError, match="does not hold its lock") as raised:
        backup.restore("disk_full: database or disk is full")
    assert f"The backup is kept at {backup.backup}" in str(raised.value)
    assert archive.read_bytes() == b"live"
    assert Path(f"{archive}-wal").read_bytes() == b"live wal"
    assert backup.backup.read_bytes() == b"old"


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


# A process that holds the archive's lock and is writing it: one committed change still in the
# WAL (not checkpointed), then it waits for a line on stdin and reads its change back.
LOCK_HOLDER = """
import sqlite3, sys
from pathlib import Path
from nitpicker.archive import ArchiveLock
path = Path(sys.argv[1])
lock = ArchiveLock(path)
lock.acquire()
conn = sqlite3.connect(path, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA wal_autocheckpoint=0")
conn.execute("UPDATE info SET name = 'written by the lock holder'")
print("writing", flush=True)
sys.stdin.readline()
print(conn.execute("SELECT name FROM info").fetchone()[0], flush=True)
conn.close()
lock.release()
"""

# --append whose early check ran before the other process took the lock (the race it lost).
RACING_APPEND = """
import sys
import nitpicker.cli.crawl as crawl
crawl._check_writable = lambda config: None
from nitpicker.cli import app
sys.argv[0] = "nitpicker"
app()
"""


def _python(code: str, *args: str, cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, **popen)


def test_an_append_that_loses_the_lock_race_touches_nothing(site: FixtureSite,
                                                            tmp_path: Path) -> None:
    assert run("crawl", site.url("/about"), "-o", "live", "--silent", cwd=tmp_path).returncode == 0
    archive = tmp_path / "live.nitpicker"
    wal = Path(f"{archive}-wal")
    holder = _python(LOCK_HOLDER, str(archive), cwd=tmp_path, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "writing"
        file_before, wal_before = archive.read_bytes(), wal.read_bytes()
        racing = _python(RACING_APPEND, "crawl", "--append", str(archive),
                         site.url("/scope/docs/"), "--no-render", cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, stderr = racing.communicate(timeout=120)
        assert racing.returncode == 1
        assert stderr.strip() == (f"Error: Archive is being used by another process "
                                  f"(PID {holder.pid}): {archive}.lock")
        # the live archive, its WAL and its shared memory are as the holder left them
        assert archive.read_bytes() == file_before
        assert wal.read_bytes() == wal_before
        assert Path(f"{archive}-shm").exists()
        assert not (tmp_path / "live.nitpicker.bak").exists()
        assert Path(f"{archive}.lock").read_text().split()[0] == str(holder.pid)
        holder.stdin.write("go on\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "written by the lock holder"
        assert holder.wait(timeout=30) == 0
    finally:
        holder.kill()
        holder.wait()


KILLED_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA wal_autocheckpoint=0")
conn.execute("UPDATE info SET name = 'committed, still in the WAL'")
os._exit(0)  # killed: the WAL is never folded back into the file
"""


def test_a_failed_append_restores_the_wal_of_a_killed_crawl(site: FixtureSite,
                                                            tmp_path: Path) -> None:
    assert run("crawl", site.url("/scope/blog/"), "-o", "killed", "--silent",
               cwd=tmp_path).returncode == 0
    archive = tmp_path / "killed.nitpicker"
    killed = _python(KILLED_WRITER, str(archive), cwd=tmp_path)
    assert killed.wait(timeout=30) == 0
    wal = Path(f"{archive}-wal")
    file_before, wal_before = archive.read_bytes(), wal.read_bytes()
    assert wal_before
    size_mb = len(file_before) / 1024 / 1024
    failed = run("crawl", "--append", str(archive), site.url("/wide/"), "--silent",
                 "--max-archive-mb", f"{size_mb + 0.01:.3f}", cwd=tmp_path)
    assert failed.returncode == 1
    assert "append failed, the archive was restored" in failed.stderr
    assert archive.read_bytes() == file_before
    assert wal.read_bytes() == wal_before
    assert rows(archive, "SELECT name FROM info") == [("committed, still in the WAL",)]
    assert not list(tmp_path.glob("*.bak*"))


def _refused_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_append_whose_new_roots_all_fail_is_undone(site: FixtureSite, tmp_path: Path) -> None:
    # A stopped crawl: the append fetches its pending pages fine, but its new root is refused.
    first = run("crawl", site.url("/scope/blog/"), "-o", "blog", "--max-pages", "1", "--silent",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "blog.nitpicker"
    assert rows(archive, "SELECT count(*) FROM frontier WHERE state = 0")[0][0] > 0
    before = _sha256(archive)
    dead = f"http://127.0.0.1:{_refused_port()}/"
    appended = run("crawl", "--append", str(archive), dead, "--silent", "--retry", "0",
                   cwd=tmp_path)
    assert appended.returncode == 1
    assert appended.stderr.strip().splitlines()[-1].startswith(
        "Error: append failed, the archive was restored as it was: network (crawl phase): "
        f"every new root failed to fetch: {dead} (")
    assert _sha256(archive) == before
    assert not list(tmp_path.glob("*.bak*")) and not list(tmp_path.glob("*.lock"))


def test_an_append_with_one_reachable_new_root_keeps_its_progress(site: FixtureSite,
                                                                 tmp_path: Path) -> None:
    assert run("crawl", site.url("/scope/blog/"), "-o", "blog", "--silent",
               cwd=tmp_path).returncode == 0
    archive = tmp_path / "blog.nitpicker"
    dead = f"http://127.0.0.1:{_refused_port()}/"
    appended = run("crawl", "--append", str(archive), dead, site.url("/scope/docs/"), "--silent",
                   "--retry", "0", cwd=tmp_path)
    assert appended.returncode == 1  # an in-scope fetch error, not a failed run
    assert "append failed" not in appended.stderr
    roots = rows(archive, "SELECT roots FROM info")[0][0]
    assert dead in roots and site.url("/scope/docs/") in roots
    assert rows(archive, "SELECT status FROM runs ORDER BY id DESC LIMIT 1") == [("finished",)]


def test_a_stopped_append_keeps_its_progress_and_resumes(tmp_path: Path) -> None:
    """SIGTERM (or Ctrl-C) stops an append as it stops any crawl: resumable, not undone."""
    import signal
    import time

    from fixtures.site import FixtureSite

    with FixtureSite() as site:
        assert run("crawl", site.url("/scope/blog/"), "-o", "blog", "--silent",
                   cwd=tmp_path).returncode == 0
        archive = tmp_path / "blog.nitpicker"
        appending = subprocess.Popen(
            [sys.executable, "-m", "nitpicker.cli", "crawl", "--append", str(archive),
             site.url("/wide/"), "--no-render", "-I", "1000", "--silent"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not any(target.startswith("/wide/p/") for _, _, target in site.request_log):
            assert appending.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        appending.send_signal(signal.SIGTERM)
        _, stderr = appending.communicate(timeout=60)
        assert appending.returncode == 0, stderr
        assert "append failed" not in stderr
        assert site.url("/wide/") in rows(archive, "SELECT roots FROM info")[0][0]
        assert rows(archive, "SELECT kind, status, error_code FROM runs ORDER BY id DESC"
                             " LIMIT 1") == [("append", "stopped", "killed")]
        assert not list(tmp_path.glob("*.bak*")) and not list(tmp_path.glob("*.lock"))
        resumed = run("crawl", "--resume", str(archive), "--silent", cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
    assert rows(archive, "SELECT count(*) FROM pages WHERE url LIKE ? AND status = 200",
                site.url("/wide/p/%"))[0][0] == 120
