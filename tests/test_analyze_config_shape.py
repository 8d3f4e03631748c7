"""A config file of the wrong shape (``nitpicker/analyze/config.py``): ``tool = 5`` in
``pyproject.toml``, or tables and arrays nested past what the parsers recurse through, is one
``Error:`` line naming the file, before anything is written (``analyze`` and ``pipeline``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nitpicker.analyze.config import MAX_DEPTH
from tests.helpers import ChangesCrawls, run_with_probe

_TOO_DEEP = (f"nested too deeply to read (at most {MAX_DEPTH} levels of tables and arrays)")


def _nested(depth: int, fmt: str) -> str:
    """``plugins.analyze.diff-probe.x`` holding ``depth`` nested arrays, as TOML or JSON."""
    arrays = "[" * depth + "]" * depth
    if fmt == "toml":
        return f'[plugins.analyze.diff-probe]\nx = {arrays}\n'
    return '{"plugins": {"analyze": {"diff-probe": {"x": ' + arrays + "}}}}"


@pytest.mark.parametrize(("name", "text", "message"), [
    ("pyproject.toml", "tool = 5\n", "{file}:1: tool must be a table (an object), not 5"),
    ("pyproject.toml", 'tool = "x"\n', "{file}:1: tool must be a table (an object), not \"x\""),
    ("pyproject.toml", "[tool]\nnitpicker = 5\n",
     "{file}:2: the config must be a table (an object)"),
    ("nitpicker.toml", "x = " + "[" * 100_000 + "\n", "{file}: " + _TOO_DEEP),
    ("pyproject.toml", "[tool.nitpicker]\nx = " + "[" * 100_000 + "\n", "{file}: " + _TOO_DEEP),
    (".nitpickerrc", '{"plugins": ' + "[" * 100_000, "{file}: " + _TOO_DEEP),
    ("package.json", '{"nitpicker": ' + '{"a": ' * 100_000, "{file}: " + _TOO_DEEP),
    ("nitpicker.toml", _nested(MAX_DEPTH, "toml"), "{file}: " + _TOO_DEEP),
    (".nitpickerrc.json", _nested(MAX_DEPTH, "json"), "{file}: " + _TOO_DEEP),
])
@pytest.mark.parametrize("command", ["analyze", "pipeline"])
def test_a_config_of_the_wrong_shape_is_one_line(changes_crawls: ChangesCrawls, tmp_path: Path,
                                                 command: str, name: str, text: str,
                                                 message: str) -> None:
    shutil.copyfile(changes_crawls.old, tmp_path / "a.nitpicker")
    config = tmp_path / name
    config.write_text(text, encoding="utf-8")
    args = (("analyze", "a.nitpicker") if command == "analyze"
            else ("pipeline", "http://127.0.0.1:9/", "--archive", "b"))
    done = run_with_probe(*args, "--plugin", "diff-probe", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: {message.format(file=config)}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.nitpicker", name])


def test_settings_nested_up_to_the_limit_are_read(changes_crawls: ChangesCrawls,
                                                  tmp_path: Path) -> None:
    shutil.copyfile(changes_crawls.old, tmp_path / "a.nitpicker")
    (tmp_path / "nitpicker.toml").write_text(_nested(MAX_DEPTH - 4, "toml"), encoding="utf-8")
    done = run_with_probe("analyze", "a.nitpicker", "--plugin", "diff-probe", "--silent",
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
