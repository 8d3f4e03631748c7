"""``nitpicker export`` and ``nitpicker diff --format sarif|junit|markdown|github``
(``nitpicker/ci/``): SARIF valid against the official 2.1.0 schema, JUnit read back with the
standard library, the Markdown comment bounded on 10,000 findings, GitHub workflow commands
capped and escaped; and the fingerprints, stable across two crawls of an unchanged site."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from nitpicker.ci.github import CAP, write_github
from nitpicker.ci.markdown import MAX_CHARS, TOP, write_markdown
from nitpicker.ci.source import open_source
from nitpicker.ci.suppressions import Suppression, Suppressions
from nitpicker.query.connection import open_archive
from nitpicker.query.findings import iter_findings
from tests.helpers import CiCrawls, run

SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text())


def _findings(archive: Path) -> list[tuple[str, str, str]]:
    conn = open_archive(archive)
    try:
        return sorted((f["rule"], f["url"], f["fingerprint"]) for f in iter_findings(conn))
    finally:
        conn.close()


def test_every_fingerprint_is_stable_across_two_crawls(ci_crawls: CiCrawls) -> None:
    """Site checks and analyzer violations alike: the same findings, the same fingerprints."""
    first, second = _findings(ci_crawls.audit), _findings(ci_crawls.again)
    assert len(first) == 21 and {rule.split("/")[0] for rule, _, _ in first} >= {
        "links", "status", "diff-probe"}
    assert all(len(fingerprint) == 16 for _, _, fingerprint in first)
    assert first == second


def _accept_first(archive: Path, count: int, tmp_path: Path) -> Path:
    """A suppressions file accepting the first ``count`` findings, most urgent first."""
    conn = open_archive(archive)
    try:
        chosen = [f["fingerprint"] for f, _ in zip(iter_findings(conn), range(count),
                                                    strict=False)]
    finally:
        conn.close()
    path = tmp_path / "accepted.json"
    path.write_text(json.dumps({"version": 1, "suppressions": [
        {"fingerprint": fp, "reason": "known"} for fp in chosen]}))
    return path


def test_sarif_is_valid_and_carries_every_finding(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    accepted = _accept_first(ci_crawls.audit, 1, tmp_path)
    done = run("export", str(ci_crawls.audit), "--format", "sarif", "-o", "out.sarif",
               "--suppressions", str(accepted), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "out.sarif").read_text())
    errors = [error.message for error in Draft4Validator(SCHEMA).iter_errors(log)]
    assert errors == []
    wrong = json.loads(json.dumps(log))
    wrong["runs"][0]["results"][0]["level"] = "critical"  # the schema is really applied
    assert list(Draft4Validator(SCHEMA).iter_errors(wrong))
    (sarif_run,) = log["runs"]
    rules = [rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]]
    assert len(rules) == len(set(rules))
    results = sarif_run["results"]
    expected = _findings(ci_crawls.audit)
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["partialFingerprints"]["nitpicker/v1"]) for r in results) == expected
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    assert results[0]["ruleId"] == "status/server-error" and results[0]["level"] == "error"
    assert results[0]["suppressions"] == [{"kind": "external", "status": "accepted",
                                           "justification": "known"}]
    assert sum("suppressions" in r for r in results) == 1
    probe = [r for r in results if r["ruleId"] == "diff-probe/title-length"]
    assert probe and all(r["level"] == "warning" for r in probe)


def test_diff_sarif_marks_new_and_unchanged(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    done = run("diff", str(ci_crawls.clean), str(ci_crawls.audit), "-f", "sarif", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    log = json.loads(done.stdout)
    assert list(Draft4Validator(SCHEMA).iter_errors(log)) == []
    states = Counter(r["baselineState"] for r in log["runs"][0]["results"])
    # clean is /error-status/normal alone: its 5 check findings and 1 violation are unchanged
    assert states == {"new": 15, "unchanged": 6}
    assert log["runs"][0]["properties"]["fixed"] == 0


def test_junit_is_a_suite_per_category_and_a_failure_per_finding(ci_crawls: CiCrawls,
                                                                  tmp_path: Path) -> None:
    accepted = _accept_first(ci_crawls.audit, 2, tmp_path)
    done = run("export", str(ci_crawls.audit), "-f", "junit", "--suppressions", str(accepted),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    root = ET.fromstring(done.stdout.encode())
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert {"links", "content", "indexing", "security", "html", "diff-probe"} & set(suites)
    failures = [case for case in root.iter("testcase") if case.find("failure") is not None]
    skipped = [case for case in root.iter("testcase") if case.find("skipped") is not None]
    assert len(failures) == 21 - 2 and len(skipped) == 2
    assert int(root.get("failures") or 0) == 19 and int(root.get("skipped") or 0) == 2
    for suite in suites.values():
        cases = suite.findall("testcase")
        assert int(suite.get("tests") or 0) == len(cases)
        assert int(suite.get("failures") or 0) == sum(c.find("failure") is not None
                                                       for c in cases)
    # the two accepted: the 5xx and the first broken link (most urgent first)
    assert {c.get("classname") for c in skipped} == {"status/server-error",
                                                      "links/broken-internal"}
    broken = [c for c in failures if c.get("classname") == "links/broken-internal"]
    assert len(broken) == 2 and all(c.find("failure").get("type") == "high" for c in broken)  # type: ignore[union-attr]
    passed = {c.get("classname") for c in root.iter("testcase") if len(c) == 0}
    assert "links/broken-external" in passed and "links/broken-internal" not in passed


def _synthetic(archive: Path, tmp_path: Path, count: int) -> Path:
    """A copy of ``archive`` with ``count`` more findings, long messages and odd URLs."""
    path = tmp_path / "many.nitpicker"
    shutil.copyfile(archive, path)
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO check_findings (rule, priority, category, url, element, message, "
            "fingerprint) VALUES (?, ?, 'links', ?, ?, ?, ?)",
            [("links/broken-internal", ("critical", "high", "low")[n % 3],
              f"https://example.com/p/{n}?q=(a|b)&x=<y>" + "z" * 300, f"a[href='{n}']|`x`",
              f"Message {n} with | pipes, `ticks`, *stars*\nand a newline " + "m" * 1000,
              n + 1) for n in range(count)])
    conn.close()
    return path


def test_markdown_stays_under_the_comment_limit_on_10000_findings(ci_crawls: CiCrawls,
                                                                  tmp_path: Path) -> None:
    path = _synthetic(ci_crawls.audit, tmp_path, 10_000)
    out = io.StringIO()
    with open_source(path) as source:
        write_markdown(source, out)
    text = out.getvalue()
    assert len(text) < MAX_CHARS <= 65_000
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 5 + 1 + TOP  # a header, the priorities, a header, the findings
    assert "… and 9,9" not in text and f"… and {10_021 - TOP} more" in text
    assert "| 🔴 critical | 3335 |" in text
    assert all(line.count(" | ") == 4 for line in rows[-TOP:])  # no cell broke its row


def test_markdown_in_a_comparison_counts_new_and_fixed(ci_crawls: CiCrawls,
                                                       tmp_path: Path) -> None:
    done = run("diff", str(ci_crawls.audit), str(ci_crawls.clean), "-f", "markdown",
               "-o", "comment.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "comment.md").read_text()
    assert text.startswith(f"## nitpicker: 6 findings on {ci_crawls.base}/error-status/normal\n")
    assert f"**0 new**, 6 unchanged, **15 fixed** since {ci_crawls.audit}." in text
    assert "No new findings. ✅" in text


def test_github_commands_are_capped_and_escaped(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    path = _synthetic(ci_crawls.audit, tmp_path, 200)
    out = io.StringIO()
    with open_source(path) as source:
        write_github(source, out)
    lines = out.getvalue().splitlines()
    assert len(lines) == CAP + 1
    assert lines[-1] == f"::notice title=nitpicker::{221 - CAP} more findings: nitpicker query many.nitpicker issues"
    first = lines[0]
    assert first.startswith("::error file=https%3A//example.com/p/0?q=(a|b)&x=<y>zz")
    assert ",title=links/broken-internal%3A Broken internal links::Message 0 with" in first
    assert "%0A" not in first and "\n" not in first  # the message's newline was collapsed
    done = run("export", str(ci_crawls.audit), "-f", "github", cwd=tmp_path)
    assert done.stdout.splitlines()[0] == (
        f"::error file={ci_crawls.base.replace(':', '%3A')}/error-status/server-error,"
        "title=status/server-error%3A Server errors (5xx)::Answers 500 Internal Server Error")


def test_suppressed_findings_are_left_out_of_the_annotations(ci_crawls: CiCrawls) -> None:
    conn = open_archive(ci_crawls.audit)
    fingerprints = [f["fingerprint"] for f in iter_findings(conn)]
    conn.close()
    out = io.StringIO()
    with open_source(ci_crawls.audit, Suppressions(
            Suppression(fp, "known") for fp in fingerprints[1:])) as source:
        write_github(source, out)
        assert source.summary().suppressed == len(fingerprints) - 1
    assert len(out.getvalue().splitlines()) == 1


@pytest.mark.parametrize(("args", "message"), [
    (["-f", "pdf"], ("Error: Invalid --format: 'pdf'. Must be one of: sarif, junit, markdown, "
                    "github")),
    (["-f", "sarif", "-o", "no/dir/x.sarif"], "Error: Output directory does not exist: no/dir"),
    (["-f", "sarif", "-o", "a.nitpicker"], ("Error: Output would overwrite the archive: "
                                           "a.nitpicker")),
    (["-f", "sarif", "--suppressions", "none.json"],
     "Error: Suppressions file not found: none.json"),
])
def test_export_bad_input_is_one_line(ci_crawls: CiCrawls, tmp_path: Path, args: list[str],
                                      message: str) -> None:
    ci_crawls.copy("audit", tmp_path).rename(tmp_path / "a.nitpicker")
    done = run("export", "a.nitpicker", *args, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message]
    assert done.stdout == ""
    assert [p.name for p in tmp_path.iterdir()] == ["a.nitpicker"]
