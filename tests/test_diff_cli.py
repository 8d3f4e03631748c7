"""``nitpicker diff OLD NEW`` (``nitpicker/cli/diff.py``): the reports, the ``--fail-on``
gate's exit codes, ``--map``, and one line for each bad input."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from nitpicker.query import compare_archives, summarise_diff
from tests.helpers import ChangesCrawls, run


def diff(crawls: ChangesCrawls, *args: str):  # type: ignore[no-untyped-def]
    return run("diff", *args, cwd=crawls.dir)


def test_the_text_report_counts_every_category_and_lists_the_first_items(
        changes_crawls: ChangesCrawls) -> None:
    result = diff(changes_crawls, "old.nitpicker", "new.nitpicker", "--limit", "2")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    base = changes_crawls.base
    assert "pages: 5 in both, 1 added, 1 removed" in out
    assert "page_changes                3  changed facts of pages in both" in out
    assert "violations_new              0  findings in NEW not in OLD" in out
    assert "findings: none compared (no analyzer ran on both archives)" in out
    assert f"  {base}/changes/retitled  title: 'Old Title' -> 'New Title'" in out
    assert f"  {base}/changes/target  status: 200 -> 404" in out
    assert "  … and 1 more" in out  # the third change, beyond --limit 2
    assert f"  {base}/changes/linker -> {base}/changes/target  (200 -> 404)" in out
    assert "No URLs in common" not in out
    assert result.stderr == ""


def test_the_json_report_has_every_item(changes_crawls: ChangesCrawls, tmp_path: Path) -> None:
    report = tmp_path / "diff.json"
    report.write_text("an older report")  # replaced
    result = diff(changes_crawls, "old.nitpicker", "new.nitpicker", "--format", "json",
                  "--limit", "1", "-o", str(report))
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    with compare_archives(changes_crawls.old, changes_crawls.new) as expected:
        summary = summarise_diff(expected)
    assert data["schema"] == 1
    assert data["common_pages"] == 5 and data["url_map"] is None
    assert data["categories"] == summary["categories"]
    assert len(data["categories"]["page_changes"]["items"]) == 3  # --limit is the text's
    assert [p.name for p in tmp_path.iterdir()] == ["diff.json"]  # no temporary file left


@pytest.mark.parametrize(("fail_on", "code", "tripped"), [
    (None, 0, []),
    ("new-5xx", 0, []),
    ("new-broken-links", 3, ["new-broken-links"]),
    ("new-4xx", 3, ["new-4xx"]),
    ("removed-pages", 3, ["removed-pages"]),
    ("new-5xx,removed-pages,new-broken-links", 3, ["removed-pages", "new-broken-links"]),
])
def test_the_gate_exits_3_when_a_chosen_category_is_not_empty(
        changes_crawls: ChangesCrawls, fail_on: str | None, code: int,
        tripped: list[str]) -> None:
    args = ["old.nitpicker", "new.nitpicker", "-f", "json", "-o", "report.json"]
    result = diff(changes_crawls, *args, *(["--fail-on", fail_on] if fail_on else []))
    assert result.returncode == code, result.stderr
    lines = result.stderr.splitlines()
    assert [line.split(":", 2)[1].strip() for line in lines] == tripped
    assert all(line.startswith("Gate tripped: ") for line in lines)
    if "new-broken-links" in tripped:
        base = changes_crawls.base
        assert (f"Gate tripped: new-broken-links: 1 ({base}/changes/linker -> "
                f"{base}/changes/target  (200 -> 404))") in lines


def test_the_gate_the_other_way_round(changes_crawls: ChangesCrawls) -> None:
    """NEW → OLD: the broken link is fixed (no new broken link), a page is removed."""
    result = diff(changes_crawls, "new.nitpicker", "old.nitpicker",
                  "--fail-on", "new-broken-links,new-4xx")
    assert result.returncode == 0, result.stderr
    result = diff(changes_crawls, "new.nitpicker", "old.nitpicker", "--fail-on",
                  "removed-pages")
    assert result.returncode == 3
    assert f"removed-pages: 1 ({changes_crawls.base}/changes/added  200  'Added')" in \
        result.stderr


def test_map_compares_a_moved_site(changes_crawls: ChangesCrawls) -> None:
    old, moved = changes_crawls.base, changes_crawls.moved_base
    result = diff(changes_crawls, "old.nitpicker", "moved.nitpicker", "-f", "json",
                  "--map", f"{old}/={moved}/", "--fail-on", "removed-pages")
    assert result.returncode == 3
    data = json.loads(result.stdout)
    assert data["url_map"] == {"old_prefix": f"{old}/", "new_prefix": f"{moved}/"}
    assert data["common_pages"] == 5
    assert data["categories"]["pages_removed"]["items"] == [
        {"url": f"{old}/changes/removed", "status": 200, "title": "Removed"}]
    assert data["categories"]["page_changes"]["count"] == 3
    assert result.stderr.startswith("Gate tripped: removed-pages: 1 ")


def test_no_urls_in_common_is_said_up_front(changes_crawls: ChangesCrawls) -> None:
    result = diff(changes_crawls, "old.nitpicker", "moved.nitpicker")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].startswith("No URLs in common: OLD (")
    assert "--map OLD_PREFIX=NEW_PREFIX" in lines[2]
    assert lines[3] == "pages: 0 in both, 6 added, 6 removed"
    as_json = diff(changes_crawls, "old.nitpicker", "moved.nitpicker", "-f", "json")
    assert as_json.returncode == 0
    assert as_json.stderr.startswith("Note: No URLs in common")
    assert json.loads(as_json.stdout)["common_pages"] == 0


def _newer(crawls: ChangesCrawls) -> str:
    shutil.copyfile(crawls.new, crawls.dir / "newer.nitpicker")
    conn = sqlite3.connect(crawls.dir / "newer.nitpicker")
    conn.execute("INSERT INTO migrations(name, applied_at) VALUES ('9999_future', '')")
    conn.commit()
    conn.close()
    return "newer.nitpicker"


def _held(crawls: ChangesCrawls) -> str:
    shutil.copyfile(crawls.new, crawls.dir / "held.nitpicker")
    (crawls.dir / "held.nitpicker.lock").write_text(f"{os.getpid()}\ncrawl\n")  # alive
    return "held.nitpicker"


def _not_archive(crawls: ChangesCrawls) -> str:
    (crawls.dir / "notes.txt").write_text("not an archive")
    return "notes.txt"


@pytest.mark.parametrize(("make_new", "extra", "message"), [
    (lambda c: "old.nitpicker", [], "Error: OLD and NEW are the same file: old.nitpicker"),
    (_not_archive, [], "Error: Not a nitpicker archive: notes.txt"),
    (lambda c: "missing.nitpicker", [], "Error: Archive not found: missing.nitpicker"),
    (_newer, [], "Error: newer.nitpicker: written by a newer nitpicker (schema 9999_future)"),
    (_held, [], "Error: held.nitpicker is being written by a running crawl (PID "),
    (lambda c: "new.nitpicker", ["--map", "nothing"], "Error: Invalid --map: 'nothing'."),
    (lambda c: "new.nitpicker", ["--fail-on", "new-4xx,new-findings"],
     ("Error: Invalid --fail-on: 'new-findings'. Must be one of: broken-links, 4xx, 5xx, "
      "issues:PRIORITY, violations:SEVERITY, check:ID, new-broken-links, new-4xx, new-5xx, "
      "removed-pages, new-violations:SEVERITY (each may end in >N")),
    (lambda c: "new.nitpicker", ["--fail-on", "new-violations:fatal"],
     ("Error: Invalid --fail-on: 'new-violations:fatal'. The severity must be one of: "
      "critical, serious, error, moderate, warning, minor, info")),
    (lambda c: "new.nitpicker", ["--fail-on", "new-4xx:error"],
     "Error: Invalid --fail-on: 'new-4xx:error'. Only new-violations takes a severity"),
    (lambda c: "new.nitpicker", ["--format", "pdf"],
     ("Error: Invalid --format: 'pdf'. Must be one of: text, json, html, sarif, junit, "
     "markdown, github")),
    (lambda c: "new.nitpicker", ["--limit", "-3"], "Error: --limit must not be negative, got -3"),
    (lambda c: "new.nitpicker", ["-o", "no/such/dir/report.txt"],
     "Error: Output directory does not exist: no/such/dir"),
    (lambda c: "new.nitpicker", ["-o", "new.nitpicker"],
     "Error: Output would overwrite an archive compared: new.nitpicker"),
])
def test_bad_input_is_one_line_and_exit_1_and_writes_nothing(
        changes_crawls: ChangesCrawls, make_new, extra: list[str],  # type: ignore[no-untyped-def]
        message: str) -> None:
    report = changes_crawls.dir / "bad-input-report.txt"
    archives = {path: path.read_bytes() for path in (changes_crawls.old, changes_crawls.new)}
    new = make_new(changes_crawls)
    result = diff(changes_crawls, "old.nitpicker", new, *extra,
                  *([] if "-o" in extra else ["-o", str(report)]))
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stdout == ""
    assert not report.exists()
    assert all(path.read_bytes() == data for path, data in archives.items())


@pytest.mark.parametrize(("fail_on", "code", "tripped"), [
    ("new-violations", 3, ["new-violations: 2 ("]),
    ("new-violations:warning", 3, ["new-violations:warning: 2 ("]),
    ("new-violations:error", 3, [
        ("new-violations:error: 1 ({base}/changes/stays  error diff-probe/img-alt at 7:1  "
        '<img src="/files/photo.png" alt=""/>)')]),
    ("new-violations:SERIOUS", 3, ["new-violations:SERIOUS: 1 ("]),
    ("new-violations:critical", 0, []),
    ("new-violations:critical,new-5xx", 0, []),
    ("new-violations:critical,removed-pages", 3, ["removed-pages: 1 ("]),
])
def test_the_new_violations_gate_counts_that_severity_or_worse(
        analysed_changes: ChangesCrawls, fail_on: str, code: int, tripped: list[str]) -> None:
    result = diff(analysed_changes, "old.nitpicker", "new.nitpicker", "-f", "json",
                  "-o", "report.json", "--fail-on", fail_on)
    assert result.returncode == code, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == len(tripped), lines
    for line, start in zip(lines, tripped, strict=True):
        assert line.startswith("Gate tripped: " + start.format(base=analysed_changes.base)), line


def test_the_gate_does_not_trip_on_the_backlog(analysed_changes: ChangesCrawls,
                                                tmp_path: Path) -> None:
    """Known findings (persisting) never trip new-violations: the archive against a copy."""
    shutil.copyfile(analysed_changes.new, tmp_path / "again.nitpicker")
    result = diff(analysed_changes, "new.nitpicker", str(tmp_path / "again.nitpicker"),
                  "--fail-on", "new-violations:info")
    assert result.returncode == 0, result.stderr
    assert "violations_persisting       5  findings in both" in result.stdout


def test_the_reports_include_the_findings(analysed_changes: ChangesCrawls) -> None:
    base = analysed_changes.base
    text = diff(analysed_changes, "old.nitpicker", "new.nitpicker").stdout
    assert "findings: compared for diff-probe" in text
    assert (f"  {base}/changes/retitled  warning diff-probe/no-bold at 8:1 (was 7:1)  "
            "<b>body</b>") in text
    assert f"  {base}/changes/target  diff-probe.title: 'Target' -> 'Gone'" in text
    data = json.loads(diff(analysed_changes, "old.nitpicker", "new.nitpicker", "-f",
                           "json").stdout)
    assert data["compared_plugins"] == ["diff-probe"]
    categories = data["categories"]
    assert [categories[name]["count"] for name in ("violations_new", "violations_fixed",
                                                   "violations_persisting",
                                                   "values_changed")] == [2, 3, 3, 2]
    first = categories["violations_new"]["items"][1]
    assert set(first) == {"url", "plugin", "validator", "severity", "rule", "message", "code",
                          "location", "fingerprint"}
    assert len(first["fingerprint"]) == 16
    with compare_archives(analysed_changes.old, analysed_changes.new) as expected:
        assert categories == summarise_diff(expected)["categories"]


def test_a_plugin_run_on_one_side_is_named(analysed_changes: ChangesCrawls,
                                           changes_crawls: ChangesCrawls) -> None:
    result = diff(analysed_changes, str(changes_crawls.old), "new.nitpicker",
                  "--fail-on", "new-violations")
    assert result.returncode == 0, result.stderr
    assert ("findings: none compared (no analyzer ran on both archives); not compared: "
            "diff-probe (NEW only)") in result.stdout


def test_an_archive_another_process_holds_locked_is_one_line(changes_crawls: ChangesCrawls,
                                                             tmp_path: Path) -> None:
    """A writer's exclusive SQLite lock (no crawl's lock file): said as a lock, after the busy
    timeout, not as "not a nitpicker archive"."""
    locked = tmp_path / "locked.nitpicker"
    shutil.copyfile(changes_crawls.new, locked)
    holder = sqlite3.connect(locked, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = diff(changes_crawls, "old.nitpicker", str(locked))
    finally:
        holder.close()
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (f"Error: {locked}: locked by another process (database is locked): try again once it "
        "has finished writing")]
    assert result.stdout == ""
