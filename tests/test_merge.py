"""``nitpicker merge``: what it carries over, what it refuses (the distributed crawl itself is
in tests/test_distributed.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from nitpicker.archive.merge import MERGED_TABLES
from nitpicker.archive.schema import migrate
from tests.helpers import run

_BY_URL = {
    "pages": "SELECT url, scraped, is_target, is_external, status, title, content_type,"
             " (SELECT url FROM pages AS d WHERE d.id = pages.redirect_dest_id), \"order\""
             " FROM pages",
    "anchors": "SELECT p.url, h.url, a.hash, a.text FROM anchors AS a JOIN pages AS p"
               " ON p.id = a.page_id JOIN pages AS h ON h.id = a.href_id ORDER BY a.id",
    "images": "SELECT p.url, i.src, i.alt, i.width FROM images AS i JOIN pages AS p"
              " ON p.id = i.page_id ORDER BY i.id",
    "response_headers": "SELECT p.url, h.name, h.value FROM response_headers AS h JOIN pages AS p"
                        " ON p.id = h.page_id",
    "snapshots": "SELECT p.url, s.html FROM snapshots AS s JOIN pages AS p ON p.id = s.page_id",
    "json_ld": "SELECT p.url, b.position, b.source, t.type FROM json_ld_blocks AS b"
               " JOIN pages AS p ON p.id = b.page_id LEFT JOIN json_ld_types AS t"
               " ON t.block_id = b.id",
    "runs": "SELECT kind, status, pages_done FROM runs",
    "info": "SELECT name, base_url, roots FROM info",
}


def _rows(path: Path, sql: str) -> list[Any]:
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        return sorted(conn.execute(sql).fetchall(), key=repr)


@pytest.fixture(scope="module")
def crawled(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("merge")
    done = run("crawl", site.url("/"), "--no-render", "--retry", "0", "--max-pages", "60",
               "-o", "one", "--silent", cwd=directory)
    assert done.returncode in (0, 2), done.stderr
    return directory / "one.nitpicker"


def test_merge_knows_every_table_of_the_schema(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "fresh.db")) as conn:
        migrate(conn)
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    assert tables == MERGED_TABLES


def test_one_shard_merges_into_the_same_archive(crawled: Path, tmp_path: Path) -> None:
    done = run("merge", str(crawled), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    merged = tmp_path / "merged.nitpicker"
    for table, sql in _BY_URL.items():
        original = _rows(crawled, sql)
        assert _rows(merged, sql) == original, table
    assert _rows(crawled, "SELECT 1 FROM images") and _rows(crawled, "SELECT 1 FROM snapshots"), (
        "the fixture crawl has the child rows this test compares")


def test_a_page_recorded_in_two_shards_is_refused_naming_it(crawled: Path,
                                                            tmp_path: Path) -> None:
    copy = tmp_path / "copy.nitpicker"
    shutil.copy(crawled, copy)
    done = run("merge", str(crawled), str(copy), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "page(s) recorded in two shards: http://" in line
    assert str(copy) in line and "--keep-first" in line
    assert not (tmp_path / "merged.nitpicker").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.nitpicker"], "no leftovers"

    kept = run("merge", str(crawled), str(copy), "-o", "merged", "--keep-first", cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert "recorded in two shards: kept" in kept.stderr
    assert _rows(tmp_path / "merged.nitpicker", _BY_URL["anchors"]) == _rows(
        crawled, _BY_URL["anchors"]), "the first shard's copy is kept, once"


def test_shards_of_different_crawls_are_refused(site: Any, crawled: Path, tmp_path: Path) -> None:
    done = run("crawl", site.url("/recursive/"), "--no-render", "--retry", "0", "-o", "other",
               "--silent", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    other = tmp_path / "other.nitpicker"
    refused = run("merge", str(crawled), str(other), "-o", "merged", cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        (f"Error: shards of different crawls (roots differ): {crawled} (roots {site.url('/')}) "
        f"and {other} (roots {site.url('/recursive/')})")]
    assert not (tmp_path / "merged.nitpicker").exists()


def test_an_existing_output_is_never_overwritten(crawled: Path, tmp_path: Path) -> None:
    existing = tmp_path / "merged.nitpicker"
    existing.write_bytes(b"keep me")
    done = run("merge", str(crawled), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: Output file already exists: merged.nitpicker (choose another -o)"
    assert existing.read_bytes() == b"keep me"


def test_a_missing_or_foreign_shard_is_named(crawled: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "notes.nitpicker"
    foreign.write_text("not sqlite")
    for bad in (tmp_path / "missing.nitpicker", foreign):
        done = run("merge", str(crawled), str(bad), "-o", "merged", cwd=tmp_path)
        assert done.returncode == 1
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("Error: ") and str(bad) in line


def test_a_shard_still_being_written_is_refused(crawled: Path, tmp_path: Path) -> None:
    shard = tmp_path / "live.nitpicker"
    shutil.copy(crawled, shard)
    Path(f"{shard}.lock").write_text(str(os.getpid()))
    done = run("merge", str(shard), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"Error: {shard}: still being written (PID {os.getpid()}): "
                                   "merge it once its worker has ended")


def test_a_page_keeps_its_sitemap_origin_when_a_later_shard_records_it(crawled: Path,
                                                                       tmp_path: Path) -> None:
    """The first shard had the page only as a stub it found in the sitemap; the second
    recorded it (found by a link): the merged page is the second's, still ``in_sitemap``."""
    first, second = tmp_path / "first.nitpicker", tmp_path / "second.nitpicker"
    shutil.copy(crawled, first)
    shutil.copy(crawled, second)
    (url,) = _rows(crawled, "SELECT url FROM pages WHERE scraped = 1 AND is_external = 0"
                            " AND redirect_dest_id IS NULL ORDER BY id LIMIT 1 OFFSET 1")[0]
    with closing(sqlite3.connect(first)) as conn, conn:
        conn.execute("UPDATE pages SET scraped = 0, fetched_at = NULL, in_sitemap = 1,"
                     " in_inventory = 1 WHERE url = ?", (url,))
    with closing(sqlite3.connect(second)) as conn, conn:
        conn.execute("UPDATE pages SET in_sitemap = 0, in_inventory = 0")
    done = run("merge", str(first), str(second), "-o", "merged", "--keep-first", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    merged = tmp_path / "merged.nitpicker"
    assert _rows(merged, f"SELECT scraped, fetched_at IS NOT NULL, in_sitemap, in_inventory"
                         f" FROM pages WHERE url = '{url}'") == [(1, 1, 1, 1)]
