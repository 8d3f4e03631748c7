"""``nitpicker recrawl FILE URL…`` (``nitpicker/cli/recrawl.py``, ``nitpicker/crawl/recrawl.py``):
URLs an archive has fetched again, their rows updated in place, what they newly link to
crawled; and ``nitpicker crawl --like OLD`` (``nitpicker/crawl/config_builder.py``), then
``nitpicker diff``; both refusing an archive whose crawl cannot be reproduced
(``nitpicker/crawl/reproducible.py``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.site import FixtureSite
from nitpicker.query.snapshot_encoding import decode
from tests.counting_server import CountingServer
from tests.helpers import archive_rows as rows
from tests.helpers import run

HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(title: str, *links: str) -> tuple[int, dict[str, str], str]:
    anchors = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    return 200, HTML, f"<html><head><title>{title}</title></head><body>{anchors}</body></html>"


def settings(path: Path) -> dict[str, object]:
    (config,) = rows(path, "SELECT config FROM info WHERE id = 1")[0]
    data = json.loads(str(config))
    assert isinstance(data, dict)
    return data


def fetched(server: CountingServer) -> list[str]:
    return sorted(path for path in server.taken() if path not in ("/robots.txt", "/sitemap.xml"))


@pytest.fixture
def server() -> Iterator[CountingServer]:
    """A site of three pages, ``/a`` and ``/b`` linking only to each other."""
    site = CountingServer({"/": page("Home", "/a", "/b"), "/a": page("A one", "/b"),
                           "/b": page("B one", "/a")})
    yield site
    site.stop()


@pytest.fixture
def archive(server: CountingServer, tmp_path: Path) -> Path:
    result = run("crawl", server.url + "/", "-o", "site", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    server.taken()
    return tmp_path / "site.nitpicker"


def test_recrawl_updates_the_pages_in_place_and_crawls_their_new_links(
        server: CountingServer, archive: Path, tmp_path: Path) -> None:
    url = server.url
    ids = dict(rows(archive, "SELECT url, id FROM pages"))
    # /a changes its title and links to a new page (which links to another); /b drops its link
    server.routes.update({"/a": page("A two", "/b", "/c"), "/b": page("B two"),
                          "/c": page("C", "/d"), "/d": page("D", "/")})
    result = run("recrawl", "site.nitpicker", f"{url}/a", f"{url}/b", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    # /a and /b fetched although each is a known link of the other; "/" not fetched again;
    # the new pages crawled within the scope, each once
    assert fetched(server) == ["/a", "/b", "/c", "/d"]
    pages = {u: (i, title) for u, i, title in rows(archive, "SELECT url, id, title FROM pages")}
    assert pages[f"{url}/a"] == (ids[f"{url}/a"], "A two")
    assert pages[f"{url}/b"] == (ids[f"{url}/b"], "B two")
    assert pages[f"{url}/c"][1] == "C" and pages[f"{url}/d"][1] == "D"
    links = rows(archive, "SELECT p.url, t.url FROM anchors AS a JOIN pages AS p"
                          " ON p.id = a.page_id JOIN pages AS t ON t.id = a.href_id"
                          " WHERE p.url IN (?, ?) ORDER BY 1, 2", f"{url}/a", f"{url}/b")
    assert links == [(f"{url}/a", f"{url}/b"), (f"{url}/a", f"{url}/c")]
    (snapshot,) = rows(archive, "SELECT s.encoding, s.html FROM snapshots AS s JOIN pages AS p"
                                " ON p.id = s.page_id WHERE p.url = ?", f"{url}/a")
    assert b"A two" in decode(*snapshot)
    assert rows(archive, "SELECT kind, status, pages_done FROM runs ORDER BY id") == [
        ("crawl", "finished", 3), ("recrawl", "finished", 4)]
    assert rows(archive, "SELECT count(*) FROM frontier WHERE state < 2") == [(0,)]


def test_a_recrawled_page_that_now_fails_is_recorded_so(
        server: CountingServer, archive: Path, tmp_path: Path) -> None:
    server.routes["/b"] = (404, HTML, "<title>Gone</title>")
    listed = tmp_path / "urls.txt"
    listed.write_text(f"# the page to check\n{server.url}/b\n")
    result = run("recrawl", "site.nitpicker", "--list-file", "urls.txt", "--silent",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert fetched(server) == ["/b"]
    assert rows(archive, "SELECT status, title FROM pages WHERE url = ?", f"{server.url}/b") == [
        (404, "Gone")]


def test_a_recrawled_page_that_now_redirects_keeps_nothing_of_the_page_it_was(
        server: CountingServer, archive: Path, tmp_path: Path) -> None:
    url = server.url
    ids = dict(rows(archive, "SELECT url, id FROM pages"))
    server.routes["/b"] = (301, {"Location": "/a"}, "")
    result = run("recrawl", "site.nitpicker", f"{url}/b", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert fetched(server) == ["/b"]  # /a, where it leads, is known: not fetched again
    assert rows(archive, "SELECT id, status, redirect_dest_id, title, content_type, is_target"
                         " FROM pages WHERE url = ?", f"{url}/b") == [
        (ids[f"{url}/b"], 301, ids[f"{url}/a"], "", None, 0)]
    for table in ("anchors", "snapshots", "response_headers"):
        assert rows(archive, f"SELECT count(*) FROM {table} WHERE page_id = ?",
                    ids[f"{url}/b"]) == [(0,)], table


def test_recrawl_refuses_with_one_line(server: CountingServer, archive: Path,
                                       tmp_path: Path) -> None:
    before = archive.read_bytes()
    cases = {
        (f"{server.url}/nowhere",): f"Error: not in {archive}: {server.url}/nowhere (a recrawl "
                                    "fetches again the URLs an archive has; add new roots with: "
                                    f"nitpicker crawl --append {archive} URL…)",
        (): "Error: recrawl needs at least one URL of the archive (URL… or --list-file)",
        ("ftp://x/",): 'Error: Invalid URL: "ftp://x/". Please provide a valid URL (e.g., '
                       'https://example.com)',
        (f"{server.url}/a", "--exclude", "/a"): "Error: No such option: --exclude",
    }
    for args, line in cases.items():
        result = run("recrawl", "site.nitpicker", *args, cwd=tmp_path)
        assert (result.returncode, result.stderr.strip()) == (1, line), args
    missing = run("recrawl", "nothing.nitpicker", f"{server.url}/a", cwd=tmp_path)
    assert missing.returncode == 1 and missing.stderr.startswith("Error: ")
    assert len(missing.stderr.splitlines()) == 1
    assert archive.read_bytes() == before
    assert fetched(server) == []


def _edit_settings(path: Path, **changes: object) -> None:
    """The archive's stored settings changed (``None``: the option removed)."""
    conn = sqlite3.connect(path)
    with conn:
        (config,) = conn.execute("SELECT config FROM info WHERE id = 1").fetchone()
        data = json.loads(config)
        for name, value in changes.items():
            if value is None:
                data.pop(name, None)
            else:
                data[name] = value
        conn.execute("UPDATE info SET config = ? WHERE id = 1", (json.dumps(data),))
    conn.close()


@pytest.mark.parametrize(("changes", "why"), [
    ({"crawl_speed": 3}, ("it was crawled by nitpicker {version} with options this version does "
                         "not know (crawl_speed); use that version or a newer one")),
    ({"sitemap": None}, ("it was crawled by nitpicker {version}, before --sitemap existed, whose "
                        "default may crawl otherwise; crawl anew, or give it with crawl --like")),
    ({"parallels": 0}, ("its stored settings are not accepted (--parallels must be at least 1, "
                       "got 0)")),
])
def test_an_archive_whose_crawl_cannot_be_reproduced_is_refused(
        server: CountingServer, archive: Path, tmp_path: Path, changes: dict[str, object],
        why: str) -> None:
    _edit_settings(archive, **changes)
    (version,) = rows(archive, "SELECT version FROM info")[0]
    line = f"Error: {archive}: its crawl cannot be reproduced: {why.format(version=version)}"
    recrawl = run("recrawl", "site.nitpicker", f"{server.url}/a", cwd=tmp_path)
    assert (recrawl.returncode, recrawl.stderr.strip()) == (1, line)
    like = run("crawl", "--like", "site.nitpicker", "-o", "again", cwd=tmp_path)
    if "sitemap" in changes:  # the missing option given settles it
        assert (like.returncode, like.stderr.strip()) == (1, line)
        given = run("crawl", "--like", "site.nitpicker", "--no-sitemap", "-o", "again",
                    "--silent", cwd=tmp_path)
        assert given.returncode == 0, given.stderr
    else:
        assert (like.returncode, like.stderr.strip()) == (1, line)
        assert not (tmp_path / "again.nitpicker").exists()
    assert fetched(server) == ([] if "sitemap" not in changes else ["/", "/a", "/b"])


def test_crawl_like_then_diff_finds_nothing_added_or_removed(tmp_path: Path) -> None:
    with FixtureSite() as site:
        old = run("crawl", site.url("/changes/"), "-o", "old", "--exclude", "/changes/removed",
                  "--parallels", "3", "--silent", cwd=tmp_path)
        assert old.returncode == 0, old.stderr
        new = run("crawl", "--like", "old.nitpicker", "-o", "new", "--silent", cwd=tmp_path)
        assert new.returncode == 0, new.stderr
    config = settings(tmp_path / "new.nitpicker")
    old_config = settings(tmp_path / "old.nitpicker")
    assert config["roots"] == [site.url("/changes/")]
    assert config["excludes"] == ["/changes/removed"] and config["parallels"] == 3
    assert {k: v for k, v in config.items() if k != "output"} == {
        k: v for k, v in old_config.items() if k != "output"}
    diff = run("diff", "old.nitpicker", "new.nitpicker", "--format", "json", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    categories = json.loads(diff.stdout)["categories"]
    assert categories["pages_added"]["count"] == 0
    assert categories["pages_removed"]["count"] == 0
    assert json.loads(diff.stdout)["common_pages"] == len(rows(
        tmp_path / "old.nitpicker",
        "SELECT 1 FROM pages WHERE is_external = 0 AND scraped = 1 AND is_skipped = 0"
        " AND redirect_dest_id IS NULL"))


def test_crawl_like_takes_the_flags_and_urls_given_over_old(
        server: CountingServer, archive: Path, tmp_path: Path) -> None:
    result = run("crawl", "--like", "site.nitpicker", f"{server.url}/a", "--single",
                 "--parallels", "2", "-o", "single", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = settings(tmp_path / "single.nitpicker")
    assert (data["roots"], data["single"], data["parallels"]) == ([f"{server.url}/a"], True, 2)
    assert fetched(server) == ["/a", "/b"]  # the root, and its link checked metadata-only


@pytest.mark.parametrize(("args", "line"), [
    (("--resume", "site.nitpicker"), "Error: --like crawls into a new archive: not with --resume"),
    (("--retry-failed", "site.nitpicker"),
     "Error: --like crawls into a new archive: not with --retry-failed"),
    (("--diff",), "Error: --diff cannot be used with --like"),
    (("-o", "site"), ("Error: Output file already exists: {dir}/site.nitpicker (use --resume to "
                     "continue it, or choose another --output)")),
])
def test_crawl_like_bad_input(archive: Path, tmp_path: Path, args: tuple[str, ...],
                              line: str) -> None:
    result = run("crawl", "--like", "site.nitpicker", *args, cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (1, line.format(dir=tmp_path))


def test_the_secrets_the_archive_does_not_keep_are_asked_for_again(
        server: CountingServer, tmp_path: Path) -> None:
    first = run("crawl", server.url + "/", "-o", "auth", "-H", "X-Token: one", "--silent",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "auth.nitpicker"
    like = run("crawl", "--like", "auth.nitpicker", "-o", "again", cwd=tmp_path)
    assert (like.returncode, like.stderr.strip()) == (
        1, (f"Error: --like {archive}: its crawl sent --header X-Token, whose values are not "
           "stored: give the headers again (--header or --header-file)"))
    recrawl = run("recrawl", "auth.nitpicker", f"{server.url}/a", cwd=tmp_path)
    assert recrawl.returncode == 1
    assert recrawl.stderr.startswith("Error: --header must be given again with recrawl"), \
        recrawl.stderr
    server.taken()
    given = run("recrawl", "auth.nitpicker", f"{server.url}/a", "-H", "X-Token: two",
                "--silent", cwd=tmp_path)
    assert given.returncode == 0, given.stderr
    assert fetched(server) == ["/a"]


def test_crawl_like_reads_the_inventory_again_and_refuses_another_file(
        server: CountingServer, tmp_path: Path) -> None:
    inventory = tmp_path / "cms.txt"
    inventory.write_text(f"{server.url}/hidden\n")
    server.routes["/hidden"] = page("Hidden")
    first = run("crawl", server.url + "/", "-o", "old", "--inventory", "cms.txt", "--silent",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    same = run("crawl", "--like", "old.nitpicker", "-o", "same", "--silent", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert rows(tmp_path / "same.nitpicker", "SELECT in_inventory FROM pages WHERE url = ?",
                f"{server.url}/hidden") == [(1,)]
    inventory.write_text(f"{server.url}/hidden\n{server.url}/other\n")
    changed = run("crawl", "--like", "old.nitpicker", "-o", "changed", cwd=tmp_path)
    assert (changed.returncode, changed.stderr.strip()) == (
        1, (f"Error: {tmp_path / 'old.nitpicker'}: its crawl cannot be reproduced: its "
           f"--inventory file {inventory}: it changed since its crawl read it (another "
           "sha256); give --inventory FILE to crawl with a file as it is now"))
    assert not (tmp_path / "changed.nitpicker").exists()
    given = run("crawl", "--like", "old.nitpicker", "--inventory", "cms.txt", "-o", "changed",
                "--silent", cwd=tmp_path)
    assert given.returncode == 0, given.stderr
