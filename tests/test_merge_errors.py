"""``nitpicker merge``'s bad input and failures (``nitpicker/cli/merge.py``,
``nitpicker/archive/merge.py``): each one ``Error:`` line, exit 1, nothing half-written left
behind; ``-o DIR`` writes into the directory."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.helpers import ROOT, ChangesCrawls, run


@pytest.fixture
def shard(changes_crawls: ChangesCrawls, tmp_path: Path) -> Path:
    copy = tmp_path / "shard.nitpicker"
    shutil.copyfile(changes_crawls.old, copy)
    return copy


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*"))


@pytest.mark.parametrize("output", ["absent/merged", "absent/", "absent/deeper/merged"])
def test_a_missing_output_directory_is_one_line(shard: Path, output: str) -> None:
    done = run("merge", shard.name, "-o", output, cwd=shard.parent)
    missing = str(Path(output).parent) if not output.endswith("/") else output.rstrip("/")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        (f"Error: Output directory does not exist: {missing}. Please create the directory "
        "before running the command.")]
    assert _files(shard.parent) == ["shard.nitpicker"]


def test_an_existing_directory_gets_the_archive_inside(shard: Path,
                                                       changes_crawls: ChangesCrawls) -> None:
    (shard.parent / "merged").mkdir()
    done = run("merge", shard.name, "-o", "merged", cwd=shard.parent)
    assert done.returncode == 0, done.stderr
    inside = list((shard.parent / "merged").iterdir())
    assert len(inside) == 1
    host = changes_crawls.base.split("://", 1)[1].split(":", 1)[0].split("/", 1)[0]
    assert re.fullmatch(rf"{re.escape(host)}-\d{{17}}\.nitpicker", inside[0].name), inside
    assert done.stderr.startswith(f"{Path('merged') / inside[0].name}: 1 shard(s), ")
    assert sorted(p.name for p in shard.parent.iterdir()) == ["merged", "shard.nitpicker"]
    with closing(sqlite3.connect(inside[0])) as conn:
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] > 0


@pytest.mark.parametrize(("column", "value", "message"), [
    ("config", "{not json", "its stored crawl information is not JSON (Expecting property name"),
    ("config", "5", ("its stored crawl information is not a crawl's (the config must be a JSON "
                    "object, the roots a JSON array)")),
    ("roots", '{"a": 1}', "its stored crawl information is not a crawl's"),
    ("roots", "[" * 100_000, "its stored crawl information is not JSON ("),
])
def test_a_shard_whose_stored_config_is_not_json_is_one_line(shard: Path, column: str,
                                                            value: str, message: str) -> None:
    with closing(sqlite3.connect(shard)) as conn:
        conn.execute(f"UPDATE info SET {column} = ?", (value,))
        conn.commit()
    done = run("merge", shard.name, "-o", "merged", cwd=shard.parent)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {shard.name}: {message}"), line
    assert _files(shard.parent) == ["shard.nitpicker"]


def _small_disk() -> None:
    """In the child: files may not grow past 64 KiB (a full disk, as SQLite sees it)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))


def test_a_full_disk_is_one_line_and_leaves_nothing(shard: Path) -> None:
    assert shard.stat().st_size > 65536, "the shard must not fit the small disk"
    done = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "merge", shard.name, "-o", "merged"],
        cwd=shard.parent, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=120, check=False, preexec_fn=_small_disk)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: Cannot write the merged archive merged.nitpicker: disk I/O error"]
    assert _files(shard.parent) == ["shard.nitpicker"]
