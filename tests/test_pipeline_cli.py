"""``nitpicker pipeline`` (crawl → analyze → report in one process) in a subprocess over the
fixture site: the report it writes, the skipped report step, the exit codes of SPEC §2.4, bad
input refused before anything is written, and its options being those of the three commands.
(``tests/test_pipeline.py`` is about the archive's Scrapy item pipeline.)"""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from nitpicker.cli import app
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.pipeline import STEPS, final_exit
from nitpicker.query.report_rows import SHEET_NAMES
from nitpicker.render.chromium import find_chromium
from tests.fake_plugins import register
from tests.helpers import ROOT, SHEET_URL, count, recorded, run

if TYPE_CHECKING:
    from fixtures.sheets_fake import FakeSheets
    from fixtures.site import FixtureSite

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
FAST = ("--no-render", "--retry", "0", "--plugin", "search", "--search-keywords", "Page")
"""A quick run: plain HTTP, no retries, one pure-Python plugin."""


def headings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "[pipeline]" in line]


@pytest.mark.smoke
def test_pipeline_writes_the_html_report_of_the_fixture_site(site: FixtureSite,
                                                             tmp_path: Path) -> None:
    result = run("pipeline", site.url("/recursive/"), *FAST, "--format", "html",
                 "-o", "report.html", "--archive", "site", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert headings(result.stderr) == [STEPS["crawl"], STEPS["analyze"], STEPS["report"],
                                       STEPS["done"]]
    assert "4 pages in scope" in result.stderr  # the crawl's summary
    assert "search: 4 pages" in result.stderr  # the analysis's
    assert "Report written: report.html" in result.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    for chart in ("chart-status", "chart-depth", "chart-size"):
        assert f'id="{chart}"' in html, chart
    for page in ("/recursive/", "/recursive/page-a", "/recursive/page-b", "/recursive/page-c"):
        assert site.url(page) in html, page
    archive = tmp_path / "site.nitpicker"
    assert count(archive, "SELECT count(*) FROM pages WHERE is_target = 1") == 4
    assert count(archive, "SELECT count(*) FROM page_values WHERE plugin = 'search'") == 4


def test_no_report_flag_skips_the_report_step(site: FixtureSite, tmp_path: Path) -> None:
    result = run("pipeline", site.url("/recursive/"), *FAST, "--archive", "site",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert headings(result.stderr) == [STEPS["crawl"], STEPS["analyze"], STEPS["no report"],
                                       STEPS["done"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.nitpicker"]
    assert count(tmp_path / "site.nitpicker", "SELECT count(*) FROM page_values") == 4


def test_pipeline_reports_into_a_google_spreadsheet(site: FixtureSite, tmp_path: Path,
                                                    request: pytest.FixtureRequest) -> None:
    """``--sheet`` with ``--credentials``: the nine tabs, sent to the local fake of Sheets v4
    (whose address the ``fake`` fixture puts in the environment)."""
    sheets: FakeSheets = request.getfixturevalue("fake")
    key: Path = request.getfixturevalue("key_file")
    result = run("pipeline", site.url("/recursive/"), *FAST, "--sheet", SHEET_URL,
                 "-C", str(key), "--archive", "site", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert headings(result.stderr)[-2:] == [STEPS["report"], STEPS["done"]]
    assert f"Report written: {SHEET_URL}" in result.stderr
    assert list(sheets.tabs) == ["Sheet1", *SHEET_NAMES]


def test_silent_prints_nothing(site: FixtureSite, tmp_path: Path) -> None:
    result = run("pipeline", site.url("/recursive/"), *FAST, "--format", "csv", "-o", "out",
                 "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert (tmp_path / "out" / "page-list.csv").is_file()


@pytest.mark.parametrize(("strict", "code"), [((), 2), (("--strict",), 1)])
def test_only_out_of_scope_errors_exit_2_without_analysis_or_report(
        site: FixtureSite, tmp_path: Path, strict: tuple[str, ...], code: int) -> None:
    # /errors/ links to a refused external URL and to /errors/reset; the reset page excluded
    result = run("pipeline", site.url("/errors/"), *FAST, "--exclude", "/errors/reset",
                 *strict, "--format", "html", "-o", "report.html", "--archive", "site",
                 cwd=tmp_path)
    assert result.returncode == code, result.stderr
    assert headings(result.stderr) == [STEPS["crawl"]]
    assert "1 external" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: the crawl had fetch errors (exit {code}): analyze and report skipped; "
        f"the archive is {tmp_path / 'site.nitpicker'}")
    assert not (tmp_path / "report.html").exists()
    assert count(tmp_path / "site.nitpicker", "SELECT count(*) FROM analysis_runs") == 0


def test_an_in_scope_fetch_error_exits_1_without_analysis(site: FixtureSite,
                                                          tmp_path: Path) -> None:
    result = run("pipeline", site.url("/errors/reset"), *FAST, "--format", "html",
                 "-o", "report.html", cwd=tmp_path)
    assert result.returncode == 1
    assert headings(result.stderr) == [STEPS["crawl"]]
    assert not (tmp_path / "report.html").exists()


def test_an_existing_report_path_exits_1_before_crawling(site: FixtureSite,
                                                        tmp_path: Path) -> None:
    (tmp_path / "report.html").write_text("kept")
    result = run("pipeline", site.url("/recursive/"), *FAST, "--format", "html",
                 "-o", "report.html", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: Output path exists, not overwritten: report.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no archive
    assert (tmp_path / "report.html").read_text() == "kept"


@pytest.mark.parametrize(("args", "message"), [
    (["not a url"], 'Error: Invalid URL: "not a url"'),
    ([], "Error: Give a URL to crawl"),
    (["URL", "--archive", "missing-dir/a"], "Error: Output directory does not exist"),
    (["URL", "--plugin", "nope"], "Error: Unknown plugin(s): nope."),
    (["URL", "--plugin", "main-contents", "--plugin", "search", "--search-keywords", "/[/"],
     "Error: plugin search: setting 'keywords': invalid regular expression '/[/'"),
    (["URL", "--plugin", "search", "--plugin", "main-contents", "--main-content-selector", "a["],
     "Error: plugin main-contents: setting 'mainContentSelector' has an invalid CSS selector"),
    (["URL", "--format", "pdf"], "Error: Unknown report format: 'pdf'"),
    (["URL", "--format", "csv", "--only", "Nope"], "Error: Unknown sheet 'Nope'"),
    (["URL", "--only", "Links"], "Error: --only chooses the report's sheets: give --format"),
    (["URL", "-o", "missing-dir/r.html"], "Error: Output directory not found: missing-dir"),
    (["URL", "--sheet", "https://docs.google.com/spreadsheets/d/abc/edit", "--format", "csv"],
     "Error: --sheet writes to Google Sheets"),
    (["URL", "--sheet", "https://docs.google.com/spreadsheets/d/abc/edit", "-C", "none.json"],
     "Error: Credentials file not found: none.json"),
    (["URL", "--resume", "x.nitpicker"], "Error: No such option: --resume"),
    (["URL", "--baseline", "none.nitpicker", "--fail-on", "new-4xx"], "Error: --baseline: "),
    (["URL", "--fail-on", "new-4xx"], "Error: --fail-on new-4xx needs --baseline OLD"),
    (["URL", "--fail-on", "issues:urgent"], "Error: Invalid --fail-on: 'issues:urgent'. "),
])
def test_bad_input_is_one_line_before_anything_is_written(
        site: FixtureSite, tmp_path: Path, args: list[str], message: str) -> None:
    args = [site.url("/recursive/") if arg == "URL" else arg for arg in args]
    result = run("pipeline", *args, "--no-render", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()], result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_baseline_gate_trips_after_the_report(site: FixtureSite, tmp_path: Path) -> None:
    """``--baseline OLD --fail-on removed-pages``: the report is written, then exit 3 saying
    which gate tripped; a crawl of the same pages passes it."""
    old = run("pipeline", site.url("/recursive/"), site.url("/meta/"), *FAST, "--archive", "old",
              cwd=tmp_path)
    assert old.returncode == 0, old.stderr
    same = run("pipeline", site.url("/recursive/"), site.url("/meta/"), *FAST, "--archive",
               "same", "--baseline", "old.nitpicker", "--fail-on", "removed-pages",
               "--format", "csv", "-o", "same-csv", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    fewer = run("pipeline", site.url("/recursive/"), *FAST, "--archive", "fewer",
                "--baseline", "old.nitpicker", "--fail-on", "removed-pages", "--format", "html",
                "-o", "fewer.html", cwd=tmp_path)
    assert fewer.returncode == 3, fewer.stderr
    assert "removed-pages" in fewer.stderr, fewer.stderr
    assert (tmp_path / "fewer.html").stat().st_size > 0  # the report was written first


@pytest.mark.slow
def test_ctrl_c_during_the_crawl_stops_the_pipeline(site: FixtureSite, tmp_path: Path) -> None:
    """The crawl stops as ``crawl``'s does (closed, resumable); no analysis, no report, 130."""
    archive = tmp_path / "site.nitpicker"
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nitpicker.cli", "pipeline", site.url("/recursive/"), *FAST,
             "--interval", "5000", "--format", "html", "-o", "report.html",
             "--archive", "site"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
            stderr=stderr)
    end = time.monotonic() + 60
    while recorded(archive) < 1:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < end, "the crawl did not start"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    out = log.read_text()
    assert headings(out) == [STEPS["crawl"]]
    assert out.strip().splitlines()[-1] == (
        "Interrupted: the crawl stopped; analyze and report skipped. The archive is kept: "
        f"nitpicker crawl --resume {archive}")
    assert not (tmp_path / "report.html").exists()
    assert count(archive, "SELECT count(*) FROM runs WHERE error_code = 'killed'") == 1
    assert count(archive, "SELECT count(*) FROM analysis_runs") == 0


def test_ctrl_c_during_the_analysis_says_what_is_kept(site: FixtureSite, tmp_path: Path) -> None:
    """Ctrl-C once the crawl is done: the pages analysed so far are kept, no report, 130, and
    the last line says so (not the root group's "Interrupted: nothing was written")."""
    archive = tmp_path / "site.nitpicker"
    plugins = register(tmp_path / "fake-plugins")
    (tmp_path / "nitpicker.toml").write_text("[plugins.analyze.scripted]\ndelay = 0.4\n")
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nitpicker.cli", "pipeline", site.url("/contents/"),
             "--no-render", "--retry", "0", "--plugin", "scripted", "--format", "html", "-o",
             "report.html", "--archive", "site"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(plugins)])})
    end = time.monotonic() + 60
    while _analysed(archive) < 1:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < end, "no page analysed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    out = log.read_text()
    kept = _analysed(archive)
    assert 1 <= kept < 5
    assert headings(out) == [STEPS["crawl"], STEPS["analyze"]]
    assert "nothing was written" not in out and "Traceback" not in out
    assert out.strip().splitlines()[-1] == (
        f"Interrupted: the analysis stopped; report skipped. The archive and its {kept} page "
        f"analyses finished are kept: nitpicker analyze {archive} continues")
    assert not (tmp_path / "report.html").exists()
    assert count(archive, "SELECT count(*) FROM analysis_runs WHERE outcome = 'interrupted'") == 1


def _analysed(archive: Path) -> int:
    try:
        return count(archive, "SELECT count(*) FROM analyzed_pages")
    except sqlite3.Error:  # no archive, or no analysis table yet
        return 0


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium")
def test_a_rendered_pipeline(site: FixtureSite, tmp_path: Path) -> None:
    """The default: pages rendered in Chromium (the title JavaScript sets is the report's)."""
    result = run("pipeline", site.url("/render/js-links"), "--max-pages", "3", "--retry", "0",
                 "--plugin", "main-contents", "--format", "html", "-o", "report.html",
                 "--archive", "site", cwd=tmp_path, timeout=180)
    assert result.returncode == 0, result.stderr
    assert headings(result.stderr)[-1] == STEPS["done"]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "After JavaScript" in html and "Before JavaScript" not in html
    assert count(tmp_path / "site.nitpicker",
                 "SELECT count(*) FROM analysis_runs WHERE plugin = 'main-contents'") == 1


# -- the options: those of crawl, analyze and report, defined once -----------------------------


def _options(command: Any) -> dict[str, Any]:
    """A command's parameters by name."""
    return {param.name or "": param for param in command.params}


def test_pipeline_takes_the_options_of_crawl_analyze_and_report() -> None:
    pipeline = _options(COMMANDS["pipeline"])
    # --baseline/--fail-on: crawl's names, but the gate runs after the report here
    own = {"archive", "verbose", "silent", "baseline", "fail_on"}
    sources = {name: _options(COMMANDS[name]) for name in ("crawl", "analyze", "report")}
    for name, param in pipeline.items():
        if name in own:
            continue
        defined = (param.opts, param.secondary_opts, param.default, getattr(param, "help", None))
        twins = [(s[name].opts, s[name].secondary_opts, s[name].default,
                  getattr(s[name], "help", None)) for s in sources.values() if name in s]
        assert defined in twins, name
    # every crawl option of a new crawl, every plugin choice, every report destination
    crawl_only = {"output", "resume", "append", "retry_failed", "like", "verbose", "silent",
                  "diff", "workers", "frontier", "coordinate", "merge"}  # and a distributed crawl's
    assert set(sources["crawl"]) - crawl_only <= set(pipeline)
    assert set(sources["analyze"]) - {"file", "force", "verbose", "silent"} <= set(pipeline)
    # report's --all (every sheet, without asking): pipeline never asks, so it is report's own
    assert set(sources["report"]) - {"file", "all_sheets", "verbose", "silent"} <= set(pipeline)
    assert pipeline["output"].opts == ["--output", "-o"]  # the report's, not the archive's


@pytest.mark.parametrize(("crawl", "analyze", "code"), [(0, 0, 0), (0, 1, 1)])
def test_final_exit(crawl: int, analyze: int, code: int) -> None:
    assert final_exit(crawl=crawl, analyze=analyze) == code


@dataclasses.dataclass(frozen=True)
class _Colour:
    colour: Annotated[str, typer.Option("--colour")] = "red"


@dataclasses.dataclass(frozen=True)
class _Size:
    size: Annotated[int, typer.Option("--size")] = 1


def test_with_bundles_gathers_each_bundle() -> None:
    seen: list[Any] = []

    @with_bundles
    def command(colour: _Colour, size: _Size, name: str = "x") -> None:
        seen.append((colour, size, name))

    demo = typer.Typer()
    demo.command()(command)
    CliRunner().invoke(demo, ["--size", "3", "--colour", "blue"],
                                     catch_exceptions=False)
    assert seen == [(_Colour("blue"), _Size(3), "x")]


def test_with_bundles_refuses_a_name_defined_twice() -> None:
    def command(colour: _Colour, other: _Colour) -> None: ...

    with pytest.raises(ValueError, match="defined twice: colour"):
        with_bundles(command)
