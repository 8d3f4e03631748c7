"""What the commands that write a file give it (``nitpicker/cli/output.py``): the mode a plain
``open()`` would (0666 less the umask, not ``tempfile``'s 0600), and ``pipeline`` refusing a
report path that is its own archive before anything runs."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import ROOT, ChangesCrawls, run


def _run_with_umask(umask: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120, check=False,
                          preexec_fn=lambda: os.umask(umask))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def archives(changes_crawls: ChangesCrawls, tmp_path: Path) -> Path:
    for name in ("old", "new"):
        shutil.copyfile(changes_crawls.dir / f"{name}.nitpicker", tmp_path / f"{name}.nitpicker")
    return tmp_path


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
@pytest.mark.parametrize("format_", ["text", "json", "html"])
def test_diff_output_gets_the_mode_of_a_new_file(archives: Path, umask: int, mode: int,
                                                 format_: str) -> None:
    done = _run_with_umask(umask, "diff", "old.nitpicker", "new.nitpicker", "-f", format_,
                           "-o", "report.out", cwd=archives)
    assert done.returncode == 0, done.stderr
    assert _mode(archives / "report.out") == mode


def test_diff_output_replacing_a_file_keeps_its_mode(archives: Path) -> None:
    report = archives / "report.txt"
    report.write_text("before")
    report.chmod(0o600)
    done = _run_with_umask(0o022, "diff", "old.nitpicker", "new.nitpicker", "-o", "report.txt",
                           cwd=archives)
    assert done.returncode == 0, done.stderr
    assert report.read_text().startswith("OLD ") and _mode(report) == 0o600


def test_diff_output_to_a_named_pipe_is_written_in_place(archives: Path) -> None:
    """``-o /dev/null`` or a named pipe: written to, never replaced by a plain file (as root,
    replacing ``/dev/null`` would break every program on the machine)."""
    pipe = archives / "report.pipe"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()
    done = _run_with_umask(0o022, "diff", "old.nitpicker", "new.nitpicker", "-o", "report.pipe",
                           cwd=archives)
    reader.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(pipe.stat().st_mode), "the pipe is still a pipe"
    assert read and read[0].startswith(b"OLD ")


def test_crawl_diff_lists_get_the_mode_of_a_new_file(archives: Path) -> None:
    done = _run_with_umask(0o022, "crawl", "--diff", "old.nitpicker", "new.nitpicker",
                           cwd=archives)
    assert done.returncode == 0, done.stderr
    assert [_mode(archives / name) for name in ("a.txt", "b.txt")] == [0o644, 0o644]


@pytest.mark.parametrize(("archive", "output", "shown"), [
    ("site", "site.nitpicker", "site.nitpicker"),
    ("site.nitpicker", "./site.nitpicker", "site.nitpicker"),
    ("sub/site", "sub/../sub/site.nitpicker", "sub/../sub/site.nitpicker"),
    ("site", "site.nitpicker-wal", "site.nitpicker-wal"),
])
def test_pipeline_refuses_a_report_path_that_is_its_archive_before_crawling(
        tmp_path: Path, archive: str, output: str, shown: str) -> None:
    (tmp_path / "sub").mkdir()
    done = run("pipeline", "http://127.0.0.1:9/", "--archive", archive, "-o", output,
               "--format", "xlsx", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        (f"Error: -o is the archive this pipeline writes: {shown} (the report needs another "
        "path, or the archive another --archive)")]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub"]
