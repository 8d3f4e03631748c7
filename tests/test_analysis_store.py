"""nitpicker.archive.analysis_store on a real crawl of the fixture site's ``/contents/``."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from nitpicker.analyze.plugin import Findings, PageValue, Violation
from nitpicker.archive.analysis_store import URL, AnalysisStore, RunKey, settings_hash
from nitpicker.archive.lock import ArchiveLock
from tests.helpers import crawl

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite


@pytest_twisted.async_fixture(scope="module")
async def crawled(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("store"), [site.url("/contents/")])
    archive.conn.close()
    return archive.path


@pytest.fixture
def store(crawled: Path, tmp_path: Path) -> Iterator[AnalysisStore]:
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    opened = AnalysisStore.open(copy)
    yield opened
    opened.close()


def rows(store: AnalysisStore, sql: str) -> list[tuple[object, ...]]:
    store.commit()
    return store.conn.execute(sql).fetchall()


def test_settings_hash_ignores_key_order_only() -> None:
    assert settings_hash({"a": 1, "b": [2]}) == settings_hash({"b": [2], "a": 1})
    assert settings_hash({"a": 1}) != settings_hash({"a": 2})
    assert RunKey("x", "1", {}).hash == settings_hash({})


def test_pending_snapshots_come_in_batches_by_page_id(store: AnalysisStore,
                                                      site: FixtureSite) -> None:
    key = RunKey("t", "1", {})
    snapshots = list(store.pending_snapshots(key, force=False, batch=2))
    assert [s.url.removeprefix(site.base_url) for s in snapshots] == [
        "/contents/", "/contents/with-main", "/contents/role-main", "/contents/no-main",
        "/contents/keywords"]
    assert "<title>Role Main</title>" in snapshots[2].html
    assert [s.page_id for s in snapshots] == sorted(s.page_id for s in snapshots)
    run = store.start_run(key, {}, {})
    for snapshot in snapshots[:2]:
        store.record(key, run, snapshot, None)
    store.record_error(key, run, snapshots[2], "boom")
    store.commit()
    # done pages are skipped; a page the plugin failed on is pending again
    assert store.pending_count(key, force=False) == 3
    assert store.pending_count(key, force=True) == 5
    assert store.pending_count(RunKey("t", "2", {}), force=False) == 5
    assert store.pending_count(RunKey("t", "1", {"x": 1}), force=False) == 5
    assert [s.page_id for s in store.pending_snapshots(key, force=False, batch=1)] == [
        s.page_id for s in snapshots[2:]]


def test_a_snapshots_resources_are_its_own_on_hosts_the_crawl_crawled(
        crawled: Path, tmp_path: Path, site: FixtureSite) -> None:
    """Snapshot.resources: what the crawl recorded for that page (not another page's), on a
    host with an internal page (the site's, wherever in its paths), never another host's."""
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    conn = sqlite3.connect(copy)
    ids = dict(conn.execute("SELECT url, id FROM pages"))
    home, keywords = ids[site.url("/contents/")], ids[site.url("/contents/keywords")]
    recorded = {
        site.url("/assets/site.css"): home,  # outside the crawled path: still the site's
        f"{site.external_url}/evil.css": home,  # another host (127.0.0.1, out of scope)
        "http://localhost/no-port.css": home,  # another origin: no page there
        site.url("/contents/keywords.css"): keywords,
    }
    for url, page_id in recorded.items():
        resource = conn.execute("INSERT INTO resources(url, kind) VALUES (?, 'stylesheet')",
                                (url,)).lastrowid
        conn.execute("INSERT INTO resource_referrers(resource_id, page_id) VALUES (?, ?)",
                     (resource, page_id))
    conn.commit()
    conn.close()
    opened = AnalysisStore.open(copy)
    try:
        found = {s.page_id: s.resources
                 for s in opened.pending_snapshots(RunKey("t", "1", {}), force=False, batch=2)}
    finally:
        opened.close()
    assert site.url("/assets/site.css") in found[home]
    assert f"{site.external_url}/evil.css" not in found[home]
    assert "http://localhost/no-port.css" not in found[home]
    assert site.url("/contents/keywords.css") not in found[home]
    assert site.url("/contents/keywords.css") in found[keywords]


def test_record_replaces_the_plugins_earlier_findings_of_the_page(store: AnalysisStore) -> None:
    key = RunKey("t", "1", {})
    snapshot = next(store.pending_snapshots(key, force=False))
    run = store.start_run(key, {}, {"a": "A"})
    store.record(key, run, snapshot, Findings(
        values={"a": PageValue(1), "b": PageValue(True, "yes")},
        violations=[Violation("t", "error", "r1", "m1", snapshot.url, "<p>", "2:3")]))
    other = RunKey("other", "1", {})
    store.record(other, store.start_run(other, {}, {}), snapshot,
                 Findings(values={"a": PageValue("kept")}))
    store.record(key, run, snapshot, Findings(values={"a": PageValue(2.5)}))
    assert rows(store, "SELECT plugin, key, value, note FROM page_values ORDER BY plugin") == [
        ("other", "a", '"kept"', None), ("t", "a", "2.5", None)]
    assert rows(store, "SELECT count(*) FROM violations") == [(0,)]
    # each_url's findings sit beside each_page's: neither phase replaces the other's
    store.record(key, run, snapshot, Findings(values={"u": PageValue(None)}), URL)
    assert rows(store, "SELECT key, phase FROM page_values WHERE plugin = 't' ORDER BY key") == [
        ("a", "page"), ("u", "url")]


def test_a_page_is_recorded_whole_or_not_at_all(store: AnalysisStore) -> None:
    key = RunKey("t", "1", {})
    snapshot = next(store.pending_snapshots(key, force=False))
    run = store.start_run(key, {}, {})
    store.record(key, run, snapshot, Findings(values={"a": PageValue(1)}))
    broken = Violation("t", "error", "r", None, snapshot.url)  # type: ignore[arg-type]
    with pytest.raises(sqlite3.IntegrityError):
        store.record(key, run, snapshot, Findings(values={"a": PageValue(2)},
                                                  violations=[broken]))
    # the failed record left the earlier findings as they were, in the open batch
    assert rows(store, "SELECT key, value FROM page_values") == [("a", "1")]


def test_a_run_a_killed_process_left_running_is_lost(crawled: Path, tmp_path: Path) -> None:
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    store = AnalysisStore.open(copy)
    store.start_run(RunKey("t", "1", {}), {}, {})
    store.commit()
    store.conn.execute("UPDATE analysis_runs SET pid = 999999999")
    store.close()
    assert not ArchiveLock(copy).path.exists()
    again = AnalysisStore.open(copy)
    again.close()
    conn = sqlite3.connect(copy)
    assert conn.execute("SELECT outcome FROM analysis_runs").fetchall() == [("lost",)]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()
