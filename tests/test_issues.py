"""The audit (``nitpicker/query/issues.py``) through ``nitpicker query FILE issues`` and
``issue --id``: each known defect of ``/defects/`` under its check id with its URL count, most
urgent first; an issue's findings paged; analyzer rules beside the checks; an archive the
checks never ran on; one page's issues."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixtures.defects import EXPECTED
from nitpicker.query import open_archive, page_issues
from nitpicker.query.checks import CHECKS, PRIORITIES, check_by_id
from tests.helpers import BEFORE_FINDINGS, run

if TYPE_CHECKING:
    from tests.helpers import ChangesCrawls, Defects


def query(archive: Path, *args: str) -> Any:
    result = run("query", str(archive), *args, cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_issues_lists_each_known_defect_with_its_url_count(defects: Defects) -> None:
    """Issue 26's "done when": every defect under its check id with the right URL count."""
    answer = query(defects.archive, "issues")
    assert answer["checked_at"]
    assert {item["id"]: item["urls"] for item in answer["items"]} == {
        rule: len(paths) for rule, paths in EXPECTED.items()}
    assert answer["total"] == len(EXPECTED)
    broken = next(item for item in answer["items"] if item["id"] == "links/broken-internal")
    check = check_by_id("links/broken-internal")
    assert check is not None
    assert broken == {
        "id": "links/broken-internal", "source": "check", "title": "Broken internal links",
        "priority": "high", "category": "links", "urls": 5, "findings": 5,
        "explanation": check.explanation, "fix": check.fix}


def test_issues_are_sorted_by_priority_then_urls(defects: Defects) -> None:
    items = query(defects.archive, "issues")["items"]
    keys = [(PRIORITIES.index(item["priority"]), -item["urls"], item["id"]) for item in items]
    assert keys == sorted(keys)
    assert items[0]["id"] == "status/server-error"  # the one critical issue
    by_priority = query(defects.archive, "issues")["by_priority"]
    assert by_priority == {name: sum(1 for item in items if item["priority"] == name)
                           for name in PRIORITIES}


def test_issues_filters(defects: Defects) -> None:
    urgent = query(defects.archive, "issues", "--priority", "high")["items"]
    assert {item["priority"] for item in urgent} == {"critical", "high"}
    assert len(urgent) == sum(1 for rule in EXPECTED
                              if next(c for c in CHECKS if c.id == rule).priority
                              in ("critical", "high"))
    security = query(defects.archive, "issues", "--category", "security")["items"]
    assert [item["id"] for item in security] == ["security/missing-headers"]
    everything = query(defects.archive, "issues", "--all", "--limit", "100")
    assert everything["total"] == len(CHECKS)
    passed = [item for item in everything["items"] if item["urls"] == 0]
    assert {item["id"] for item in passed} == {  # those an http crawl cannot trip
        "security/mixed-content", "crawl/trap-cap", "security/hsts",
        "security/cookie-not-secure", "security/cookie-attributes", "security/tls-invalid",
        "security/tls-expiring",
        # and the structured data checks: the defects site has none (fixtures/structured.py)
        "structured-data/missing-recommended", "structured-data/missing-required",
        "structured-data/invalid",
        # and the content checks: /content-checks/ trips them (fixtures/content_checks.py)
        "links/broken-fragment", "content/exact-duplicate", "content/near-duplicate",
        "content/soft-404", "content/not-found-title"}
    assert everything["items"][-len(passed):] == passed
    page = query(defects.archive, "issues", "--limit", "2", "--offset", "1")
    assert [item["id"] for item in page["items"]] == [
        item["id"] for item in query(defects.archive, "issues")["items"][1:3]]


@pytest.mark.parametrize(("args", "message"), [
    (("issues", "--priority", "urgent"),
     "Error: Invalid priority: 'urgent'. Must be one of: critical, high, medium, low, info"),
    (("issue", "--id", "links/nope"),
     ("Error: Unknown issue id: 'links/nope'. An id is a check's (links/broken-internal) or an "
     "analyzer's validator/rule (axe/image-alt): the ids are in nitpicker query FILE issues")),
    (("issue",), "Error: --id is required for the issue sub-command"),
])
def test_bad_input_is_one_line(defects: Defects, args: tuple[str, ...], message: str) -> None:
    result = run("query", str(defects.archive), *args, cwd=defects.archive.parent)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == message


def test_issue_lists_its_findings_by_url_paged(defects: Defects) -> None:
    first = query(defects.archive, "issue", "--id", "links/broken-internal", "--limit", "2")
    rest = query(defects.archive, "issue", "--id", "links/broken-internal", "--offset", "2")
    assert (first["total"], rest["total"], len(first["items"]), len(rest["items"])) == (5, 5, 2, 3)
    urls = [defects.path(item["url"]) for item in first["items"] + rest["items"]]
    assert urls == EXPECTED["links/broken-internal"]
    missing = next(item for item in first["items"] + rest["items"]
                   if item["url"].endswith("/defects/missing"))
    assert missing["message"] == "Answers 404 Not Found; linked 3 times from 2 pages"
    assert len(missing["fingerprint"]) == 16
    images = query(defects.archive, "issue", "--id", "images/missing-alt")["items"]
    assert [(item["element"], item["location"], item["snippet"]) for item in images] == [
        (f"{defects.base}/defects/img/no-alt.png", None, None)]
    empty = query(defects.archive, "issue", "--id", "security/mixed-content")
    assert (empty["items"], empty["total"]) == ([], 0)


def test_analyzer_rules_are_issues_beside_the_checks(analysed_changes: ChangesCrawls) -> None:
    """diff-probe's rules under ``validator/rule``, their priority from their severity
    (warning: medium, error: high), their explanation one of their messages."""
    items = {item["id"]: item for item in query(analysed_changes.new, "issues")["items"]}
    assert items["diff-probe/img-alt"]["priority"] == "high"
    assert items["diff-probe/title-length"]["priority"] == "medium"
    probe = items["diff-probe/no-bold"]
    assert (probe["source"], probe["category"], probe["urls"], probe["findings"]) == (
        "diff-probe", "diff-probe", 1, 1)
    assert probe["explanation"] == ("Found by the diff-probe analyzer (nitpicker analyze). One "
                                    "of its findings: <b> flagged")
    assert "titles/too-short" in items  # the crawl's own checks
    found = query(analysed_changes.new, "issue", "--id", "diff-probe/no-bold")["items"]
    assert [(item["snippet"], item["location"]) for item in found] == [("<b>body</b>", "8:1")]


def test_an_archive_the_checks_never_ran_on(defects: Defects, tmp_path: Path) -> None:
    """Older than the findings model: no issue and ``checked_at`` null (readers never
    migrate), a check's id still valid; ``nitpicker check`` then gives the audit."""
    older = tmp_path / "older.nitpicker"
    shutil.copyfile(defects.archive, older)
    conn = sqlite3.connect(older)
    for statement in BEFORE_FINDINGS:
        conn.execute(statement)
    conn.commit()
    conn.close()
    answer = query(older, "issues")
    assert (answer["checked_at"], answer["items"], answer["total"]) == (None, [], 0)
    assert query(older, "issue", "--id", "links/broken-internal")["total"] == 0
    assert run("check", str(older), cwd=tmp_path).returncode == 0
    assert query(older, "issues")["total"] > 0


def test_page_issues_most_urgent_first(defects: Defects) -> None:
    conn = open_archive(defects.archive)
    try:
        issues = page_issues(conn, f"{defects.base}/defects/images")
        assert page_issues(conn, f"{defects.base}/defects/nowhere") is None
        assert page_issues(conn, f"{defects.base}/defects/clean") == []
    finally:
        conn.close()
    assert issues is not None
    assert [(issue["id"], issue["priority"]) for issue in issues] == [
        ("images/missing-alt", "medium"), ("images/oversized", "medium"),
        ("images/missing-dimensions", "low")]
    assert issues[0]["title"] == "Images without alt attribute"
