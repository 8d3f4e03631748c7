"""The content checks through the command line (issue 30, items 1–3): ``/content-checks/``
(``fixtures/content_checks.py``) crawled as rendered by Chromium and as served, each check
finding exactly the pages made to trip it (``nitpicker query FILE issue --id ID``), none of
the pages made not to."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixtures.content_checks import EXPECTED, EXPECTED_UNRENDERED, PAGES, PREFIX
from nitpicker.render.chromium import find_chromium
from tests.helpers import cli as nitpicker
from tests.helpers import crawled
from tests.viewer_process import Viewer

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

PROBES_ON = {"NITPICKER_SOFT404_PROBES": "50"}
"""The soft-404 probes, off in the other tests' crawls (``tests.helpers.PROBES_OFF``)."""


def _crawl(output: Path, *args: str) -> Path:
    return crawled(output, *args, env=PROBES_ON)


@pytest.fixture(scope="module")
def rendered(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if find_chromium() is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not installed (make test installs it; CI requires it)")
    return _crawl(tmp_path_factory.mktemp("rendered") / "rendered.nitpicker",
                  site.url(PREFIX))


@pytest.fixture(scope="module")
def served(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _crawl(tmp_path_factory.mktemp("served") / "served.nitpicker", site.url(PREFIX),
                  "--no-render")


def _issue(archive: Path, check_id: str) -> list[dict[str, Any]]:
    result = nitpicker("query", str(archive), "issue", "--id", check_id)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout)["items"])


def _paths(archive: Path, site: FixtureSite, check_id: str) -> list[str]:
    base = site.url(PREFIX)
    return sorted(item["url"].removeprefix(base) for item in _issue(archive, check_id))


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_check_finds_exactly_the_pages_made_to_trip_it(
        rendered: Path, site: FixtureSite, check_id: str) -> None:
    assert _paths(rendered, site, check_id) == EXPECTED[check_id]


@pytest.mark.parametrize("check_id", sorted(EXPECTED_UNRENDERED))
def test_as_served_each_check_finds_its_pages(served: Path, site: FixtureSite,
                                              check_id: str) -> None:
    """Without the browser the script's id is not there: ``js-section``'s link is broken."""
    assert _paths(served, site, check_id) == EXPECTED_UNRENDERED[check_id]


def test_the_clean_pages_trip_none(rendered: Path, site: FixtureSite) -> None:
    tripped = {path for check_id in EXPECTED for path in _paths(rendered, site, check_id)}
    clean = {"", "sections", "good-fragments", "js-section", "soft404/", "soft404/about"}
    assert clean <= set(PAGES)
    assert not clean & tripped


def test_a_fragment_finding_says_whether_the_page_or_the_section_is_missing(
        rendered: Path, site: FixtureSite) -> None:
    found = {item["url"].removeprefix(site.url(PREFIX)): item
             for item in _issue(rendered, "links/broken-fragment")}
    sections, missing = site.url(PREFIX + "sections"), site.url(PREFIX + "missing")
    assert (found["bad-fragment"]["element"], found["bad-fragment"]["message"]) == (
        f"{sections}#gone", f'No element on {sections} has the id (or <a name>) "gone"')
    assert (found["missing-page-fragment"]["element"],
            found["missing-page-fragment"]["message"]) == (
        f"{missing}#intro",
        f"The page is missing: {missing} answers 404, so its #intro cannot be reached")


def test_the_fragment_targets_are_recorded_as_the_page_was_read(
        rendered: Path, served: Path, site: FixtureSite) -> None:
    """The rendered page has the script's id, the served one not; both the others."""
    sql = ("SELECT i.name FROM page_fragment_ids i JOIN pages p ON p.id = i.page_id"
           " WHERE p.url = ? ORDER BY i.name")
    names = {}
    for archive in (rendered, served):
        conn = sqlite3.connect(archive)
        names[archive] = [row[0] for row in conn.execute(sql, (site.url(PREFIX + "sections"),))]
        conn.close()
    assert names[rendered] == ["app", "intro", "legacy", "made-by-script"]
    assert names[served] == ["app", "intro", "legacy"]


def test_the_clean_pages_trip_none_as_served(served: Path, site: FixtureSite) -> None:
    """Among them: a page half like the near duplicates, two pages too short to be compared
    with the same five words, an article of its own in the frame all pages share."""
    tripped = {path for check_id in EXPECTED_UNRENDERED
               for path in _paths(served, site, check_id)}
    clean = {"", "sections", "good-fragments", "half-alike", "own-words", "short-1", "short-2",
             "soft404/", "soft404/about"}
    assert clean <= set(PAGES)
    assert not clean & tripped


def test_a_duplicate_finding_names_the_other_page(served: Path, site: FixtureSite) -> None:
    found = {item["url"].removeprefix(site.url(PREFIX)): item["message"]
             for check_id in ("content/exact-duplicate", "content/near-duplicate")
             for item in _issue(served, check_id)}
    assert found["same-2"] == f"The same main content as 1 other page: {site.url(PREFIX)}same-1"
    assert found["near-a"] == ("One of 3 pages whose main contents are near duplicates: "
                               "the first of them")
    assert found["near-c"] == ("One of 3 pages whose main contents are near duplicates: "
                               f"95% like {site.url(PREFIX)}near-a")


def _check(archive: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    return nitpicker("check", str(archive), "--silent", *args, cwd=archive.parent, env=env)


def test_the_near_duplicate_threshold(served: Path, site: FixtureSite, tmp_path: Path) -> None:
    """``--near-duplicate-threshold 0.25``: the half-alike page joins the cluster; the
    setting from the environment does the same; bad values are one line."""
    copy = tmp_path / "copy.nitpicker"
    copy.write_bytes(served.read_bytes())
    near = ["half-alike", "near-a", "near-b", "near-c"]
    for args, env in ((("--near-duplicate-threshold", "0.25"), None),
                      ((), {"NITPICKER_NEAR_DUPLICATE_THRESHOLD": "0.25"})):
        result = _check(copy, *args, env=env)
        assert result.returncode == 0, result.stderr
        assert _paths(copy, site, "content/near-duplicate") == near
    for args, env, message in (
            (("--near-duplicate-threshold", "0"), None,
             "Error: --near-duplicate-threshold must be above 0 and at most 1, got 0.0"),
            ((), {"NITPICKER_NEAR_DUPLICATE_THRESHOLD": "high"},
             "Error: NITPICKER_NEAR_DUPLICATE_THRESHOLD must be a number, got 'high'")):
        result = _check(copy, *args, env=env)
        assert (result.returncode, result.stderr.strip()) == (1, message)


def test_the_crawl_takes_the_threshold_setting(site: FixtureSite, tmp_path: Path) -> None:
    """As any setting, from the environment; a bad one stops the crawl in one line."""
    result = nitpicker("crawl", site.url(PREFIX), "--no-render", "--silent", "-o",
                       str(tmp_path / "low"), env={"NITPICKER_NEAR_DUPLICATE_THRESHOLD": "0.25"})
    assert result.returncode == 0, result.stderr
    assert _paths(tmp_path / "low.nitpicker", site, "content/near-duplicate") == [
        "half-alike", "near-a", "near-b", "near-c"]
    result = nitpicker("crawl", site.url(PREFIX), "--no-render", "--silent", "-o",
                       str(tmp_path / "bad"), env={"NITPICKER_NEAR_DUPLICATE_THRESHOLD": "2"})
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: NITPICKER_NEAR_DUPLICATE_THRESHOLD must be above 0 and at most 1, got 2.0")


def test_without_content_facts_nothing_is_judged(site: FixtureSite, tmp_path: Path) -> None:
    """``NITPICKER_CONTENT_FACTS=false``: no ids, no signatures, so no content finding but
    the missing page's (a 404 needs no ids) and the title's."""
    result = nitpicker("crawl", site.url(PREFIX), "--no-render", "--silent", "-o",
                       str(tmp_path / "off"), env={"NITPICKER_CONTENT_FACTS": "false"})
    assert result.returncode == 0, result.stderr
    found = {check_id: _paths(tmp_path / "off.nitpicker", site, check_id)
             for check_id in EXPECTED}
    assert found == {**{check_id: [] for check_id in EXPECTED},
                     "links/broken-fragment": ["missing-page-fragment"],
                     "content/not-found-title": ["soft404/gone"]}


def test_query_content_clusters(served: Path, site: FixtureSite) -> None:
    """``nitpicker query FILE content-clusters`` and ``content-cluster-pages``; a bad kind is
    one line."""
    base = site.url(PREFIX)
    result = nitpicker("query", str(served), "content-clusters")
    assert result.returncode == 0, result.stderr
    clusters = json.loads(result.stdout)
    assert [(c["kind"], c["count"], c["first_page"].removeprefix(base),
             [url.removeprefix(base) for url in c["sample_pages"]])
            for c in clusters["items"]] == [
        ("near", 3, "near-a", ["near-a", "near-b", "near-c"]),
        ("exact", 2, "same-1", ["same-1", "same-2"])]
    exact = clusters["items"][1]
    result = nitpicker("query", str(served), "content-cluster-pages", "--kind", "exact",
                       "--cluster", str(exact["id"]))
    assert result.returncode == 0, result.stderr
    assert [page["url"].removeprefix(base) for page in json.loads(result.stdout)["items"]] == [
        "same-1", "same-2"]
    result = nitpicker("query", str(served), "content-clusters", "--kind", "similar")
    assert (result.returncode, result.stderr.strip()) == (
        1, "Error: Invalid kind: 'similar'. Must be one of: exact, near")


def test_the_viewer_shows_the_content_clusters(served: Path, site: FixtureSite) -> None:
    """The Content Clusters view and its drill-down, as JSON and HTML."""
    server = Viewer(str(served))
    try:
        listed = server.get("/a/0/content-clusters?format=json").json()["clusters"]
        assert [(c["kind"], c["count"]) for c in listed["items"]] == [("near", 3), ("exact", 2)]
        near = listed["items"][0]
        page = server.get(f"/a/0/content-cluster?kind=near&id={near['id']}")
        assert page.status_code == 200
        for name in ("near-a", "near-b", "near-c"):
            assert f"{site.url(PREFIX)}{name}" in page.text
        assert server.get("/a/0/content-clusters?kind=exact&format=json").json()[
            "clusters"]["total"] == 1
        assert server.get("/a/0/content-cluster?kind=near&id=999999").status_code == 404
        assert "Content Clusters" in server.get("/a/0/").text
    finally:
        assert server.stop()[0] == 0


def test_the_probes_are_recorded_and_never_pages(served: Path, site: FixtureSite) -> None:
    """One probe a directory of pages: ``/content-checks/`` answers 404 (no soft 404),
    ``/content-checks/soft404/`` 200 with its catch-all page; neither is a page row, a
    frontier row or a link target. ``nitpicker query FILE probes`` lists them."""
    result = nitpicker("query", str(served), "probes")
    assert result.returncode == 0, result.stderr
    probes = {item["directory"].removeprefix(site.url(PREFIX)): item
              for item in json.loads(result.stdout)["items"]}
    assert sorted(probes) == ["", "soft404/"]
    assert (probes[""]["status"], probes[""]["soft_404"], probes[""]["pages_matched"]) == (
        404, False, 0)
    catch_all = probes["soft404/"]
    assert (catch_all["status"], catch_all["soft_404"], catch_all["title"],
            catch_all["pages_matched"]) == (200, True, "Sorry | content checks", 1)
    assert catch_all["url"].startswith(site.url(PREFIX + "soft404/nitpicker-probe-"))
    conn = sqlite3.connect(served)
    try:
        for table, column in (("pages", "url"), ("frontier", "url")):
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE {column} LIKE ?",
                                ("%nitpicker-probe-%",)).fetchone()[0] == 0
    finally:
        conn.close()


def test_without_probes_no_soft_404(site: FixtureSite, tmp_path: Path) -> None:
    """``NITPICKER_SOFT404_PROBES=0``: no probe, so no soft 404; the title check stands."""
    result = nitpicker("crawl", site.url(PREFIX), "--no-render", "--silent", "-o",
                       str(tmp_path / "none"), env={"NITPICKER_SOFT404_PROBES": "0"})
    assert result.returncode == 0, result.stderr
    archive = tmp_path / "none.nitpicker"
    assert _paths(archive, site, "content/soft-404") == []
    assert _paths(archive, site, "content/not-found-title") == ["soft404/gone"]
    assert json.loads(nitpicker("query", str(archive), "probes").stdout)["total"] == 0


def test_split_and_concat_keep_the_content_facts(served: Path, site: FixtureSite,
                                                 tmp_path: Path) -> None:
    """``split`` to ``soft404/``: its probe, its pages' findings, not the other directory's
    probe; ``concat`` of the whole with a copy: the same findings after ``check``."""
    result = nitpicker("split", str(served), site.url(PREFIX + "soft404/"), "-o",
                       str(tmp_path / "part"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    part = tmp_path / "part.nitpicker"
    assert nitpicker("check", str(part), "--silent").returncode == 0
    probes = json.loads(nitpicker("query", str(part), "probes").stdout)["items"]
    assert [probe["directory"] for probe in probes] == [site.url(PREFIX + "soft404/")]
    assert _paths(part, site, "content/soft-404") == ["soft404/old-product"]
    copy = tmp_path / "copy.nitpicker"
    copy.write_bytes(served.read_bytes())
    result = nitpicker("concat", str(served), str(copy), "-o", str(tmp_path / "both"),
                       cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    both = tmp_path / "both.nitpicker"
    assert nitpicker("check", str(both), "--silent").returncode == 0
    for check_id in EXPECTED_UNRENDERED:
        assert _paths(both, site, check_id) == EXPECTED_UNRENDERED[check_id], check_id
