"""The absolute gates of ``--fail-on`` (``nitpicker/ci/gates.py``, ``nitpicker/cli/gate.py``):
each trips on a fixture archive and passes on one without what it counts (or over its
``>N``), through ``crawl``, ``check``, ``diff`` and ``pipeline``; a tripped gate exits 3, a
failed crawl 1; a bad gate is one ``Error:`` line."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from nitpicker.ci.gates import GATE_EXIT, GateCount, parse_fail_on
from nitpicker.cli.gate import gate_findings, print_gate, run_gate
from nitpicker.query.checks import CHECKS
from tests.helpers import CiCrawls, run, run_with_probe

# (gate, tripped on audit: its count or None, tripped on clean)
GATES = [
    ("broken-links", 3, None),
    ("broken-links>2", 3, None),
    ("broken-links>3", None, None),
    ("4xx", 2, None),
    ("4xx>2", None, None),
    ("5xx", 1, None),
    ("5xx>1", None, None),
    ("issues:critical", 1, None),
    ("issues:high", 6, None),
    ("issues:high>6", None, None),
    ("issues:medium", 15, 3),  # with the analysis's 5 (1) medium warnings; clean: no description, no <h1>
    ("violations", 5, 1),      # diff-probe's title-length warning on every page
    ("violations:warning", 5, 1),
    ("violations:error", None, None),
    ("check:titles/too-short", 2, 1),
    ("check:links/broken-external", None, None),
    ("check:diff-probe/title-length", 5, 1),
    ("check:diff-probe/img-alt", None, None),
]


def _count(archive: Path, text: str) -> tuple[int, list[str]]:
    count = GateCount(parse_fail_on(text))
    gate_findings(archive, count)
    err = io.StringIO()
    code = print_gate(count, err=err)
    return code, err.getvalue().splitlines()


@pytest.mark.parametrize(("gate", "on_audit", "on_clean"), GATES, ids=[g[0] for g in GATES])
def test_each_gate_trips_and_passes(ci_crawls: CiCrawls, gate: str, on_audit: int | None,
                                    on_clean: int | None) -> None:
    for archive, expected in ((ci_crawls.audit, on_audit), (ci_crawls.clean, on_clean)):
        code, lines = _count(archive, gate)
        if expected is None:
            assert (code, lines) == (0, []), (archive.name, lines)
        else:
            assert code == GATE_EXIT
            assert len(lines) == 1 and lines[0].startswith(f"Gate tripped: {gate}: {expected} ("), lines


def test_broken_links_names_the_broken_urls(ci_crawls: CiCrawls) -> None:
    base = ci_crawls.base
    _, lines = _count(ci_crawls.audit, "broken-links")
    assert lines == [(f"Gate tripped: broken-links: 3 ("
                     f"links/broken-internal {base}/error-status/forbidden; "
                     f"links/broken-internal {base}/error-status/not-found; "
                     f"links/broken-internal {base}/error-status/server-error)")]


def test_a_crawl_gates_itself_without_a_baseline(ci_crawls: CiCrawls) -> None:
    """The issue's report: a crawl of a site with 404 links exited 0. Now ``--fail-on`` on
    the crawl alone trips (exit 3, not the 1 of a failed crawl), and the archive is kept."""
    audit = ci_crawls.results["audit"]
    assert audit.returncode == GATE_EXIT, audit.stderr
    tripped = [line.split(":", 2)[1].strip() for line in audit.stderr.splitlines()
               if line.startswith("Gate tripped: ")]
    assert tripped == ["broken-links", "5xx"]  # 4xx>2: two 4xx pages, not over 2
    assert ci_crawls.audit.is_file()
    clean = ci_crawls.results["clean"]
    assert clean.returncode == 0, clean.stderr
    assert "No gate tripped (broken-links, 4xx, 5xx)" in clean.stderr


def test_a_failed_crawl_is_told_apart_from_a_tripped_gate(site: object, tmp_path: Path) -> None:
    """``/errors/``: an internal URL resets the connection (a fetch error: exit 1). The gate
    still says what tripped; the exit code is the crawl's 1."""
    done = run("crawl", site.url("/errors/"), "-o", "errors", "--retry", "0",  # type: ignore[attr-defined]
               "--fail-on", "broken-links", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert any(line.startswith("Gate tripped: broken-links: ") for line in done.stderr.splitlines())


def test_check_and_diff_gate_an_archive(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    archive = ci_crawls.copy("audit", tmp_path)
    tripped = run("check", str(archive), "--fail-on", "5xx,issues:critical>0,broken-links>3",
                  "--silent", cwd=tmp_path)
    assert tripped.returncode == GATE_EXIT, tripped.stderr
    assert [line.split(": ")[1] for line in tripped.stderr.splitlines()] == [
        "5xx", "issues:critical>0"]
    passed = run("check", str(archive), "--fail-on", "broken-links>3", cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    diffed = run("diff", str(ci_crawls.again), str(ci_crawls.audit), "-o", "diff.txt",
                 "--fail-on", "new-broken-links,check:titles/too-short>1", cwd=tmp_path)
    assert diffed.returncode == GATE_EXIT, diffed.stderr
    assert diffed.stderr.startswith("Gate tripped: check:titles/too-short>1: 2 (")
    assert (tmp_path / "diff.txt").is_file()  # the report is written all the same


def test_pipeline_gates_the_analysed_archive(site: object, tmp_path: Path) -> None:
    """``violations:SEVERITY`` counts what the pipeline's analysis found."""
    common = (site.url("/error-status/normal"), "--no-render", "--retry", "0",  # type: ignore[attr-defined]
              "--plugin", "diff-probe")
    tripped = run_with_probe("pipeline", *common, "--archive", "a", "--fail-on",
                             "violations:warning,5xx", "--silent", cwd=tmp_path)
    assert tripped.returncode == GATE_EXIT, tripped.stderr
    assert tripped.stderr.startswith("Gate tripped: violations:warning: 1 (diff-probe/title-length ")
    passed = run_with_probe("pipeline", *common, "--archive", "b", "--fail-on",
                            "violations:error,5xx", cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert "No gate tripped (violations:error, 5xx)" in passed.stderr


def test_run_gate_runs_both_kinds(ci_crawls: CiCrawls) -> None:
    err = io.StringIO()
    gates = parse_fail_on("new-broken-links,broken-links>2")
    assert run_gate(ci_crawls.again, ci_crawls.audit, gates, err=err) == GATE_EXIT
    assert err.getvalue().splitlines()[0].startswith("Gate tripped: broken-links>2: 3 (")
    with pytest.raises(ValueError, match="need a baseline"):
        run_gate(None, ci_crawls.audit, parse_fail_on("new-4xx"))


_VALID = ("Must be one of: broken-links, 4xx, 5xx, issues:PRIORITY, violations:SEVERITY, "
          "check:ID, new-broken-links, new-4xx, new-5xx, removed-pages, "
          "new-violations:SEVERITY (each may end in >N: trips when over N)")


@pytest.mark.parametrize(("value", "message"), [
    ("broken", f"Invalid --fail-on: 'broken'. {_VALID}"),
    ("5xx,links", f"Invalid --fail-on: 'links'. {_VALID}"),
    ("broken-links>", ("Invalid --fail-on: 'broken-links>'. After > comes the count the gate "
                      "may reach, a whole number (broken-links>10), got ''")),
    ("broken-links>-1", ("Invalid --fail-on: 'broken-links>-1'. After > comes the count the "
                        "gate may reach, a whole number (broken-links>10), got '-1'")),
    ("issues:urgent", ("Invalid --fail-on: 'issues:urgent'. The priority must be one of: "
                      "critical, high, medium, low, info")),
    ("violations:fatal", "Invalid --fail-on: 'violations:fatal'. The severity must be one of: "),
    ("4xx:high", ("Invalid --fail-on: '4xx:high'. Only issues, violations, check and "
                 "new-violations take a value after a colon")),
    ("check", ("Invalid --fail-on: 'check'. check needs a check's or an analyzer rule's id: "
              "check:links/broken-internal")),
    ("check:links/broken", "Invalid --fail-on: 'check:links/broken'. No such check. The "
                           "checks: " + ", ".join(c.id for c in CHECKS)),
])
def test_a_bad_gate_is_one_error_line_listing_the_valid_ones(ci_crawls: CiCrawls,
                                                             tmp_path: Path, value: str,
                                                             message: str) -> None:
    archive = ci_crawls.copy("clean", tmp_path)
    before = archive.read_bytes()
    done = run("check", str(archive), "--fail-on", value, cwd=tmp_path)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"Error: {message}"), done.stderr
    assert archive.read_bytes() == before  # checked before the checks run


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-on", "new-4xx"],
     "Error: --fail-on new-4xx needs --baseline OLD: the archive to compare this crawl with"),
    (["--suppressions", "accepted.json"],
     "Error: --suppressions needs --fail-on: the gates the accepted findings are kept out of"),
    (["--fail-on", "5xx", "--suppressions", "missing.json"],
     "Error: Suppressions file not found: missing.json"),
])
def test_crawl_gate_bad_input_before_any_crawl(tmp_path: Path, args: list[str],
                                               message: str) -> None:
    done = run("crawl", "http://127.0.0.1:9/", "-o", "new", *args, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message]
    assert list(tmp_path.iterdir()) == []


def test_an_archive_never_checked_cannot_be_gated(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    archive = tmp_path / "old.nitpicker"
    shutil.copyfile(ci_crawls.clean, archive)
    import sqlite3

    conn = sqlite3.connect(archive)
    with conn:
        conn.execute("DELETE FROM check_runs")
    conn.close()
    done = run("diff", str(ci_crawls.clean), str(archive), "--fail-on", "5xx", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (f"Error: {archive}: the site checks never ran on it, so it has no "
                           f"findings yet (nitpicker check {archive})\n")
