"""``nitpicker analyze`` on a real crawl of the fixture site's ``/contents/`` pages.

One crawl per module (``--no-render``): ``/contents/`` and the four pages it links to. Every
test analyses a copy, in a subprocess, as a user would; the test plugins come from
``tests/fake_plugins.py``, registered through a distribution of their own on ``PYTHONPATH``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from nitpicker.query.snapshot_encoding import decode
from tests.fake_plugins import register
from tests.helpers import ROOT, count, crawl

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

PAGES = ("/contents/", "/contents/keywords", "/contents/no-main", "/contents/role-main",
         "/contents/with-main")


@pytest_twisted.async_fixture(scope="module")
async def crawled(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("analyze"), [site.url("/contents/")])
    archive.conn.close()
    return archive.path


@pytest.fixture
def archive(crawled: Path, tmp_path: Path) -> Path:
    """A fresh copy of the crawled archive, in the test's own directory (its cwd)."""
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    return copy


@pytest.fixture
def plugins_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return register(tmp_path_factory.mktemp("fake-plugins"))


def env(*extra: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, extra)]),
            "COLUMNS": "300"}


def nitpicker(*args: str, cwd: Path, extra: tuple[Path, ...] = (), timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd,
                          env=env(*extra), capture_output=True, text=True, timeout=timeout,
                          check=False, stdin=subprocess.DEVNULL)


def query(archive: Path, *args: str) -> Any:
    done = nitpicker("query", str(archive), *args, cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def values_by_path(archive: Path, plugin: str, site: FixtureSite) -> dict[str, dict[str, Any]]:
    answer = query(archive, "page-values", "--plugin", plugin)
    return {item["url"].removeprefix(site.base_url): {k: c["value"] for k, c in item["values"].items()}
            for item in answer["items"]}


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the bundled pure-Python plugins -----------------------------------------------------------

NO_MEDIA = {"buttons": 0, "iframes": 0, "videos": 0, "audios": 0, "canvases": 0}
"""main-contents' counts of the elements none of the /contents/ pages has."""


def test_main_contents_rows_of_every_page(archive: Path, site: FixtureSite) -> None:
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert "main-contents: 5 pages, 0 violations, 55 values, 0 errors" in done.stderr
    answer = query(archive, "page-values", "--plugin", "main-contents")
    assert answer["headers"] == {"element": "Main element", "words": "Word count",
                                 "wordCount": "Characters", "headings": "Heading count",
                                 "images": "Image count", "table": "Table count",
                                 "buttons": "Button count", "iframes": "Iframe count",
                                 "videos": "Video count", "audios": "Audio count",
                                 "canvases": "Canvas count"}
    assert list(answer["headers"]) == ["element", "words", "wordCount", "headings", "images",
                                       "table", "buttons", "iframes", "videos", "audios",
                                       "canvases"]  # the columns' order
    rows = {item["url"].removeprefix(site.base_url): item["values"] for item in answer["items"]}
    assert list(rows) == list(PAGES)
    plain = {path: {k: c["value"] for k, c in cells.items()} for path, cells in rows.items()}
    assert plain["/contents/with-main"] == {"element": "main", "wordCount": 43, "headings": 2,
                                            "images": 2, "table": 2, "words": 12, **NO_MEDIA}
    assert rows["/contents/with-main"]["headings"]["note"] == (
        "| level | text |\n| 1 | Hello world |\n| 2 | Second |")
    assert rows["/contents/with-main"]["table"]["note"] == (
        "| rows | cols | thead | tfoot | merged |\n| 3 | 2 | o | x | o |\n| 1 | 1 | x | x | x |")
    # first match in document order: .content comes before [role=main] inside it
    assert plain["/contents/role-main"] == {"element": "div.content", "wordCount": 18,
                                            "headings": 1, "images": 0, "table": 0, "words": 4,
                                            **NO_MEDIA}
    # a page with no main element still gets its row, saying so (the original stored none)
    assert plain["/contents/no-main"] == {"element": None, "wordCount": 0, "headings": 0,
                                          "images": 0, "table": 0, "words": 0, **NO_MEDIA}
    assert rows["/contents/no-main"]["element"]["note"].startswith(
        "No main content element: nothing matches main, [role=\"main\"], #main")
    assert plain["/contents/"]["element"] is None


def test_main_contents_words_and_the_elements_of_a_page(site: FixtureSite,
                                                         tmp_path: Path) -> None:
    """Issue 31: words (each Chinese character or kana one), buttons, iframes, videos, audios,
    canvases, and the elements listed in their counts' notes; the header's button and the
    footer's iframe are outside the main content. Queried and reported like the others."""
    crawled = nitpicker("crawl", site.url("/contents/media"), "--single", "--no-render",
                        "--retry", "0", "-o", "media", "--silent", cwd=tmp_path)
    assert crawled.returncode == 0, crawled.stderr
    archive = tmp_path / "media.nitpicker"
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (item,) = query(archive, "page-values", "--plugin", "main-contents")["items"]
    cells = item["values"]
    assert {key: cell["value"] for key, cell in cells.items()} == {
        "element": "main#article", "wordCount": 84, "headings": 2, "images": 3, "table": 0,
        "words": 15, "buttons": 3, "iframes": 1, "videos": 1, "audios": 1, "canvases": 2}
    assert cells["headings"]["note"] == "| level | text |\n| 1 | Media page |\n| 3 | Clips \\| more |"
    assert cells["images"]["note"] == ("| src | alt |\n| /contents/a.png | A diagram |\n"
                                       '| /contents/b.png | "" |\n| /contents/c.png | (none) |')
    assert cells["buttons"]["note"] == "| text |\n| Play all |\n| Send |\n| Close |"
    assert cells["iframes"]["note"] == ("| src | title | width | height |\n"
                                        "| https://www.youtube.com/embed/abc | Intro video | 560 | 315 |")
    assert cells["videos"]["note"] == ("| src | title | width | height |\n"
                                       "| /contents/tour.mp4 | Tour | 320 | 240 |")
    assert cells["words"]["note"] is None and cells["audios"]["note"] is None
    reported = nitpicker("report", str(archive), "--format", "csv", "--only", "Page List",
                         cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    with (tmp_path / "media-csv" / "page-list.csv").open(encoding="utf-8", newline="") as handle:
        (row,) = csv.DictReader(handle)
    # issue 26: "Word count" counts words; the characters are a column of their own
    assert (row["Word count"], row["Characters"], row["Button count"], row["Canvas count"]) == (
        "15", "84", "3", "2")
    assert "Words" not in row
    assert row["Iframe count note"].endswith("| https://www.youtube.com/embed/abc | Intro video | 560 | 315 |")


def test_main_content_selector_override(archive: Path, site: FixtureSite) -> None:
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents",
                     "--main-content-selector", "#article", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    rows = values_by_path(archive, "main-contents", site)
    assert rows["/contents/no-main"] == {"element": "div#article", "wordCount": 18,
                                         "headings": 1, "images": 0, "table": 0, "words": 3,
                                         **NO_MEDIA}
    assert rows["/contents/with-main"]["element"] == "main"


def test_search_keywords_regex_and_selectors_from_the_config(archive: Path,
                                                             site: FixtureSite) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.search]\n'
        'keywords = ["nitpicker", "/nitpicker/i", {search = "/\\\\d+ yen/", title = "Prices"}]\n'
        'selectors = ["form.search", "table"]\n')
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    answer = query(archive, "page-values", "--plugin", "search")
    assert answer["headers"] == {
        "keyword:nitpicker": "Search keyword: nitpicker",
        "keyword:/nitpicker/i": "Search keyword: /nitpicker/i",
        "keyword:/\\d+ yen/": "Search keyword: Prices",
        "selector:form.search": "Search selector: form.search",
        "selector:table": "Search selector: table",
    }
    rows = values_by_path(archive, "search", site)
    # text nodes and attributes; not script, style, comments, href, class, id, data-*, style=
    assert rows["/contents/keywords"] == {"keyword:nitpicker": 3, "keyword:/nitpicker/i": 5,
                                          "keyword:/\\d+ yen/": 2,
                                          "selector:form.search": True}
    assert rows["/contents/with-main"] == {"keyword:nitpicker": 0, "keyword:/nitpicker/i": 0,
                                           "keyword:/\\d+ yen/": 0, "selector:table": True}


def test_search_scope_from_the_command_line_wins(archive: Path, site: FixtureSite) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.search]\nkeywords = ["yen"]\nselectors = ["form.search"]\n')
    done = nitpicker("analyze", str(archive), "--plugin", "search", "--search-scope", "main",
                     "--search-keywords", "nitpicker", "--search-keywords", "/nitpicker/i",
                     cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    rows = values_by_path(archive, "search", site)
    # keywords replaced by the command line's; selectors kept from the file; the sidebar and
    # its form are outside <main>; pages without <main> get no row
    assert rows == {"/contents/keywords": {"keyword:nitpicker": 2, "keyword:/nitpicker/i": 4},
                    "/contents/with-main": {"keyword:nitpicker": 0,
                                            "keyword:/nitpicker/i": 0}}


def test_search_without_keywords_produces_no_data_and_says_so(archive: Path) -> None:
    done = nitpicker("analyze", str(archive), "--plugin", "search", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert "Note: search produced no data for 5 pages (0 errors): check its settings" in (
        done.stderr)


# -- the runner: errors, retries, resuming -----------------------------------------------------


def test_a_plugin_failing_on_one_page_is_recorded_and_the_run_goes_on(
        archive: Path, plugins_dir: Path, site: FixtureSite) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.scripted]\nfail_always = ["/no-main"]\nfail_once = ["/keywords"]\n')
    done = nitpicker("analyze", str(archive), "--plugin", "scripted", cwd=archive.parent,
                     extra=(plugins_dir,))
    assert done.returncode == 0, done.stderr
    assert "scripted: 5 pages, 0 violations, 4 values, 1 errors" in done.stderr
    assert "1 page error(s)" in done.stderr
    rows = values_by_path(archive, "scripted", site)
    assert sorted(rows) == ["/contents/", "/contents/keywords", "/contents/role-main",
                            "/contents/with-main"]  # /keywords: failed once, retried, kept
    conn = sqlite3.connect(archive)
    errors = conn.execute("SELECT plugin, url, message FROM plugin_errors").fetchall()
    assert errors == [("scripted", site.url("/contents/no-main"),
                       f"ValueError: cannot read {site.url('/contents/no-main')}")]
    run = conn.execute("SELECT outcome, pages_done, errors FROM analysis_runs").fetchall()
    assert run == [("finished", 5, 1)]
    conn.close()
    # the next run analyses again only the page that failed
    again = nitpicker("analyze", str(archive), "--plugin", "scripted", cwd=archive.parent,
                      extra=(plugins_dir,))
    assert "scripted: 1 pages, 4 already analysed" in again.stderr


def test_rerun_skips_analysed_pages_force_and_new_settings_redo_them(
        archive: Path, plugins_dir: Path) -> None:
    args = ("analyze", str(archive), "--plugin", "scripted")
    first = nitpicker(*args, cwd=archive.parent, extra=(plugins_dir,))
    assert "scripted: 5 pages, 0 violations, 5 values" in first.stderr
    second = nitpicker(*args, cwd=archive.parent, extra=(plugins_dir,))
    assert "scripted: 0 pages, 5 already analysed" in second.stderr
    forced = nitpicker(*args, "--force", cwd=archive.parent, extra=(plugins_dir,))
    assert "scripted: 5 pages, 0 violations, 5 values" in forced.stderr
    (archive.parent / "nitpicker.toml").write_text('[plugins.analyze.scripted]\nversion = "2"\n')
    newer = nitpicker(*args, cwd=archive.parent, extra=(plugins_dir,))
    assert "scripted: 5 pages, 0 violations, 5 values" in newer.stderr
    # one row per page and key however often it was analysed
    assert count(archive, "SELECT count(*) FROM page_values") == 5
    assert count(archive, "SELECT count(*) FROM analysis_runs") == 4


def test_each_url_is_called_for_every_url_beside_each_page(archive: Path, plugins_dir: Path,
                                                           site: FixtureSite) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.scripted]\nurls = true\nfail_url = ["/role-main"]\n')
    args = ("analyze", str(archive), "--plugin", "scripted")
    done = nitpicker(*args, cwd=archive.parent, extra=(plugins_dir,))
    assert done.returncode == 0, done.stderr
    assert "scripted: 5 pages, 5 URLs, 0 violations, 9 values, 1 errors" in done.stderr
    rows = values_by_path(archive, "scripted", site)
    assert rows["/contents/with-main"] == {"length": len(_snapshot(archive, "with-main")),
                                           "external": False}
    assert set(rows["/contents/role-main"]) == {"length"}  # each_url failed there
    assert count(archive, "SELECT count(*) FROM plugin_errors WHERE phase = 'url'") == 1
    # the next run: every page done, only the URL each_url failed on is tried again
    again = nitpicker(*args, cwd=archive.parent, extra=(plugins_dir,))
    assert "scripted: 0 pages, 5 already analysed, 1 URLs, 0 violations, 0 values, 1 errors" in (
        again.stderr)
    assert values_by_path(archive, "scripted", site) == rows  # nothing lost or doubled


def _snapshot(archive: Path, name: str) -> str:
    conn = sqlite3.connect(archive)
    try:
        encoding, blob = conn.execute(
            "SELECT encoding, html FROM snapshots s JOIN pages p ON p.id = s.page_id"
            " WHERE p.url LIKE ?", (f"%/contents/{name}",)).fetchone()
    finally:
        conn.close()
    return decode(encoding, blob).decode()


def test_violation_only_plugin_is_data_and_query_reads_it(archive: Path, plugins_dir: Path,
                                                          site: FixtureSite) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.scripted]\nviolations = true\n')
    done = nitpicker("analyze", str(archive), "--plugin", "scripted", cwd=archive.parent,
                     extra=(plugins_dir,))
    assert done.returncode == 0, done.stderr
    assert "scripted: 5 pages, 5 violations, 0 values" in done.stderr
    assert "produced no data" not in done.stderr
    found = query(archive, "violations", "--validator", "scripted", "--limit", "2")
    assert found["total"] == 5
    first = found["items"][0]
    assert first["url"] == site.url("/contents/")
    assert (first["rule"], first["severity"], first["code"], first["location"]) == (
        "always", "error", "<html>", "1:1")
    assert first["message"].endswith(" characters")
    assert query(archive, "violations", "--rule", "other")["total"] == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_keeps_what_is_done_and_the_next_run_continues(
        archive: Path, plugins_dir: Path, signum: int) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.scripted]\ndelay = 0.4\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "analyze", str(archive), "--plugin", "scripted"],
        cwd=archive.parent, env=env(plugins_dir), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _analysed(archive) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no page analysed"
        time.sleep(0.05)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    kept = _analysed(archive)
    assert 2 <= kept < 5
    # one line saying what is kept, and it is the last: not followed by the root group's
    # "Interrupted: nothing was written", which a Ctrl-C before anything is written prints
    assert "nothing was written" not in stderr
    assert stderr.splitlines()[-1] == (
        f"Interrupted: the {kept} page analyses finished are kept; run the same command again "
        "to continue")
    assert not Path(f"{archive}.lock").exists()
    conn = sqlite3.connect(archive)
    assert conn.execute("SELECT outcome FROM analysis_runs").fetchall() == [("interrupted",)]
    conn.close()
    again = nitpicker("analyze", str(archive), "--plugin", "scripted", cwd=archive.parent,
                      extra=(plugins_dir,))
    assert f"scripted: {5 - kept} pages, {kept} already analysed" in again.stderr


def _analysed(archive: Path) -> int:
    try:
        return count(archive, "SELECT count(*) FROM analyzed_pages")
    except sqlite3.Error:  # the table is not there yet
        return 0


# -- plugins that cannot run -----------------------------------------------------------------


def test_plugins_that_cannot_be_loaded_are_one_line_each(archive: Path,
                                                         plugins_dir: Path) -> None:
    done = nitpicker("analyze", str(archive), "--plugin", "missing", "--plugin", "refusing",
                     "--plugin", "scripted", cwd=archive.parent, extra=(plugins_dir,))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert ("Error: plugin missing: cannot import tests.no_such_module:create "
            "(ModuleNotFoundError: No module named 'tests.no_such_module')") in lines
    assert "Error: plugin refusing: the setting 'x' is required" in lines
    assert any(line.startswith("scripted: 5 pages") for line in lines)  # the others ran
    assert "Traceback" not in done.stderr


def test_no_plugin_could_be_loaded(archive: Path, plugins_dir: Path) -> None:
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--plugin", "missing", cwd=archive.parent,
                     extra=(plugins_dir,))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        ("Error: plugin missing: cannot import tests.no_such_module:create "
        "(ModuleNotFoundError: No module named 'tests.no_such_module')"),
        "Error: No plugin could be loaded (1 failed; see above)"]
    assert fingerprint(archive) == before


@pytest.mark.parametrize(("flags", "config", "line"), [
    (["--plugin", "main-contents", "--plugin", "search", "--search-scope", "div["], "",
     ("Error: plugin search: setting 'scope' has an invalid CSS selector 'div[' (Expected ident "
      "or '*', got <EOF at 4>); fix --search-scope")),
    (["--plugin", "main-contents", "--plugin", "search", "--search-keywords", "/[/"], "",
     ("Error: plugin search: setting 'keywords': invalid regular expression '/[/': unterminated "
      "character set at position 0; fix --search-keywords")),
    (["--plugin", "search", "--search-keywords", "/a/q", "--plugin", "main-contents"], "",
     ("Error: plugin search: setting 'keywords': unknown regular expression flag 'q' in '/a/q'; "
      "fix --search-keywords")),
    (["--plugin", "search", "--search-keywords", "x", "--plugin", "main-contents",
      "--main-content-selector", "##"], "",
     ("Error: plugin main-contents: setting 'mainContentSelector' has an invalid CSS selector "
      "'##' (Expected selector, got <DELIM '#' at 0>); fix --main-content-selector")),
    (["--all"], '[plugins.analyze.main-contents]\n[plugins.analyze.search]\nkeywords = ["/[/"]\n',
     ("Error: plugin search: setting 'keywords': invalid regular expression '/[/': unterminated "
      "character set at position 0; fix it in nitpicker.toml (plugins.analyze.search.keywords)")),
    (["--all"], "[plugins.analyze.main-contents]\n[plugins.analyze.search]\nkeywords = 5\n",
     ("Error: plugin search: setting 'keywords' must be a list, got 5; fix it in nitpicker.toml "
      "(plugins.analyze.search.keywords)")),
    (["--all"], ('[plugins.analyze.search]\nkeywords = ["x"]\nselectors = ["p["]\n'
                 "[plugins.analyze.main-contents]\n"),
     ("Error: plugin search: setting 'selectors' has an invalid CSS selector 'p[' (Expected "
      "ident or '*', got <EOF at 2>); fix it in nitpicker.toml (plugins.analyze.search.selectors)")),
    (["--all"], ("[plugins.analyze.main-contents]\nmainContentSelector = 3\n"
                 '[plugins.analyze.search]\nkeywords = ["x"]\n'),
     ("Error: plugin main-contents: setting 'mainContentSelector' must be a CSS selector (a "
      "string), got 3; fix it in nitpicker.toml (plugins.analyze.main-contents.mainContentSelector)")),
])
def test_bad_plugin_settings_are_one_line_and_the_archive_untouched(
        archive: Path, flags: list[str], config: str, line: str) -> None:
    """search's and main-contents' settings are checked as the Node plugins' are: one line
    naming the setting, the value and where to fix it, and no plugin runs (the other one,
    which loads, would otherwise write its rows)."""
    if config:
        (archive.parent / "nitpicker.toml").write_text(config)
    before = fingerprint(archive)
    for verbose in ((), ("--verbose",)):
        done = nitpicker("analyze", str(archive), *flags, *verbose, cwd=archive.parent)
        assert done.returncode == 1
        if verbose:  # the traceback only with --verbose
            assert "Traceback (most recent call last)" in done.stderr
            assert done.stderr.splitlines()[-1] == line
        else:
            assert done.stderr.splitlines() == [line]
        assert fingerprint(archive) == before


def test_an_axe_lang_axe_does_not_have_stops_the_command(archive: Path) -> None:
    """--axe-lang with a language axe has no messages in: one line listing those it has (not
    English in silence for the whole archive), and main-contents does not run either."""
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", "--plugin", "axe",
                     "--axe-lang", "jp", cwd=archive.parent)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: plugin axe: setting 'lang': axe has no messages in 'jp'; "
                           "it has en, ")
    assert ", ja, " in line and ", pt-BR, " in line
    assert line.endswith("; fix --axe-lang")
    assert fingerprint(archive) == before


def test_a_bad_node_plugin_setting_stops_the_command_before_the_archive(
        archive: Path) -> None:
    """A factory's SettingError: one line naming the setting and where to fix it, exit 1, and
    no plugin runs (main-contents, which loads, would otherwise write its rows)."""
    (archive.parent / "nitpicker.toml").write_text(
        "[plugins.analyze.main-contents]\n[plugins.analyze.markuplint]\nrecycle = -5\n")
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        ("Error: plugin markuplint: setting 'recycle' must be a whole number ≥ 0, got -5; "
         "fix it in nitpicker.toml (plugins.analyze.markuplint.recycle)")]
    assert fingerprint(archive) == before


def test_node_tools_missing_stop_the_command_with_the_fix(archive: Path,
                                                          tmp_path: Path) -> None:
    """NodeToolsMissingError (NITPICKER_NODE_MODULES at an empty directory): one line saying
    how to install the tools, exit 1, the archive untouched; --verbose adds the traceback."""
    empty = tmp_path / "empty-node-modules"
    empty.mkdir()
    before = fingerprint(archive)
    line = (f"Error: plugin textlint: Node package 'textlint' not found in "
            f"NITPICKER_NODE_MODULES={empty}: point it at a node_modules directory that has "
            "it, or unset it and run `npm ci` in the nitpicker checkout")
    for verbose in ((), ("--verbose",)):
        done = subprocess.run(
            [sys.executable, "-m", "nitpicker.cli", "analyze", str(archive), "--plugin",
             "main-contents", "--plugin", "textlint", *verbose],
            cwd=archive.parent, env={**env(), "NITPICKER_NODE_MODULES": str(empty)},
            capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
        assert done.returncode == 1
        if verbose:
            assert "Traceback (most recent call last)" in done.stderr
            assert "NodeToolsMissingError" in done.stderr
            assert done.stderr.splitlines()[-1] == line
        else:
            assert done.stderr.splitlines() == [line]
        assert fingerprint(archive) == before


def test_a_plugin_whose_engine_does_not_start_fails_its_run_only(archive: Path,
                                                                 plugins_dir: Path) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.scripted]\nfail_open = true\n[plugins.analyze.main-contents]\n')
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent, extra=(plugins_dir,))
    assert done.returncode == 1
    assert "Error: plugin scripted failed: RuntimeError: engine did not start" in done.stderr
    assert "main-contents: 5 pages" in done.stderr
    conn = sqlite3.connect(archive)
    assert conn.execute("SELECT plugin, outcome FROM analysis_runs ORDER BY id").fetchall() == [
        ("scripted", "failed"), ("main-contents", "finished")]
    conn.close()


# -- selection ---------------------------------------------------------------------------------


def test_unknown_plugin_names_the_known_ones(archive: Path) -> None:
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--plugin", "search", "--plugin", "nope",
                     cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [(
        "Error: Unknown plugin(s): nope. Known plugins: axe, lighthouse, main-contents, "
        "markuplint, search, textlint")]
    assert fingerprint(archive) == before


def test_the_original_plugin_names_are_accepted(archive: Path, site: FixtureSite) -> None:
    (archive.parent / ".nitpickerrc.json").write_text(json.dumps({"plugins": {"analyze": {
        "@nitpicker/analyze-search": {"keywords": ["Outer"]},
        "@nitpicker/analyze-axe": False}}}))
    done = nitpicker("analyze", str(archive), "--plugin", "@nitpicker/analyze-search",
                     cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert values_by_path(archive, "search", site)["/contents/role-main"] == {
        "keyword:Outer": 1}


def _read_until(fd: int, text: str, deadline: float) -> str:
    seen = ""
    while text not in seen:
        assert time.monotonic() < deadline, seen
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:  # the terminal closed: the process ended
                break
    return seen


def test_a_terminal_asks_which_plugins(archive: Path) -> None:
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.main-contents]\n[plugins.analyze.search]\nkeywords = ["Outer"]\n')
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "nitpicker.cli", "analyze", str(archive)],
                            cwd=archive.parent, env=env(), stdin=child, stdout=child,
                            stderr=child, close_fds=True)
    os.close(child)
    try:
        deadline = time.monotonic() + 60
        asked = _read_until(main, "Enter for all but lighthouse)", deadline)
        assert "What do you analyze?" in asked
        assert "1) main-contents — Main content (under a minute for 5 pages)" in asked
        assert "2) search — Keyword search (under a minute for 5 pages)" in asked
        os.write(main, b"2\n")
        shown = _read_until(main, "Analysed with 1 plugin(s)", deadline)
        assert proc.wait(timeout=60) == 0, shown
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    assert count(archive, "SELECT count(*) FROM analysis_runs") == 1
    assert count(archive, "SELECT count(*) FROM analysis_runs WHERE plugin = 'search'") == 1


def test_enter_runs_all_but_lighthouse_with_estimates(archive: Path) -> None:
    """Lighthouse named in the config is listed, with its estimate, but Enter leaves it out
    (opt-in: ~16 s a page); each plugin shows its estimated time over the archive's pages."""
    (archive.parent / "nitpicker.toml").write_text(
        '[plugins.analyze.search]\nkeywords = ["Outer"]\n[plugins.analyze.lighthouse]\n')
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "nitpicker.cli", "analyze", str(archive)],
                            cwd=archive.parent, env=env(), stdin=child, stdout=child,
                            stderr=child, close_fds=True)
    os.close(child)
    try:
        deadline = time.monotonic() + 60
        asked = _read_until(main, "Enter for all but lighthouse)", deadline)
        assert "1) search — Keyword search (under a minute for 5 pages)" in asked
        assert ("2) lighthouse — Lighthouse: performance audit (about 1 min for 5 pages; "
                "opt-in: type its number)") in asked
        os.write(main, b"\n")
        shown = _read_until(main, "Analysed with 1 plugin(s)", deadline)
        assert proc.wait(timeout=60) == 0, shown
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    assert count(archive, "SELECT count(*) FROM analysis_runs WHERE plugin = 'lighthouse'") == 0
    assert count(archive, "SELECT count(*) FROM analysis_runs WHERE plugin = 'search'") == 1


def test_not_a_terminal_runs_every_configured_plugin(archive: Path) -> None:
    (archive.parent / "package.json").write_text(json.dumps({"name": "x", "nitpicker": {
        "plugins": {"analyze": {"main-contents": True, "search": {"keywords": ["a"]},
                                "axe": False}}}}))
    done = nitpicker("analyze", str(archive), cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stderr.splitlines()[:2]] == [
        "main-contents", "search"]


# -- bad input -------------------------------------------------------------------------------


def test_not_an_archive(tmp_path: Path) -> None:
    text = tmp_path / "notes.nitpicker"
    text.write_text("hello")
    done = nitpicker("analyze", str(text), "--plugin", "search", cwd=tmp_path)
    assert (done.returncode, done.stderr.splitlines()) == (
        1, [f"Error: Not a nitpicker archive: {text}"])
    assert text.read_text() == "hello" and not Path(f"{text}.lock").exists()


def test_a_locked_archive_is_left_alone(archive: Path) -> None:
    before = fingerprint(archive)
    Path(f"{archive}.lock").write_text(str(os.getpid()))  # this live process holds it
    done = nitpicker("analyze", str(archive), "--plugin", "search", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: Archive is being used by another process (PID {os.getpid()}): {archive}.lock"]
    assert fingerprint(archive) == before


@pytest_twisted.async_fixture
async def no_snapshot(site: FixtureSite, tmp_path: Path) -> Path:
    """An archive whose one root is a JSON file: no HTML snapshot."""
    crawled = await crawl(tmp_path, [site.url("/options/data.json")])
    crawled.conn.close()
    return crawled.path


def test_an_archive_with_no_snapshot(no_snapshot: Path, tmp_path: Path) -> None:
    before = fingerprint(no_snapshot)
    done = nitpicker("analyze", str(no_snapshot), "--plugin", "search", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [(
        f"Error: {no_snapshot}: the archive has no HTML snapshot to analyse (no internal "
        "HTML page was crawled)")]
    assert fingerprint(no_snapshot) == before
    assert not Path(f"{no_snapshot}.lock").exists()


@pytest.mark.parametrize(("name", "text", "message"), [
    ("nitpicker.toml", '[plugins.analyze]\nsearch = true\naxe = "yes"\n',
     ('nitpicker.toml:3: plugins.analyze.axe must be true, false or a table of settings, '
      'not "yes"')),
    ("nitpicker.toml", '[plugins.analyze]\nsearch = \n',
     "nitpicker.toml:2: invalid TOML: Invalid value (at line 2, column 10)"),
    (".nitpickerrc", '{"plugins": {"analyze": {\n  "search": true,\n}}}',
     (".nitpickerrc:3: invalid JSON: Expecting property name enclosed in double quotes "
      "(line 3, column 1)")),
    ("pyproject.toml", '[tool.nitpicker.plugins.analyze]\nsearch = true\nspellcheck = true\n',
     ("pyproject.toml:3: unknown plugin 'spellcheck'. Known plugins: axe, lighthouse, "
      "main-contents, markuplint, search, textlint")),
])
def test_bad_config_is_one_line_with_file_and_line(archive: Path, name: str, text: str,
                                                   message: str) -> None:
    (archive.parent / name).write_text(text)
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: {archive.parent / message}"]
    assert fingerprint(archive) == before
