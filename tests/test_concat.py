"""``nitpicker concat`` (nitpicker/archive/concat.py): the archives of different crawls into
one, through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.render.chromium import find_chromium
from tests.helpers import ROWS_BY_URL, ChangesCrawls, ScopeCrawls, rows, run, run_with_probe

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


def _concat(*archives: Path, cwd: Path, name: str = "joined") -> Path:
    done = run("concat", *map(str, archives), "-o", name, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd / f"{name}.nitpicker"


def test_two_sections_concatenated_are_the_crawl_of_both(scope_crawls: ScopeCrawls,
                                                         tmp_path: Path) -> None:
    """/scope/blog/ (which saw /scope/docs/ as an external link) and /scope/docs/ crawled
    apart, joined: the same pages, links, snapshots, analysis and URL order as one crawl of
    both roots. /scope/docs/ is the docs crawl's page, not the blog's external row."""
    joined = _concat(scope_crawls.blog, scope_crawls.docs, cwd=tmp_path)
    for table, sql in ROWS_BY_URL.items():
        if table != "frontier":  # the blog saw /scope/docs/ first, as a metadata-only link
            assert rows(joined, sql) == rows(scope_crawls.both, sql), table
    assert rows(joined, "SELECT url, is_external FROM pages WHERE url = ?",
                scope_crawls.docs_root) == [(scope_crawls.docs_root, 0)]
    assert rows(joined, "SELECT name, base_url, roots FROM info") == [
        ("joined", scope_crawls.blog_root,
         json.dumps([scope_crawls.blog_root, scope_crawls.docs_root]))]
    assert len(rows(joined, "SELECT 1 FROM runs")) == 2, "each archive's run"
    assert len(rows(joined, "SELECT 1 FROM analysis_runs")) == 2, "each archive's analysis"
    query = run("query", str(joined), "summary", cwd=tmp_path)
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["internal_pages"] == 5


def test_the_fuller_row_wins_in_any_order(scope_crawls: ScopeCrawls, tmp_path: Path) -> None:
    """The docs crawl is the older one here: its full page still wins over the blog crawl's
    newer metadata-only row of the same URL, whichever is given first."""
    forward = _concat(scope_crawls.blog, scope_crawls.docs, cwd=tmp_path, name="forward")
    backward = _concat(scope_crawls.docs, scope_crawls.blog, cwd=tmp_path, name="backward")
    for table in ("pages", "anchors", "snapshots", "page_values"):
        assert rows(forward, ROWS_BY_URL[table]) == rows(backward, ROWS_BY_URL[table]), table


def test_the_newer_crawl_wins_and_keeps_its_findings(analysed_changes: ChangesCrawls,
                                                     tmp_path: Path) -> None:
    """/changes/ crawled twice, the site changed between (a page retitled, one removed from
    the links, one added, a link target now 404, an image's alt dropped), each crawl analysed.
    Given in either order, every URL both crawls recorded is the newer crawl's row, with its
    links, values and violations; a page only the older crawl had is kept as it had it; the
    runs are in the order they ran."""
    base = analysed_changes.base
    for order in ((analysed_changes.new, analysed_changes.old),
                  (analysed_changes.old, analysed_changes.new)):
        name = f"joined-{order[0].stem}"
        done = run_with_probe("concat", *map(str, order), "-o", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().splitlines()[-1].endswith(
            "recorded by more than one (the fuller or newer kept)")
        joined = tmp_path / f"{name}.nitpicker"
        titles = dict(rows(joined, "SELECT url, title FROM pages WHERE is_external = 0"))
        assert titles[f"{base}/changes/retitled"] == "New Title"
        assert titles[f"{base}/changes/target"] == "Gone"
        assert titles[f"{base}/changes/removed"] == "Removed"  # only the old crawl had it
        assert titles[f"{base}/changes/added"] == "Added"
        assert rows(joined, ROWS_BY_URL["anchors"] + " WHERE p.url = ?", f"{base}/changes/") == (
            rows(analysed_changes.new, ROWS_BY_URL["anchors"] + " WHERE p.url = ?",
                 f"{base}/changes/"))
        values = dict(rows(joined, "SELECT p.url, v.value FROM page_values AS v JOIN pages AS p"
                                   " ON p.id = v.page_id WHERE v.plugin = 'diff-probe'"))
        assert values[f"{base}/changes/retitled"] == '"New Title"'
        assert values[f"{base}/changes/removed"] == '"Removed"'
        assert rows(joined, "SELECT p.url, v.rule FROM violations AS v JOIN pages AS p"
                            " ON p.id = v.page_id WHERE v.rule = 'img-alt'") == [
            (f"{base}/changes/stays", "img-alt")], "the newer crawl's finding, once"
        latest = run_with_probe("query", str(joined), "runs", cwd=tmp_path)
        assert latest.returncode == 0, latest.stderr
        started = [run["started_at"] for run in json.loads(latest.stdout)["items"]]
        assert started == sorted(started) and len(started) == 2, "in the order they ran"
        assert started[-1] == rows(analysed_changes.new, "SELECT started_at FROM runs")[-1][0]


def test_a_url_under_the_roots_seen_only_as_external_is_named(
        site: FixtureSite, scope_crawls: ScopeCrawls, tmp_path: Path) -> None:
    """/scope/ (a 404) joined with /scope/blog/: the blog saw /scope/docs/ as external, now
    under a root. It stays external, and the note's command fetches it in full."""
    done = run("crawl", site.url("/scope/"), "-o", "top", "--retry", "0", "--silent",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    joined = run("concat", str(scope_crawls.blog), "top.nitpicker", "-o", "joined", cwd=tmp_path)
    assert joined.returncode == 0, joined.stderr
    note = (f"Note: 1 URL(s) under the roots were recorded external (metadata only): "
            f"{scope_crawls.docs_root}; fetch them in full with: nitpicker crawl --append "
            f"joined.nitpicker {site.url('/scope/')}")
    assert joined.stderr.strip().splitlines()[0] == note
    appended = run("crawl", "--append", "joined.nitpicker", site.url("/scope/"), "--retry", "0",
                   "--silent", cwd=tmp_path)
    assert appended.returncode == 0, appended.stderr
    assert rows(tmp_path / "joined.nitpicker", "SELECT is_external, status FROM pages"
                " WHERE url = ?", site.url("/scope/docs/api")) == [(0, 200)]


@pytest.mark.parametrize(("given", "message"), [
    (["blog"], "concat needs at least two archives, got 1"),
    (["blog", "blog"], "archive given twice: {dir}/blog.nitpicker"),
    (["blog", "missing"], "Archive not found: {dir}/missing.nitpicker"),
    (["blog", "notes"], "Not a nitpicker archive: {dir}/notes.nitpicker"),
    (["blog", "list"], ("cannot concat a list-mode archive ({dir}/list.nitpicker: "
                        "--list/--list-file) with a crawl ({dir}/blog.nitpicker)")),
    (["queryless", "blog"], ("archives crawled with and without --disable-queries cannot be "
                             "concatenated: {dir}/queryless.nitpicker (with) and "
                             "{dir}/blog.nitpicker (without): their URLs are not keyed alike")),
    (["blog", "live"], ("{dir}/live.nitpicker: still being written (PID {pid}): wait for its "
                        "crawl to end")),
])
def test_what_cannot_be_concatenated_is_one_line(refused: Path, tmp_path: Path,
                                                 given: list[str], message: str) -> None:
    done = run("concat", *(str(refused / f"{name}.nitpicker") for name in given),
               "-o", str(tmp_path / "joined"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: " + message.format(dir=refused, pid=os.getpid())]
    assert list(tmp_path.iterdir()) == [], "nothing written, nothing left behind"


@pytest.fixture(scope="module")
def refused(site: FixtureSite, scope_crawls: ScopeCrawls,
            tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archives the refusals are made of: a crawl, a list-mode crawl, one with
    --disable-queries, a text file, one a live process is writing."""
    directory = tmp_path_factory.mktemp("concat-refused")
    shutil.copyfile(scope_crawls.blog, directory / "blog.nitpicker")
    (directory / "urls.txt").write_text(site.url("/scope/docs/") + "\n")
    for name, flags in (("list", ["--list-file", "urls.txt"]),
                        ("queryless", [site.url("/scope/docs/"), "--disable-queries"])):
        done = run("crawl", *flags, "-o", name, "--retry", "0", "--silent", cwd=directory)
        assert done.returncode == 0, done.stderr
    (directory / "notes.nitpicker").write_text("not an archive")
    shutil.copyfile(scope_crawls.docs, directory / "live.nitpicker")
    (directory / "live.nitpicker.lock").write_text(str(os.getpid()))
    return directory


def test_an_existing_output_or_a_missing_directory_is_refused(scope_crawls: ScopeCrawls,
                                                              tmp_path: Path) -> None:
    existing = tmp_path / "joined.nitpicker"
    existing.write_bytes(b"keep me")
    done = run("concat", str(scope_crawls.blog), str(scope_crawls.docs), "-o", "joined",
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Error: Output file already exists: joined.nitpicker (choose another -o)")
    assert existing.read_bytes() == b"keep me"
    done = run("concat", str(scope_crawls.blog), str(scope_crawls.docs), "-o", "no/such/dir/x",
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: Output directory not found: no/such/dir"
    (tmp_path / "out").mkdir()
    done = run("concat", str(scope_crawls.blog), str(scope_crawls.docs), "-o", "out",
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == ("Error: -o out is a directory: give the new archive's file "
                                   "name (-o out/site.nitpicker)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["joined.nitpicker", "out"]
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                    reason="Chromium is not installed (make test installs it; CI requires it)")
def test_a_resource_is_the_newest_archive_s(rendered_resources: Path, tmp_path: Path) -> None:
    """A rendered crawl of /resources/ and the same crawl made later, when large.png answered
    404 with other headers (a copy, its run and answer changed): whatever the order, the
    resource is the later crawl's, its headers once."""
    later = tmp_path / "later.nitpicker"
    shutil.copyfile(rendered_resources, later)
    with closing(sqlite3.connect(later)) as conn, conn:
        conn.execute("UPDATE runs SET started_at = '2099-01-01T00:00:00.000+00:00'")
        conn.execute("UPDATE resources SET status = 404, status_text = 'Not Found'"
                     " WHERE url LIKE '%/large.png'")
        conn.execute("UPDATE resource_headers SET value = 'later' WHERE resource_id ="
                     " (SELECT id FROM resources WHERE url LIKE '%/large.png')")
    headers = ("SELECT h.name, h.value FROM resource_headers AS h JOIN resources AS r"
               " ON r.id = h.resource_id WHERE r.url LIKE '%/large.png'")
    assert rows(rendered_resources, headers), "large.png came with headers"
    for name, order in (("forward", (rendered_resources, later)),
                        ("backward", (later, rendered_resources))):
        joined = _concat(*order, cwd=tmp_path, name=name)
        assert rows(joined, "SELECT status, status_text FROM resources"
                            " WHERE url LIKE '%/large.png'") == [(404, "Not Found")]
        assert rows(joined, headers) == rows(later, headers)
        assert {value for _, value in rows(joined, headers)} == {"later"}
