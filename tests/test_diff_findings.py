"""``nitpicker.query.diff``'s findings categories (``nitpicker/query/diff_findings.py``): the
``/changes/`` crawls analysed by the ``diff-probe`` plugin, compared exactly; the fingerprint's
rules; plugins run on one archive only; archives older than the analysis tables."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nitpicker.query import UrlMap, compare_archives
from nitpicker.query.diff import CATEGORY_NAMES
from nitpicker.query.diff_findings import severity_rank
from nitpicker.query.fingerprint import locator, violation_fingerprint
from tests.helpers import ChangesCrawls, changes_diff

FINDINGS = ("violations_new", "violations_fixed", "violations_persisting", "values_changed")


def short(items: list[dict[str, Any]], base: str) -> list[tuple[Any, ...]]:
    """(path, rule, code, location[, old_location]) of each violation."""
    return [(item["url"].removeprefix(base), item["rule"], item["code"], item["location"],
             *((item["old_location"],) if "old_location" in item else ()))
            for item in items]


def findings(old: Path, new: Path, url_map: UrlMap | None = None
             ) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    with compare_archives(old, new, url_map=url_map) as diff:
        return diff.compared_plugins, {name: list(diff.items(name)) for name in FINDINGS}


def expected_violations() -> dict[str, list[tuple[Any, ...]]]:
    return {
        "violations_new": [
            ("/changes/retitled", "title-length", "New Title", None),
            ("/changes/stays", "img-alt", '<img src="/files/photo.png" alt=""/>', "7:1"),
        ],
        "violations_fixed": [
            ("/changes/removed", "title-length", "Removed", None),
            ("/changes/retitled", "title-length", "Old Title", None),
            ("/changes/target", "title-length", "Target", None),
        ],
        "violations_persisting": [
            ("/changes/", "title-length", "Changes Top", None, None),
            ("/changes/linker", "title-length", "Linker", None, None),
            # the first paragraph added above it moved it a line down: the same finding
            ("/changes/retitled", "no-bold", "<b>body</b>", "8:1", "7:1"),
        ],
    }


def test_analysed_crawls_give_exactly_the_expected_findings(
        analysed_changes: ChangesCrawls) -> None:
    base = analysed_changes.base
    plugins, items = findings(analysed_changes.old, analysed_changes.new)
    assert plugins == ["diff-probe"]
    for name, want in expected_violations().items():
        assert short(items[name], base) == want, name
    assert items["violations_new"][1]["severity"] == "error"
    assert {item["plugin"] for name in FINDINGS for item in items[name]} == {"diff-probe"}
    assert items["values_changed"] == [
        {"url": f"{base}/changes/retitled", "plugin": "diff-probe", "key": "title",
         "change": "changed", "old": "Old Title", "new": "New Title", "old_note": "9",
         "new_note": "9"},
        {"url": f"{base}/changes/target", "plugin": "diff-probe", "key": "title",
         "change": "changed", "old": "Target", "new": "Gone", "old_note": "6",
         "new_note": "4"},
    ]


def test_findings_of_a_moved_site_match_through_the_map(analysed_changes: ChangesCrawls) -> None:
    """The fingerprint takes OLD's page URL as NEW spells it: without the map every finding
    of the moved site is new."""
    url_map = UrlMap(f"{analysed_changes.base}/", f"{analysed_changes.moved_base}/")
    _, items = findings(analysed_changes.old, analysed_changes.moved, url_map)
    moved = analysed_changes.moved_base
    assert short(items["violations_persisting"], moved) == \
        expected_violations()["violations_persisting"]
    assert len(items["violations_new"]) == 2 and len(items["violations_fixed"]) == 3
    _, unmapped = findings(analysed_changes.old, analysed_changes.moved)
    assert unmapped["violations_persisting"] == []
    assert len(unmapped["violations_new"]) == 5


def test_an_archive_compared_with_a_copy_has_only_persisting_findings(
        analysed_changes: ChangesCrawls, tmp_path: Path) -> None:
    copy = tmp_path / "copy.nitpicker"
    shutil.copyfile(analysed_changes.new, copy)
    _, items = findings(analysed_changes.new, copy)
    assert items["violations_new"] == items["violations_fixed"] == []
    assert items["values_changed"] == []
    assert len(items["violations_persisting"]) == 5


def test_a_plugin_run_on_one_archive_only_is_not_compared(
        analysed_changes: ChangesCrawls, changes_crawls: ChangesCrawls) -> None:
    """OLD never analysed: NEW's findings are not all "new" (the gate would trip on the
    whole backlog); the plugin is named as NEW only."""
    with compare_archives(changes_crawls.old, analysed_changes.new) as diff:
        assert diff.compared_plugins == []
        assert diff.analysed_plugins("new") == ["diff-probe"]
        assert diff.analysed_plugins("old") == []
        assert all(list(diff.items(name)) == [] for name in FINDINGS)


def _copy_with(source: Path, target: Path, *sql: str) -> Path:
    shutil.copyfile(source, target)
    conn = sqlite3.connect(target)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return target


def test_identical_findings_on_a_page_are_counted_one_by_one(
        analysed_changes: ChangesCrawls, tmp_path: Path) -> None:
    """Two more copies of a persisting finding in NEW (another line each): two new findings,
    the original still persisting."""
    duplicate = ("INSERT INTO violations(page_id, plugin, phase, validator, severity, rule,"
                 " code, message, url, location) SELECT page_id, plugin, phase, validator,"
                 " severity, rule, code, message, url, '{line}:1' FROM violations"
                 " WHERE rule = 'no-bold' AND location = '8:1'")
    new = _copy_with(analysed_changes.new, tmp_path / "new.nitpicker",
                     duplicate.format(line=20), duplicate.format(line=30))
    _, items = findings(analysed_changes.old, new)
    base = analysed_changes.base
    assert [item for item in short(items["violations_new"], base) if item[1] == "no-bold"] == [
        ("/changes/retitled", "no-bold", "<b>body</b>", "20:1"),
        ("/changes/retitled", "no-bold", "<b>body</b>", "30:1")]
    assert ("/changes/retitled", "no-bold", "<b>body</b>", "8:1", "7:1") in \
        short(items["violations_persisting"], base)


def test_an_archive_older_than_the_analysis_tables_compares_without_findings(
        analysed_changes: ChangesCrawls, tmp_path: Path) -> None:
    tables = ("plugin_errors", "violations", "page_values", "analyzed_pages", "analysis_runs")
    older = _copy_with(analysed_changes.old, tmp_path / "older.nitpicker",
                       *(f"DROP TABLE {table}" for table in tables),
                       "DELETE FROM migrations WHERE name = '0013_analysis'")
    plugins, items = findings(older, analysed_changes.new)
    assert plugins == []
    assert all(found == [] for found in items.values())
    with compare_archives(older, analysed_changes.new) as diff:
        assert [item["url"] for item in diff.items("pages_added")] == \
            [f"{analysed_changes.base}/changes/added"]


@pytest.mark.parametrize(("a", "b", "same"), [
    (("axe", "image-alt", "http://x/", "<img  src=a>\n", "m"),
     ("axe", "image-alt", "http://x/", "<img src=a>", "other words"), True),  # whitespace
    (("textlint", "no-todo", "http://x/", "-", "Found  TODO"),
     ("textlint", "no-todo", "http://x/", "-", "Found TODO"), True),  # no code: the message
    (("textlint", "no-todo", "http://x/", "-", "Found TODO"),
     ("textlint", "no-todo", "http://x/", "-", "Found FIXME"), False),
    (("axe", "image-alt", "http://x/", "<img src=a>", "m"),
     ("axe", "image-alt", "http://x/b", "<img src=a>", "m"), False),  # another page
    (("axe", "image-alt", "http://x/", "<img src=a>", "m"),
     ("axe", "label", "http://x/", "<img src=a>", "m"), False),  # another rule
    (("axe", "image-alt", "http://x/", "<img src=a>", "m"),
     ("markuplint", "image-alt", "http://x/", "<img src=a>", "m"), False),  # another validator
    (("markuplint", "no-bold", "http://x/", "<b>old words</b>", "m"),
     ("markuplint", "no-bold", "http://x/", "<b>new words</b>", "m"), True),  # the text
])
def test_the_fingerprint(a: tuple[str, ...], b: tuple[str, ...], same: bool) -> None:
    """(validator, rule, url, code, message), no element: the code's markup decides."""
    first = violation_fingerprint(*a[:3], None, *a[3:])
    assert (first == violation_fingerprint(*b[:3], None, *b[3:])) is same
    assert -(2 ** 63) <= first < 2 ** 63


def test_locator_and_severity_rank() -> None:
    assert locator(None, "  <b>\n x</b> ", "m") == "<b></b>"
    assert locator(None, "", "A  message") == locator(None, "-", "A message") == "A message"
    assert severity_rank("critical") > severity_rank("serious") == severity_rank("error") \
        > severity_rank("warning") == severity_rank("Moderate") > severity_rank("info") \
        == severity_rank("minor")
    assert severity_rank("fatal") == severity_rank("error")  # unknown: as an error


def test_done_when_the_whole_diff_of_the_analysed_crawls_is_exactly_expected(
        analysed_changes: ChangesCrawls) -> None:
    """Issue 17's "done when": the fixture site crawled twice, its page set flipped between
    the crawls, both crawls analysed: every category, findings included, exactly."""
    base = analysed_changes.base
    with compare_archives(analysed_changes.old, analysed_changes.new) as diff:
        assert diff.common_pages == 5
        items = {name: list(diff.items(name)) for name in CATEGORY_NAMES}
    want = {name: value for name, value in changes_diff(base).items() if name not in FINDINGS}
    assert {name: value for name, value in items.items() if name not in FINDINGS} == want
    for name, violations in expected_violations().items():
        assert short(items[name], base) == violations, name
    assert [(item["url"].removeprefix(base), item["old"], item["new"])
            for item in items["values_changed"]] == [
        ("/changes/retitled", "Old Title", "New Title"), ("/changes/target", "Target", "Gone")]
