"""Files of URLs read within bounds (``nitpicker/url_file.py``): ``--list-file``,
``--inventory`` and ``query … match-urls --urls`` share one reader, and ``/dev/zero`` or an
endless pipe is one ``Error:`` line naming the file and the limit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nitpicker import url_file
from nitpicker.url_file import MAX_LINE_BYTES, UrlFileError, read_lines, read_url_lines
from tests.helpers import ROOT, run

_LONG_LINE = ("longer than 16,384 bytes (the longest line a URL file may have)")


# -- the reader -------------------------------------------------------------------------------


def _lines(tmp_path: Path, data: bytes) -> list[tuple[int, str]]:
    path = tmp_path / "urls.txt"
    path.write_bytes(data)
    return list(read_lines(path, "list file"))


@pytest.mark.parametrize(("data", "lines"), [
    (b"a\nb\n", [(1, "a"), (2, "b")]),
    (b"a\nb", [(1, "a"), (2, "b")]),
    (b"a\r\nb\r\n", [(1, "a"), (2, "b")]),
    (b"\n\na\n\n", [(3, "a")]),
    (b"\xef\xbb\xbfa\nb", [(1, "a"), (2, "b")]),
    (b"", []),
    ("ü\n".encode(), [(1, "ü")]),
])
def test_lines(tmp_path: Path, data: bytes, lines: list[tuple[int, str]]) -> None:
    assert _lines(tmp_path, data) == lines


def test_lines_across_blocks(tmp_path: Path) -> None:
    """Lines that straddle the reader's blocks come out whole, in order."""
    urls = [f"http://example.com/{'x' * (i % 5000)}" for i in range(400)]
    assert _lines(tmp_path, "\n".join(urls).encode()) == list(enumerate(urls, start=1))


def test_the_longest_line_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    longest = "a" * MAX_LINE_BYTES
    assert _lines(tmp_path, f"x\n{longest}\r\ny".encode()) == [(1, "x"), (2, longest), (3, "y")]
    with pytest.raises(UrlFileError, match=re.escape(f"urls.txt, line 2: {_LONG_LINE}")):
        _lines(tmp_path, f"x\n{longest}a\ny".encode())
    with pytest.raises(UrlFileError, match=re.escape(f"urls.txt, line 1: {_LONG_LINE}")):
        _lines(tmp_path, f"{longest}ab".encode())


def test_not_utf8_names_the_byte_and_its_offset(tmp_path: Path) -> None:
    with pytest.raises(UrlFileError, match=r"List file is not UTF-8 text: .*urls.txt "
                                           r"\(byte 0xe9 at offset 12\)"):
        _lines(tmp_path, b"http://a\ncaf\xe9\n")


def test_a_file_past_the_largest_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.setattr(url_file, "MAX_FILE_BYTES", 1000)
    assert len(_lines(tmp_path, b"a\n" * 500)) == 500
    with pytest.raises(UrlFileError, match=r"urls.txt: larger than 1,000 bytes \(the most a "
                                           "URL file may hold"):
        _lines(tmp_path, b"a\n" * 500 + b"b")


def test_comments_and_blanks_are_no_entries(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text("# header\n\n  http://a/  # note\n#\nhttp://b/\n")
    assert read_url_lines(path, "list file") == [(3, "http://a/"), (5, "http://b/")]
    path.write_text("# nothing\n\n")
    with pytest.raises(UrlFileError, match="No URLs found in list file: "):
        read_url_lines(path, "list file")


# -- through the commands ---------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (("crawl", "--list-file", "/dev/zero"), f"Error: List file /dev/zero, line 1: {_LONG_LINE}"),
    (("crawl", "http://127.0.0.1:9/", "--inventory", "/dev/zero"),
     f"Error: Inventory file /dev/zero, line 1: {_LONG_LINE}"),
    (("crawl", "--list-file", "long.txt"), f"Error: List file long.txt, line 2: {_LONG_LINE}"),
    (("crawl", "http://127.0.0.1:9/", "--inventory", "long.txt"),
     "Error: Inventory file {dir}/long.txt, line 2: " + _LONG_LINE),
])
def test_an_endless_or_overlong_file_is_one_line(tmp_path: Path, args: tuple[str, ...],
                                                 message: str) -> None:
    (tmp_path / "long.txt").write_text("http://127.0.0.1:9/\nhttp://127.0.0.1:9/"
                                       + "a" * MAX_LINE_BYTES + "\n")
    done = run(*args, cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message.replace("{dir}", str(tmp_path))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.txt"]


def test_an_endless_pipe_stops_at_the_largest_file(tmp_path: Path) -> None:
    endless = subprocess.Popen(["yes", "http://127.0.0.1:9/"], stdout=subprocess.PIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "nitpicker.cli", "crawl", "--list-file", "/dev/stdin",
             "--no-render"], stdin=endless.stdout, cwd=tmp_path, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    finally:
        endless.kill()
        endless.wait()
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: List file /dev/stdin: larger than 67,108,864 bytes (the most a URL file may hold)"]
    assert not list(tmp_path.iterdir())
