"""``--fail-on`` that names no gate (``nitpicker/cli/gate.py``): ``''`` or ``','`` is an error
line, never a gate that silently checks nothing (``diff``, ``crawl --baseline``,
``pipeline --baseline``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import ChangesCrawls, run

_MESSAGE = ("Error: Invalid --fail-on: {value!r}. Name at least one of: broken-links, 4xx, "
            "5xx, issues:PRIORITY, violations:SEVERITY, check:ID, new-broken-links, new-4xx, "
            "new-5xx, removed-pages, new-violations:SEVERITY")


@pytest.mark.parametrize("value", ["", ",", " , ,"])
@pytest.mark.parametrize("command", [
    ("diff", "old.nitpicker", "new.nitpicker", "-o", "report.txt"),
    ("crawl", "http://127.0.0.1:9/", "-o", "crawled", "--baseline", "old.nitpicker"),
    ("pipeline", "http://127.0.0.1:9/", "--archive", "crawled", "--baseline", "old.nitpicker"),
])
def test_a_fail_on_naming_no_gate_is_refused(changes_crawls: ChangesCrawls, tmp_path: Path,
                                             command: tuple[str, ...], value: str) -> None:
    for name in ("old", "new"):
        shutil.copyfile(changes_crawls.dir / f"{name}.nitpicker", tmp_path / f"{name}.nitpicker")
    done = run(*command, "--fail-on", value, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [_MESSAGE.format(value=value)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.nitpicker", "old.nitpicker"]


def test_a_gate_beside_empty_names_still_counts(changes_crawls: ChangesCrawls) -> None:
    done = run("diff", "old.nitpicker", "new.nitpicker", "--fail-on", ",removed-pages,",
               cwd=changes_crawls.dir)
    assert done.returncode == 3
    assert done.stderr.startswith("Gate tripped: removed-pages: ")
