"""``nitpicker crawl --retry-failed FILE``: fetch an archive's failed URLs again
(``nitpicker/crawl/retry.py``, ``nitpicker/query/failed.py``)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from fixtures.site import FixtureSite
from fixtures.traps import TrapSite
from nitpicker.crawl.retry import retry_plan
from nitpicker.query import open_archive
from tests.helpers import archive_rows as rows
from tests.helpers import run


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def gets(site: FixtureSite) -> list[str]:
    return sorted(target for method, _, target in site.request_log if method == "GET")


def test_retry_failed_fetches_the_failed_urls_and_what_they_newly_link_to(tmp_path: Path) -> None:
    with FixtureSite() as site:
        first = run("crawl", site.url("/flaky/"), "-o", "flaky", "--retry", "0", "--silent",
                    cwd=tmp_path)
        assert first.returncode == 1  # an in-scope fetch error
        archive = tmp_path / "flaky.nitpicker"
        statuses = dict(rows(archive, "SELECT url, status FROM pages"))
        assert statuses[site.url("/flaky/page")] == 500
        assert statuses[site.url("/flaky/reset")] == -1
        assert site.url("/flaky/new") not in statuses
        ids = dict(rows(archive, "SELECT url, id FROM pages"))

        site.flaky = False
        site.clear_log()
        retried = run("crawl", "--retry-failed", str(archive), "--retry", "0", "--silent",
                      cwd=tmp_path)
        assert retried.returncode == 0, retried.stderr
        # only the failed URLs and the page they newly link to; not the 404, not robots.txt
        # of a known host twice, not the pages already crawled
        assert [g for g in gets(site) if g != "/robots.txt"] == [
            "/flaky/new", "/flaky/page", "/flaky/reset"]
        pages = {url: (page_id, status, title) for url, page_id, status, title in rows(
            archive, "SELECT url, id, status, title FROM pages")}
        assert pages[site.url("/flaky/page")] == (ids[site.url("/flaky/page")], 200, "Flaky Page")
        assert pages[site.url("/flaky/reset")] == (ids[site.url("/flaky/reset")], 200,
                                                   "Flaky Reset")
        assert pages[site.url("/flaky/new")][1:] == (200, "Flaky New")
        assert pages[site.url("/flaky/gone")][1] == 404  # a 404 is a fact, not a failure
        assert rows(archive, "SELECT kind, status FROM runs ORDER BY id") == [
            ("crawl", "finished"), ("retry", "finished")]
        assert rows(archive, "SELECT count(*) FROM frontier WHERE state < 2") == [(0,)]

        # nothing failed any more: says so, exit 0, the archive untouched
        before = sha256(archive)
        again = run("crawl", "--retry-failed", str(archive), cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == f"Nothing to retry: {archive} has no failed URLs"
        assert sha256(archive) == before
        assert rows(archive, "SELECT count(*) FROM runs") == [(2,)]


def test_a_url_that_still_fails_stays_failed(tmp_path: Path) -> None:
    with FixtureSite() as site:
        run("crawl", site.url("/flaky/"), "-o", "flaky", "--retry", "0", "--silent",
            cwd=tmp_path)
        archive = tmp_path / "flaky.nitpicker"
        retried = run("crawl", "--retry-failed", str(archive), "--retry", "0", "--silent",
                      cwd=tmp_path)
        assert retried.returncode == 1
        assert dict(rows(archive, "SELECT url, status FROM pages WHERE url LIKE ?",
                         site.url("/flaky/%"))) == {
            site.url("/flaky/"): 200, site.url("/flaky/page"): 500,
            site.url("/flaky/reset"): -1, site.url("/flaky/ok"): 200,
            site.url("/flaky/gone"): 404}
        assert rows(archive, "SELECT kind FROM runs ORDER BY id") == [("crawl",), ("retry",)]


def test_a_capped_trap_stays_capped_and_its_failed_pages_are_left(tmp_path: Path) -> None:
    with TrapSite() as traps:
        root = traps.url("/trap/date/")
        first = run("crawl", root, "-o", "traps", "--dedupe-cap", "5", "--silent", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        archive = tmp_path / "traps.nitpicker"
        assert rows(archive, "SELECT count(*) FROM pages WHERE skip_reason = 'dedupe cap'"
                    )[0][0] > 0
        assert rows(archive, "SELECT count(*) FROM trap_events")[0][0] == 1
        # Two pages of the trap failed (a server error, no answer), and the root, outside it.
        trap_pages = [url for (url,) in rows(
            archive, "SELECT url FROM pages WHERE status = 200 AND url LIKE ? ORDER BY id"
                     " LIMIT 2", root + "_%")]
        conn = sqlite3.connect(archive)
        with conn:
            conn.execute("UPDATE pages SET status = 503 WHERE url = ?", (trap_pages[0],))
            for url in (trap_pages[1], root):
                conn.execute("UPDATE pages SET status = -1, status_text = 'reset' WHERE url = ?",
                             (url,))
        conn.close()
        reader = open_archive(archive)
        try:
            plan = retry_plan(reader)
        finally:
            reader.close()
        assert [f["url"] for f in plan.retry] == [root]
        assert sorted(f["url"] for f in plan.capped) == sorted(trap_pages)

        traps.clear_log()
        retried = run("crawl", "--retry-failed", str(archive), "--silent", cwd=tmp_path)
        assert retried.returncode == 0, retried.stderr
        fetched = [target for method, _, target in traps.request_log if method == "GET"]
        assert [t for t in fetched if t != "/robots.txt"] == ["/trap/date/"]
        assert rows(archive, "SELECT count(*) FROM trap_events")[0][0] == 1
        assert rows(archive, "SELECT status FROM pages WHERE url = ?", trap_pages[0]) == [(503,)]
        assert rows(archive, "SELECT status FROM pages WHERE url = ?", root) == [(200,)]


def test_nothing_failed_but_capped_pages_says_so(tmp_path: Path, site: FixtureSite) -> None:
    assert run("crawl", site.url("/about"), "-o", "clean", "--silent", cwd=tmp_path).returncode == 0
    archive = tmp_path / "clean.nitpicker"
    before = sha256(archive)
    result = run("crawl", "--retry-failed", "clean.nitpicker", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"Nothing to retry: {archive} has no failed URLs"
    assert result.stderr == ""
    assert sha256(archive) == before


@pytest.fixture(scope="module")
def bad_input_archives(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archives the bad-input cases name, crawled once (each case works on a copy)."""
    directory = tmp_path_factory.mktemp("bad-input")
    assert run("crawl", site.url("/errors/"), "-o", "base", "--retry", "0", "--silent",
               cwd=directory).returncode == 1
    assert run("crawl", site.url("/errors/"), "-o", "stopped", "--max-pages", "1", "--silent",
               cwd=directory).returncode == 0
    # stopped.nitpicker has a failed URL too, so only its pending rows refuse it
    conn = sqlite3.connect(directory / "stopped.nitpicker")
    with conn:
        conn.execute("INSERT INTO pages(url, scraped, is_external, depth, status)"
                     " VALUES ('http://localhost:1/x', 1, 1, 1, -1)")
    conn.close()
    assert run("crawl", site.url("/about"), "-o", "clean", "--silent",
               cwd=directory).returncode == 0
    (directory / "text.nitpicker").write_text("not sqlite")
    return directory


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retry-failed", "missing.nitpicker"], "Archive not found"),
        (["--retry-failed", "text.nitpicker"], "Not a nitpicker archive"),
        (["--retry-failed", "base.nitpicker", "http://localhost:1/"],
         "--retry-failed takes no URLs"),
        (["--retry-failed", "base.nitpicker", "-o", "other"], "--retry-failed takes no URLs"),
        (["--retry-failed", "base.nitpicker", "--append", "base.nitpicker", "http://localhost:1/"],
         "--retry-failed and --append cannot be used together"),
        (["--retry-failed", "base.nitpicker", "--dedupe-cap", "3"],
         "--dedupe-cap cannot change with --retry-failed"),
        (["--retry-failed", "clean.nitpicker", "--no-image"],  # even with nothing to retry
         "--no-image cannot change with --retry-failed"),
        (["--retry-failed", "stopped.nitpicker"],
         "URL(s) not crawled yet: finish its crawl with --resume first"),
    ],
)
def test_retry_failed_bad_input(bad_input_archives: Path, tmp_path: Path, args: list[str],
                                message: str) -> None:
    shutil.copytree(bad_input_archives, tmp_path, dirs_exist_ok=True)
    before = {p.name: sha256(p) for p in tmp_path.glob("*.nitpicker")}
    assert len(before) == 4
    result = run("crawl", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert {p.name: sha256(p) for p in tmp_path.glob("*.nitpicker")} == before


def test_a_list_mode_archive_refuses_retry_failed(tmp_path: Path) -> None:
    """As --append: a list-mode archive's links were checked metadata-only; a retry would
    fetch a failed one as a full page (and crawl its links)."""
    with FixtureSite() as site:
        listed = run("crawl", "--list", site.url("/flaky/"), "--list", site.url("/flaky/reset"),
                     "-o", "listed", "--retry", "0", "--silent", cwd=tmp_path)
        assert listed.returncode == 1  # /flaky/reset: a fetch error to retry
        archive = tmp_path / "listed.nitpicker"
        before = sha256(archive)
        site.flaky = False
        site.clear_log()
        refused = run("crawl", "--retry-failed", str(archive), cwd=tmp_path)
        assert (refused.returncode, refused.stderr.strip()) == (1, (
            "Error: Cannot retry the failed URLs of a list-mode archive: this archive was "
            "created with --list/--list-file and contains metadata-only pages. Crawl the list "
            "into a fresh archive instead."))
        assert sha256(archive) == before
        assert site.request_log == []
