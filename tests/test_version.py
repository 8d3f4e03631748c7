"""``nitpicker --version`` and ``nitpicker -v`` (``nitpicker/cli/__init__.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nitpicker import __version__
from tests.helpers import run


@pytest.mark.parametrize("args", [("-v",), ("--version",), ("-v", "crawl"),
                                  ("--version", "query", "x.nitpicker", "summary")])
def test_the_version_is_printed(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = run(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"nitpicker {__version__}\n", "")


def test_the_help_lists_both_spellings(tmp_path: Path) -> None:
    done = run("--help", cwd=tmp_path)
    assert done.returncode == 0 and "--version" in done.stdout and "-v " in done.stdout
