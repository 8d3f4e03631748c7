"""The archive lock's holder (``nitpicker/archive/lock.py``): a lock naming no process is
stale for every command that checks it, and a command refused by a live lock names what holds
it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from nitpicker.archive.analysis_store import AnalysisStore
from nitpicker.archive.lock import PID_MAX, ArchiveLock, LockHolder, pid_alive, valid_pid
from tests.helpers import ChangesCrawls, run, run_with_probe

_NO_PROCESS = ["99999999999999999999999", "-1"]
"""Lock contents that name no process: past any PID (``os.kill`` overflows), and -1 (which
``os.kill`` reads as every process)."""

_COMMANDS = {
    "analyze": ("analyze", "a.nitpicker", "--plugin", "diff-probe", "--silent"),
    "report": ("report", "a.nitpicker", "--format", "csv", "-o", "out", "--silent"),
    "diff": ("diff", "b.nitpicker", "a.nitpicker"),
    "resume": ("crawl", "--resume", "a.nitpicker", "--silent"),
    "merge": ("merge", "a.nitpicker", "-o", "merged"),
}


@pytest.fixture
def archives(changes_crawls: ChangesCrawls, tmp_path: Path) -> Path:
    shutil.copyfile(changes_crawls.old, tmp_path / "a.nitpicker")
    shutil.copyfile(changes_crawls.new, tmp_path / "b.nitpicker")
    return tmp_path


@pytest.mark.parametrize("content", _NO_PROCESS)
@pytest.mark.parametrize("command", list(_COMMANDS))
def test_a_lock_naming_no_process_is_stale(archives: Path, command: str, content: str) -> None:
    lock = archives / "a.nitpicker.lock"
    lock.write_text(content + "\n")
    done = run_with_probe(*_COMMANDS[command], cwd=archives)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr
    if command in ("analyze", "resume"):  # the writers took the stale lock over and freed it
        assert not lock.exists()
    else:  # the readers leave it alone
        assert lock.read_text() == content + "\n"


@pytest.mark.parametrize(("written", "command", "refusal"), [
    ("analyze", ("report", "a.nitpicker", "--format", "csv", "-o", "out"),
     ("Error: Archive is being written by a running analysis (PID {pid}): a.nitpicker; wait "
     "for it to finish")),
    ("analyze", ("diff", "b.nitpicker", "a.nitpicker"),
     ("Error: a.nitpicker is being written by a running analysis (PID {pid}): compare it once "
     "that has ended")),
    ("crawl", ("diff", "b.nitpicker", "a.nitpicker"),
     ("Error: a.nitpicker is being written by a running crawl (PID {pid}): compare it once "
     "that has ended")),
    (None, ("report", "a.nitpicker", "--format", "csv", "-o", "out"),
     ("Error: Archive is being written by another process (PID {pid}): a.nitpicker; wait for "
     "it to finish")),
])
def test_a_refusal_names_the_command_holding_the_lock(
        archives: Path, written: str | None, command: tuple[str, ...], refusal: str) -> None:
    holder = subprocess.Popen(["sleep", "60"])
    try:
        lines = [str(holder.pid), *([written] if written else [])]
        (archives / "a.nitpicker.lock").write_text("\n".join(lines) + "\n")
        done = run(*command, cwd=archives)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1
    assert done.stderr.strip() == refusal.format(pid=holder.pid)
    assert not (archives / "out").exists()


def test_an_analysis_writes_its_command_into_the_lock(archives: Path) -> None:
    store = AnalysisStore.open(archives / "a.nitpicker")
    try:
        holder = ArchiveLock(archives / "a.nitpicker").live_holder_info()
        assert holder == LockHolder(os.getpid(), "analyze")
    finally:
        store.close()
    assert not (archives / "a.nitpicker.lock").exists()


@pytest.mark.parametrize(("text", "pid"), [
    ("123", 123),
    (" 123\n", 123),
    (str(PID_MAX), PID_MAX),
    (str(PID_MAX + 1), None),
    ("0", None),
    ("-1", None),
    ("+5", None),
    ("1_000", None),
    ("١٢٣", None),  # Arabic-Indic digits: int() reads them, no PID is written so
    ("9" * 5000, None),  # more digits than int() converts
    ("", None),
])
def test_valid_pid(text: str, pid: int | None) -> None:
    assert valid_pid(text) == pid


@pytest.mark.parametrize("pid", [0, -1, PID_MAX + 1, 10**30])
def test_no_process_has_a_pid_out_of_range(pid: int) -> None:
    assert not pid_alive(pid)


def test_an_older_lock_holds_only_the_pid(tmp_path: Path) -> None:
    lock = ArchiveLock(tmp_path / "a.nitpicker")
    lock.path.write_text(str(os.getpid()))
    assert lock.holder_info() == LockHolder(os.getpid(), None)
    assert lock.live_holder_info() is not None
    assert lock.live_holder_info().describe() == f"another process (PID {os.getpid()})"  # type: ignore[union-attr]
