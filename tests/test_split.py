"""``nitpicker split`` (nitpicker/archive/split.py): the part of an archive within some scopes,
through the CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.render.chromium import find_chromium
from tests.helpers import ROWS_BY_URL, ScopeCrawls, rows, run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)",
)

_MESSAGES = ("SELECT p.url, m.text FROM page_console_messages AS l JOIN pages AS p"
             " ON p.id = l.page_id JOIN console_messages AS m ON m.id = l.message_id")
_RESOURCES = "SELECT url, kind, status, content_type, content_length FROM resources"
_REFERRERS = ("SELECT r.url, p.url FROM resource_referrers AS l JOIN resources AS r"
              " ON r.id = l.resource_id JOIN pages AS p ON p.id = l.page_id")
_RESOURCE_HEADERS = ("SELECT r.url, h.name, h.value FROM resource_headers AS h"
                     " JOIN resources AS r ON r.id = h.resource_id")


def _split(archive: Path, *scopes: str, cwd: Path, name: str = "part") -> Path:
    done = run("split", str(archive), *scopes, "-o", name, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd / f"{name}.nitpicker"


def test_a_section_split_off_is_the_crawl_of_that_section(scope_crawls: ScopeCrawls,
                                                          tmp_path: Path) -> None:
    """/scope/blog/ split off the crawl of /scope/blog/ and /scope/docs/ is what a crawl of
    /scope/blog/ recorded: its pages whole, with their analysis; /scope/docs/, which they link
    to, an external row (status, title, headers; no links, snapshot or analysis, queued
    metadata-only); /scope/docs/api, linked from docs only, gone."""
    part = _split(scope_crawls.both, scope_crawls.blog_root, cwd=tmp_path)
    for table, sql in ROWS_BY_URL.items():
        assert rows(part, sql) == rows(scope_crawls.blog, sql), table
    assert rows(part, "SELECT name, base_url, roots FROM info") == [
        ("part", scope_crawls.blog_root, json.dumps([scope_crawls.blog_root]))]
    assert rows(part, "SELECT kind, status FROM runs") == [("crawl", "finished")]
    query = run("query", str(part), "summary", cwd=tmp_path)
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["internal_pages"] == 3


def test_several_scopes(scope_crawls: ScopeCrawls, tmp_path: Path) -> None:
    part = _split(scope_crawls.both, scope_crawls.docs_root, scope_crawls.blog_root, cwd=tmp_path)
    for table in ("pages", "anchors", "snapshots", "page_values"):
        assert rows(part, ROWS_BY_URL[table]) == rows(scope_crawls.both, ROWS_BY_URL[table]), table
    assert json.loads(rows(part, "SELECT roots FROM info")[0][0]) == [
        scope_crawls.docs_root, scope_crawls.blog_root]


def test_a_file_scope_keeps_where_its_redirect_leads(site: FixtureSite, tmp_path: Path) -> None:
    """/redirect/start (301 → /redirect/middle, 302 → /redirect/dest) as the scope: the
    destination, outside it, is kept whole, as a crawl that follows the redirect records it;
    /redirect/ (outside, linked by neither) and the middle hop are left out."""
    done = run("crawl", site.url("/redirect/"), "-o", "site", "--retry", "0", "--silent",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    part = _split(tmp_path / "site.nitpicker", site.url("/redirect/start"), cwd=tmp_path)
    assert rows(part, ROWS_BY_URL["pages"]) == [
        (site.url("/redirect/dest"), 1, 1, 0, 200, "Redirect Destination", "text/html", None, 1),
        (site.url("/redirect/start"), 1, 0, 0, 301, "", None, site.url("/redirect/dest"), None),
    ]
    assert rows(part, ROWS_BY_URL["snapshots"]) == rows(
        tmp_path / "site.nitpicker", ROWS_BY_URL["snapshots"] + " WHERE p.url = ?",
        site.url("/redirect/dest"))


def test_a_scope_wider_than_the_crawl_names_what_it_saw_as_external(
        site: FixtureSite, scope_crawls: ScopeCrawls, tmp_path: Path) -> None:
    done = run("split", str(scope_crawls.blog), site.url("/scope/"), "-o", "part", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        (f"Note: 1 URL(s) under the roots were recorded external (metadata only): "
         f"{scope_crawls.docs_root}; fetch them in full with: nitpicker crawl --append "
         f"part.nitpicker {site.url('/scope/')}"),
        "part.nitpicker: 1 scope(s), 4 page rows kept, 0 external rows for the links leaving them",
    ]
    assert rows(tmp_path / "part.nitpicker", ROWS_BY_URL["pages"]) == rows(
        scope_crawls.blog, ROWS_BY_URL["pages"])


@pytest.mark.parametrize(("archive", "scopes", "message"), [
    ("blog", ["{docs}"], ("no page of {dir}/blog.nitpicker lies under {docs} (the archive's "
                          "roots: {blog})")),
    ("both", ["{blog}", "{root}/elsewhere/"], ("no page of {dir}/both.nitpicker lies under "
                                               "{root}/elsewhere/ (the archive's roots: {blog}, "
                                               "{docs})")),
    ("both", ["ftp://example.com/"], ('scope: Invalid URL: "ftp://example.com/". Please provide '
                                      "a valid URL (e.g., https://example.com)")),
    ("list", ["{docs}"], ("{dir}/list.nitpicker: a list-mode archive (--list/--list-file) has "
                          "no scope to split: its roots are a list of URLs")),
    ("missing", ["{docs}"], "Archive not found: {dir}/missing.nitpicker"),
])
def test_what_cannot_be_split_is_one_line(
        site: FixtureSite, scope_crawls: ScopeCrawls, listed: Path, tmp_path: Path,
        archive: str, scopes: list[str], message: str) -> None:
    def filled(text: str) -> str:
        return text.format(dir=scope_crawls.dir, blog=scope_crawls.blog_root,
                           docs=scope_crawls.docs_root, root=site.base_url)

    done = run("split", str(scope_crawls.dir / f"{archive}.nitpicker"), *map(filled, scopes),
               "-o", str(tmp_path / "part"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["Error: " + filled(message)]
    assert list(tmp_path.iterdir()) == [], "nothing written, nothing left behind"


@pytest.fixture(scope="module")
def listed(site: FixtureSite, scope_crawls: ScopeCrawls) -> Path:
    """A list-mode crawl beside the scope crawls (``list.nitpicker``)."""
    (scope_crawls.dir / "urls.txt").write_text(site.url("/scope/docs/") + "\n")
    done = run("crawl", "--list-file", "urls.txt", "-o", "list", "--retry", "0", "--silent",
               cwd=scope_crawls.dir)
    assert done.returncode == 0, done.stderr
    return scope_crawls.dir / "list.nitpicker"


def test_an_existing_output_or_a_missing_directory_is_refused(scope_crawls: ScopeCrawls,
                                                              tmp_path: Path) -> None:
    existing = tmp_path / "part.nitpicker"
    shutil.copyfile(scope_crawls.docs, existing)
    before = existing.read_bytes()
    done = run("split", str(scope_crawls.both), scope_crawls.blog_root, "-o", "part",
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Error: Output file already exists: part.nitpicker (choose another -o)")
    assert existing.read_bytes() == before
    done = run("split", str(scope_crawls.both), scope_crawls.blog_root, "-o", "gone/part",
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: Output directory not found: gone"
    done = run("split", str(scope_crawls.both), scope_crawls.blog_root, "-o", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == ("Error: -o . is a directory: give the new archive's file "
                                   "name (-o site.nitpicker)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part.nitpicker"]


@needs_chromium
def test_the_resources_and_console_messages_are_those_of_the_kept_pages(
        site: FixtureSite, rendered_console: Path, rendered_resources: Path,
        tmp_path: Path) -> None:
    """Rendered crawls: /console/levels keeps its own console messages and the shared script
    it loaded (now referred to by it alone), not the other pages' messages; /resources/frame
    loads nothing, so none of the top page's images and their headers stay; /resources/
    keeps them all."""
    console = rendered_console
    levels = site.url("/console/levels")
    part = _split(console, levels, cwd=tmp_path)
    own = rows(console, _MESSAGES + " WHERE p.url = ?", levels)
    assert len(own) > 1 and rows(part, _MESSAGES) == own
    assert sorted(text for (text,) in rows(part, "SELECT text FROM console_messages")) == sorted(
        text for _, text in own)
    assert rows(part, _REFERRERS) == [(site.url("/console/assets/shared.js"), levels)]
    assert rows(part, _RESOURCES) == rows(console, _RESOURCES)

    resources = rendered_resources
    assert rows(resources, _RESOURCE_HEADERS), "the top page's images came with headers"
    framed = _split(resources, site.url("/resources/frame"), cwd=tmp_path, name="framed")
    assert rows(framed, _RESOURCES) == [] and rows(framed, _RESOURCE_HEADERS) == []
    whole = _split(resources, site.url("/resources/"), cwd=tmp_path, name="whole")
    for sql in (_RESOURCES, _REFERRERS, _RESOURCE_HEADERS):
        assert rows(whole, sql) == rows(resources, sql), sql
