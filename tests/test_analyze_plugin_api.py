"""The manual's example plugin (``docs/guide/analyze.md``), installed with pip as a third
party's, run by ``nitpicker analyze`` on a real crawl of the fixture site's ``/contents/``
pages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest_twisted

from tests.helpers import ROOT, crawl

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

EXAMPLE = ROOT / "fixtures" / "plugin_example"
GUIDE = (ROOT / "docs" / "guide" / "analyze.md").read_text()


def test_the_guide_shows_the_example_as_it_is() -> None:
    for name in ("nitpicker_title_length.py", "pyproject.toml"):
        code = (EXAMPLE / name).read_text()
        assert code in GUIDE, f"{name} differs from the guide's copy"
    lines = (EXAMPLE / "nitpicker_title_length.py").read_text().splitlines()
    assert len(lines) <= 35


@pytest_twisted.async_fixture
async def crawled(site: FixtureSite, tmp_path: Path) -> Path:
    archive = await crawl(tmp_path, [site.url("/contents/")])
    archive.conn.close()
    return archive.path


def test_a_pip_installed_plugin_runs(crawled: Path, site: FixtureSite, tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(EXAMPLE, source)  # pip builds in the source tree: not in the repository's
    target = tmp_path / "installed"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(source)], capture_output=True, text=True, check=False)
    assert pip.returncode == 0, pip.stderr
    assert (target / "nitpicker_title_length.py").is_file()
    work = tmp_path / "work"
    work.mkdir()
    (work / "nitpicker.toml").write_text('[plugins.analyze.title-length]\nmax = 8\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(target)])}

    def nitpicker(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=work, env=env,
                              capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL)

    done = nitpicker("analyze", str(crawled))
    assert done.returncode == 0, done.stderr
    assert "title-length: 5 pages, 3 violations, 5 values, 0 errors" in done.stderr
    values = json.loads(nitpicker("query", str(crawled), "page-values", "--plugin",
                                  "title-length").stdout)
    assert values["headers"] == {"length": "Title length"}
    assert {item["url"].removeprefix(site.base_url): item["values"]["length"]
            for item in values["items"]} == {
        "/contents/": {"value": 12, "note": "Contents Top"},
        "/contents/keywords": {"value": 8, "note": "Keywords"},
        "/contents/no-main": {"value": 7, "note": "No Main"},
        "/contents/role-main": {"value": 9, "note": "Role Main"},
        "/contents/with-main": {"value": 9, "note": "With Main"},
    }
    violations = json.loads(nitpicker("query", str(crawled), "violations", "--validator",
                                      "title-length").stdout)
    assert [(item["url"].removeprefix(site.base_url), item["code"])
            for item in violations["items"]] == [
        ("/contents/", "Contents Top"), ("/contents/role-main", "Role Main"),
        ("/contents/with-main", "With Main")]
    assert violations["items"][0]["message"] == "Title longer than 8 characters"


BUNDLED_LABELS = {
    "axe": "axe: accessibility check",
    "lighthouse": "Lighthouse: performance audit",
    "main-contents": "Main content",
    "markuplint": "markuplint: HTML markup validation",
    "search": "Keyword search",
    "textlint": "textlint: text proofreading",
}


def test_the_bundled_plugins_labels_are_english() -> None:
    """Issue 26: labels in English throughout; the choice and the progress line show them."""
    from nitpicker.analyze.discovery import discover, load_plugin

    points = discover()
    labels = {name: str(load_plugin(points[name], {}).label) for name in BUNDLED_LABELS}
    assert labels == BUNDLED_LABELS
    assert all(label.isascii() for label in labels.values())
