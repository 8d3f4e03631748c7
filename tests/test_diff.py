"""``nitpicker.query.diff``: two crawls of the fixture site's ``/changes/``, before and after
``site.changed`` flips it (one page removed, one added, one retitled, one link broken, one
image's alt dropped), compared exactly."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nitpicker.query import ArchiveOpenError, DiffInputError, UrlMap, compare_archives
from nitpicker.query.diff import CATEGORIES, CATEGORY_NAMES, summarise_diff
from tests.helpers import ChangesCrawls as Crawls
from tests.helpers import changes_diff


def all_items(old: Path, new: Path, url_map: UrlMap | None = None
              ) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    with compare_archives(old, new, url_map=url_map) as diff:
        return diff.common_pages, {name: list(diff.items(name)) for name in CATEGORY_NAMES}


def test_the_changed_site_gives_exactly_the_expected_diff(changes_crawls: Crawls) -> None:
    common, items = all_items(changes_crawls.old, changes_crawls.new)
    assert common == 5  # top, stays, retitled, linker, target
    assert items == changes_diff(changes_crawls.base)


def test_the_diff_the_other_way_round_swaps_added_and_removed_and_fixes_the_link(
        changes_crawls: Crawls) -> None:
    _, items = all_items(changes_crawls.new, changes_crawls.old)
    assert [i["url"] for i in items["pages_added"]] == [f"{changes_crawls.base}/changes/removed"]
    assert [i["url"] for i in items["pages_removed"]] == [f"{changes_crawls.base}/changes/added"]
    assert items["links_broken"] == [] and items["new_4xx"] == []
    assert items["links_fixed"] == [{"source_url": f"{changes_crawls.base}/changes/linker",
                                     "dest_url": f"{changes_crawls.base}/changes/target",
                                     "old_status": 404, "new_status": 200}]
    assert items["images_lost_alt"] == []  # it gained one


def test_a_copy_of_an_archive_has_no_changes(changes_crawls: Crawls, tmp_path: Path) -> None:
    copy = tmp_path / "copy.nitpicker"
    shutil.copyfile(changes_crawls.new, copy)
    common, items = all_items(changes_crawls.new, copy)
    assert common == 6
    assert all(found == [] for found in items.values()), items


def test_map_matches_a_site_crawled_under_another_host(changes_crawls: Crawls) -> None:
    url_map = UrlMap(f"{changes_crawls.base}/", f"{changes_crawls.moved_base}/")
    common, items = all_items(changes_crawls.old, changes_crawls.moved, url_map)
    assert common == 5
    assert items == changes_diff(changes_crawls.moved_base, old_base=changes_crawls.base)


def test_without_the_map_a_moved_site_has_no_urls_in_common(changes_crawls: Crawls) -> None:
    common, items = all_items(changes_crawls.old, changes_crawls.moved)
    assert common == 0
    assert len(items["pages_added"]) == len(items["pages_removed"]) == 6
    assert items["page_changes"] == items["links_added"] == items["links_removed"] == []


def test_summary_counts_every_item_and_keeps_the_first(changes_crawls: Crawls) -> None:
    with compare_archives(changes_crawls.old, changes_crawls.new) as diff:
        summary = summarise_diff(diff, limit=1)
    assert summary["common_pages"] == 5
    changes = summary["categories"]["page_changes"]
    assert changes["count"] == 3 and len(changes["items"]) == 1
    assert changes["items"][0]["field"] == "title"
    assert summary["old"]["base_url"] == f"{changes_crawls.base}/changes/"


@pytest.mark.parametrize("text", ["no-equals", "=https://b/", "https://a/=", ""])
def test_url_map_refuses_what_is_not_two_prefixes(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid --map"):
        UrlMap.parse(text)


def test_the_same_file_twice_is_refused(changes_crawls: Crawls, tmp_path: Path) -> None:
    link = tmp_path / "link.nitpicker"
    link.symlink_to(changes_crawls.old)
    with pytest.raises(DiffInputError, match="same file"):
        compare_archives(changes_crawls.old, link)


def test_a_newer_archive_is_refused(changes_crawls: Crawls, tmp_path: Path) -> None:
    newer = tmp_path / "newer.nitpicker"
    shutil.copyfile(changes_crawls.new, newer)
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO migrations(name, applied_at) VALUES ('9999_future', '')")
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveOpenError, match="newer nitpicker"):
        compare_archives(changes_crawls.old, newer)


def test_an_archive_a_live_crawl_holds_is_refused(changes_crawls: Crawls, tmp_path: Path) -> None:
    held = tmp_path / "held.nitpicker"
    shutil.copyfile(changes_crawls.new, held)
    Path(f"{held}.lock").write_text(f"{os.getpid()}\ncrawl\n")
    with pytest.raises(DiffInputError, match="being written by a running crawl"):
        compare_archives(changes_crawls.old, held)


def test_an_archive_without_the_trap_events_table_compares(changes_crawls: Crawls,
                                                           tmp_path: Path) -> None:
    """An archive older than migration 0007 (no ``trap_events``) compares: no firings."""
    older = tmp_path / "older.nitpicker"
    shutil.copyfile(changes_crawls.old, older)
    conn = sqlite3.connect(older)
    conn.execute("DROP TABLE trap_events")
    conn.execute("DELETE FROM migrations WHERE name = '0007_trap_events'")
    conn.commit()
    conn.close()
    _, items = all_items(older, changes_crawls.new)
    assert items == changes_diff(changes_crawls.base)


def copy_with(source: Path, target: Path, *statements: tuple[str, tuple[Any, ...]]) -> Path:
    """A copy of the archive ``source`` with ``statements`` applied."""
    shutil.copyfile(source, target)
    conn = sqlite3.connect(target)
    for sql, params in statements:
        conn.execute(sql, params)
    conn.commit()
    conn.close()
    return target


_TRAP = ("INSERT INTO trap_events(run_id, signature, parent_path, count, first_url, last_url,"
         " created_at) VALUES (1, ?, ?, 10, ?, ?, '')")
_RESOURCE = "INSERT INTO resources(url, kind, status) VALUES (?, ?, ?)"


def test_trap_caps_new_are_the_signatures_old_never_capped(changes_crawls: Crawls,
                                                          tmp_path: Path) -> None:
    old = copy_with(changes_crawls.old, tmp_path / "old.nitpicker",
                    (_TRAP, ("a" * 40, "/list", "http://x/list/1", "http://x/list/10")))
    new = copy_with(changes_crawls.new, tmp_path / "new.nitpicker",
                    (_TRAP, ("a" * 40, "/list", "http://x/list/1", "http://x/list/10")),
                    (_TRAP, ("b" * 40, "/cal", "http://x/cal/1", "http://x/cal/10")))
    _, items = all_items(old, new)
    assert items["trap_caps_new"] == [{"signature": "b" * 40, "parent_path": "/cal", "count": 10,
                                       "first_url": "http://x/cal/1",
                                       "last_url": "http://x/cal/10"}]


def test_resources_failing_are_those_that_did_not_fail_in_old(changes_crawls: Crawls,
                                                             tmp_path: Path) -> None:
    old = copy_with(changes_crawls.old, tmp_path / "old.nitpicker",
                    (_RESOURCE, ("http://x/app.js", "script", 200)),
                    (_RESOURCE, ("http://x/old-broken.css", "stylesheet", 404)))
    new = copy_with(changes_crawls.new, tmp_path / "new.nitpicker",
                    (_RESOURCE, ("http://x/app.js", "script", 500)),
                    (_RESOURCE, ("http://x/old-broken.css", "stylesheet", 404)),
                    (_RESOURCE, ("http://x/font.woff", "font", -1)),
                    (_RESOURCE, ("http://x/fine.png", "image", 200)))
    _, items = all_items(old, new)
    assert items["resources_failing"] == [
        {"url": "http://x/app.js", "kind": "script", "old_status": 200, "new_status": 500},
        {"url": "http://x/font.woff", "kind": "font", "old_status": None, "new_status": -1},
    ]


_WALKED: dict[str, set[str]] = {
    "links_added": {"s"}, "links_removed": {"s"},
    "links_broken": {"broken", "k", "x", "l", "compared"},
    "links_fixed": {"broken", "k", "x", "l", "compared"},
}
"""The only tables the link categories may scan: the page pairs, or the small sets of broken
targets and their links. An archive has no ``ANALYZE`` statistics, and the planner, left
alone, scanned every page (``SCAN t``) or every anchor (``SCAN b``) once per linking page."""


@pytest.mark.parametrize("name", sorted(_WALKED))
def test_link_categories_walk_no_whole_table_per_row(changes_crawls: Crawls,
                                                      name: str) -> None:
    with compare_archives(changes_crawls.old, changes_crawls.new) as diff:
        category = next(c for c in CATEGORIES if c.name == name)
        plan = diff._conn.execute(f"EXPLAIN QUERY PLAN {category.sql}", diff._params).fetchall()
    scanned = {row[3].split()[1] for row in plan if row[3].startswith("SCAN ")}
    assert scanned <= _WALKED[name], [row[3] for row in plan]
