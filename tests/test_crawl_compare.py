"""``nitpicker crawl --diff A B`` (the original's URL lists) and ``nitpicker crawl …
--baseline OLD --fail-on …`` (the CI gate at the end of a crawl):
``nitpicker/cli/crawl_compare.py``, ``nitpicker/cli/gate.py``."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from fixtures.site import FixtureSite
from nitpicker.cli.gate import GATE_EXIT, parse_fail_on, run_gate
from tests.helpers import ChangesCrawls, run


def test_diff_writes_the_html_page_urls_of_each_archive(changes_crawls: ChangesCrawls,
                                                        tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("an older list")  # replaced, as the original does
    result = run("crawl", "--diff", str(changes_crawls.old), str(changes_crawls.new),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    base = changes_crawls.base
    # in scope, text/html, 200-399, the natural URL order: the 404 target is not in b.txt
    assert (tmp_path / "a.txt").read_text() == "\n".join(
        f"{base}/changes/{path}" for path in ("", "linker", "removed", "retitled", "stays",
                                              "target"))
    assert (tmp_path / "b.txt").read_text() == "\n".join(
        f"{base}/changes/{path}" for path in ("", "added", "linker", "retitled", "stays"))
    assert result.stdout.startswith("Wrote a.txt (6 URLs of ")
    assert f"nitpicker diff {changes_crawls.old} {changes_crawls.new}" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


@pytest.mark.parametrize(("args", "message"), [
    (["one.nitpicker"], "Error: --diff takes exactly two file paths to compare"),
    (["a", "b", "c"], "Error: --diff takes exactly two file paths to compare"),
    (["a", "b", "--append", "x.nitpicker"], "Error: --diff cannot be used with --append"),
    (["a", "b", "--inventory", "urls.txt"], "Error: --diff cannot be used with --inventory"),
    (["a", "b", "--retry-failed", "x.nitpicker"],
     "Error: --diff cannot be used with --retry-failed"),
    (["old.nitpicker", "missing.nitpicker"], "Error: Archive not found: missing.nitpicker"),
])
def test_diff_bad_input_is_one_line_and_writes_nothing(
        changes_crawls: ChangesCrawls, tmp_path: Path, args: list[str], message: str) -> None:
    shutil.copyfile(changes_crawls.old, tmp_path / "old.nitpicker")
    result = run("crawl", "--diff", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [message]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.nitpicker"]


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-on", "new-4xx"],
     "Error: --fail-on new-4xx needs --baseline OLD: the archive to compare this crawl with"),
    (["--baseline", "old.nitpicker"],
     ("Error: --baseline needs --fail-on: the categories that fail the crawl (for the whole "
     "comparison, run nitpicker diff)")),
    (["--baseline", "missing.nitpicker", "--fail-on", "new-4xx"],
     "Error: --baseline: Archive not found: missing.nitpicker"),
    (["--baseline", "old.nitpicker", "--fail-on", "new-404"],
     ("Error: Invalid --fail-on: 'new-404'. Must be one of: broken-links, 4xx, 5xx, "
      "issues:PRIORITY, violations:SEVERITY, check:ID, new-broken-links, new-4xx, new-5xx, "
      "removed-pages, new-violations:SEVERITY (each may end in >N: trips when over N)")),
    (["--baseline", "held.nitpicker", "--fail-on", "new-4xx"],
     "Error: --baseline: held.nitpicker is being written by a running crawl (PID "),
])
def test_baseline_bad_input_is_one_line_before_any_crawl(
        changes_crawls: ChangesCrawls, tmp_path: Path, args: list[str], message: str) -> None:
    shutil.copyfile(changes_crawls.old, tmp_path / "old.nitpicker")
    shutil.copyfile(changes_crawls.old, tmp_path / "held.nitpicker")
    (tmp_path / "held.nitpicker.lock").write_text(f"{os.getpid()}\ncrawl\n")
    result = run("crawl", "http://127.0.0.1:9/", "-o", "new", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(message), \
        result.stderr
    assert not (tmp_path / "new.nitpicker").exists()


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """``/changes/`` crawled, then crawled changed three times with ``--baseline`` and
    different gates."""
    directory = tmp_path_factory.mktemp("gated")
    results: dict[str, object] = {"dir": directory}
    with FixtureSite() as site:
        first = run("crawl", site.url("/changes/"), "-o", "old", "--retry", "0", "--silent",
                    cwd=directory)
        assert first.returncode == 0, first.stderr
        site.changed = True
        for name, fail_on in (("tripped", "new-5xx,new-broken-links,removed-pages"),
                              ("passed", "new-5xx,new-violations"),
                              ("silent", "new-5xx")):
            results[name] = run("crawl", site.url("/changes/"), "-o", name, "--retry", "0",
                                "--baseline", "old.nitpicker", "--fail-on", fail_on,
                                *(["--silent"] if name == "silent" else []), cwd=directory)
        results["base"] = site.base_url
    return results


def test_a_crawl_with_a_baseline_exits_3_when_a_gate_trips(gated: dict[str, object]) -> None:
    result = gated["tripped"]
    base = gated["base"]
    assert result.returncode == GATE_EXIT == 3, result.stderr  # type: ignore[attr-defined]
    lines = [line for line in result.stderr.splitlines()  # type: ignore[attr-defined]
             if line.startswith("Gate tripped: ")]
    assert lines == [
        (f"Gate tripped: new-broken-links: 1 ({base}/changes/linker -> {base}/changes/target  "
        "(200 -> 404))"),
        f"Gate tripped: removed-pages: 1 ({base}/changes/removed  200  'Removed')"]
    assert (Path(str(gated["dir"])) / "tripped.nitpicker").is_file()  # the crawl is kept


def test_a_crawl_with_a_baseline_exits_0_when_no_gate_trips(gated: dict[str, object]) -> None:
    result = gated["passed"]
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    assert ("Baseline old.nitpicker: no gate tripped (new-5xx, new-violations)"
            in result.stderr)  # type: ignore[attr-defined]
    silent = gated["silent"]
    assert silent.returncode == 0 and silent.stderr == ""  # type: ignore[attr-defined]


def test_run_gate_is_the_reusable_gate(analysed_changes: ChangesCrawls) -> None:
    """What ``pipeline`` calls once the crawl is analysed."""
    err = io.StringIO()
    gates = parse_fail_on("new-violations:error,new-5xx")
    assert run_gate(analysed_changes.old, analysed_changes.new, gates, err=err) == GATE_EXIT
    assert err.getvalue().startswith("Gate tripped: new-violations:error: 1 (")
    quiet = io.StringIO()
    assert run_gate(analysed_changes.new, analysed_changes.old,
                    parse_fail_on("new-violations:error"), err=quiet) == 0
    assert quiet.getvalue() == ""
