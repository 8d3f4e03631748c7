"""nitpicker.archive: schema migrations, the archive lock and the crawl-time writer."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlite_utils import Database

from nitpicker.archive import (
    MIGRATIONS,
    ArchiveError,
    ArchiveLock,
    ArchiveLockError,
    ArchiveWriter,
    SchemaError,
)
from nitpicker.archive.schema import applied_migrations, check_readable, migrate
from nitpicker.crawl.config import CrawlConfig
from tests.helpers import frontier_entry, frontier_states, writer_config

if TYPE_CHECKING:
    from collections.abc import Iterator

TABLES = {
    "info",
    "pages",
    "response_headers",
    "anchors",
    "images",
    "resources",
    "resource_headers",
    "resource_referrers",
    "snapshots",
    "runs",
    "frontier",
    "trap_events",
    "outages",
    "inventory_runs",
    "analysis_runs",
    "analyzed_pages",
    "page_values",
    "violations",
    "plugin_errors",
    "console_messages",
    "page_console_messages",
    "json_ld_blocks",
    "json_ld_types",
    "check_runs",
    "check_findings",
    "structured_items",
    "structured_data_errors",
    "extracted_values",
    "templates",
    "page_templates",
    "hreflang_links",
    "sitemaps",
    "sitemap_urls",
    "tls_certificates",
    "technology_runs",
    "technologies",
    "technology_categories",
    "page_technologies",
    "page_content",
    "page_fragment_ids",
    "content_clusters",
    "soft404_probes",
    "given_up_hosts",
    "migrations",
}


def _tables(conn: sqlite3.Connection) -> set[str]:
    return set(Database(conn).table_names())


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "fresh.nitpicker", isolation_level=None)
    yield connection
    connection.close()


# -- migrations -------------------------------------------------------------------------------


def test_migrate_creates_every_table(conn: sqlite3.Connection) -> None:
    assert _tables(conn) == set()
    applied = migrate(conn)
    assert applied == [name for name, _ in MIGRATIONS]
    assert _tables(conn) == TABLES
    assert applied_migrations(conn) == [name for name, _ in MIGRATIONS]


def test_migrate_is_idempotent(conn: sqlite3.Connection) -> None:
    migrate(conn)
    conn.execute("INSERT INTO frontier(key, url, depth, mode) VALUES ('//a/', 'http://a/', 0, 0)")
    assert migrate(conn) == []
    assert _tables(conn) == TABLES
    assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("SELECT count(*) FROM frontier").fetchone()[0] == 1


def test_migrate_is_idempotent_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "a.nitpicker"
    first = sqlite3.connect(path, isolation_level=None)
    assert migrate(first) != []
    first.close()
    second = sqlite3.connect(path, isolation_level=None)
    assert migrate(second) == []
    check_readable(second)
    second.close()


def test_schema_columns_the_writer_relies_on(conn: sqlite3.Connection) -> None:
    migrate(conn)

    def columns(table: str) -> set[str]:
        return set(Database(conn)[table].columns_dict)

    page_columns = {"url", "redirect_dest_id", "scraped", "is_target", "is_external", "order"}
    assert page_columns <= columns("pages")
    assert {"key", "url", "depth", "mode", "state", "lease_owner", "lease_expires"} == (
        columns("frontier") - {"id"})
    assert {"version", "name", "base_url", "roots", "config"} <= columns("info")
    with pytest.raises(sqlite3.IntegrityError):
        insert = "INSERT INTO frontier(key, url, depth, mode) VALUES (?, ?, ?, 0)"
        conn.execute(insert, ("//a/", "http://a/", 0))
        conn.execute(insert, ("//a/", "https://a/", 1))


# Multi-valued facts live in child tables that name their parent row (STYLE rule 12).
CHILD_TABLES = [
    ("pages", "redirect_dest_id", "pages"),
    ("response_headers", "page_id", "pages"),
    ("anchors", "page_id", "pages"),
    ("anchors", "href_id", "pages"),
    ("images", "page_id", "pages"),
    ("resource_referrers", "page_id", "pages"),
    ("resource_referrers", "resource_id", "resources"),
    ("resource_headers", "resource_id", "resources"),
    ("snapshots", "page_id", "pages"),
    ("trap_events", "run_id", "runs"),
    ("outages", "run_id", "runs"),
    ("inventory_runs", "run_id", "runs"),
    ("analyzed_pages", "page_id", "pages"),
    ("analyzed_pages", "run_id", "analysis_runs"),
    ("page_values", "page_id", "pages"),
    ("violations", "page_id", "pages"),
    ("plugin_errors", "page_id", "pages"),
    ("plugin_errors", "run_id", "analysis_runs"),
    ("page_console_messages", "page_id", "pages"),
    ("page_console_messages", "message_id", "console_messages"),
    ("json_ld_blocks", "page_id", "pages"),
    ("json_ld_types", "block_id", "json_ld_blocks"),
    ("check_findings", "page_id", "pages"),
    ("structured_items", "page_id", "pages"),
    ("structured_data_errors", "page_id", "pages"),
    ("extracted_values", "page_id", "pages"),
    ("templates", "example_page_id", "pages"),
    ("page_templates", "page_id", "pages"),
    ("page_templates", "template_id", "templates"),
    ("hreflang_links", "page_id", "pages"),
    ("sitemap_urls", "page_id", "pages"),
    ("sitemap_urls", "sitemap_id", "sitemaps"),
    ("technology_categories", "technology_id", "technologies"),
    ("page_technologies", "page_id", "pages"),
    ("page_technologies", "technology_id", "technologies"),
    ("page_content", "page_id", "pages"),
    ("page_fragment_ids", "page_id", "pages"),
    ("content_clusters", "page_id", "pages"),
]


@pytest.mark.parametrize(("table", "column", "parent"), CHILD_TABLES)
def test_child_rows_reference_their_parent(conn: sqlite3.Connection, table: str, column: str,
                                           parent: str) -> None:
    migrate(conn)
    references = {(fk.column, fk.other_table, fk.other_column)
                  for fk in Database(conn)[table].foreign_keys}
    assert (column, parent, "id") in references


def test_every_reference_is_listed(conn: sqlite3.Connection) -> None:
    migrate(conn)
    db = Database(conn)
    found = {(name, fk.column, fk.other_table) for name in db.table_names()
             for fk in db[name].foreign_keys}
    assert found == set(CHILD_TABLES)


def test_check_readable_refuses_a_newer_archive(conn: sqlite3.Connection) -> None:
    migrate(conn)
    check_readable(conn)
    conn.execute("INSERT INTO migrations(name, applied_at) VALUES ('9999_from_the_future', 'x')")
    with pytest.raises(SchemaError, match="newer nitpicker.*9999_from_the_future"):
        check_readable(conn)
    with pytest.raises(SchemaError, match="9999_from_the_future"):
        migrate(conn)


def test_check_readable_refuses_a_non_archive(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    with pytest.raises(SchemaError, match="not a nitpicker archive"):
        check_readable(conn)


# -- the lock ---------------------------------------------------------------------------------


def test_lock_acquire_and_release(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    lock = ArchiveLock(archive)
    lock.acquire()
    lock_path = tmp_path / "a.nitpicker.lock"
    assert lock.path == lock_path
    assert lock_path.read_text() == f"{os.getpid()}\ncrawl\n"
    assert lock.holder() == os.getpid()
    assert lock.live_holder() == os.getpid()
    lock.release()
    assert not lock_path.exists()
    lock.release()  # idempotent
    assert lock.holder() is None


@pytest.mark.integration  # starts a process
def test_lock_held_by_a_live_process(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    holder = subprocess.Popen(["sleep", "60"])
    try:
        Path(f"{archive}.lock").write_text(str(holder.pid))
        lock = ArchiveLock(archive)
        with pytest.raises(ArchiveLockError) as info:
            lock.acquire()
        assert f"PID {holder.pid}" in str(info.value)
        assert str(lock.path) in str(info.value)
        assert info.value.holder_pid == holder.pid
        assert info.value.lock_path == lock.path
        # the other process's lock is left alone
        assert lock.path.read_text() == str(holder.pid)
        lock.release()
        assert lock.path.exists()
    finally:
        holder.kill()
        holder.wait()


def test_lock_second_acquire_in_the_same_process_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    first = ArchiveLock(archive)
    first.acquire()
    try:
        with pytest.raises(ArchiveLockError, match=f"PID {os.getpid()}"):
            ArchiveLock(archive).acquire()
    finally:
        first.release()


@pytest.mark.integration  # starts a process
def test_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    archive = tmp_path / "a.nitpicker"
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock = ArchiveLock(archive)
    lock.path.write_text(str(gone.pid))
    assert lock.live_holder() is None
    lock.acquire()
    assert lock.holder() == os.getpid()
    lock.release()
    assert not lock.path.exists()


@pytest.mark.parametrize("content", ["", "garbage"])
def test_unreadable_lock_is_taken_over(tmp_path: Path, content: str) -> None:
    lock = ArchiveLock(tmp_path / "a.nitpicker")
    lock.path.write_text(content)
    lock.acquire()
    assert lock.holder() == os.getpid()
    lock.release()


# -- the writer (its parts: test_frontier_store.py, test_run_log.py, test_page_recorder.py) -----






def test_create_writes_info_and_holds_the_lock(tmp_path: Path, writer: ArchiveWriter) -> None:
    config = writer_config(tmp_path)
    row = writer.conn.execute("SELECT name, base_url, roots, config FROM info").fetchone()
    assert row[0] == "a"
    assert row[1] == "http://example.com/"
    assert row[2] == '["http://example.com/"]'
    assert CrawlConfig.from_json(row[3]) == config
    assert writer.stored_config_json() == row[3]
    assert Path(f"{config.output}.lock").read_text().split() == [str(os.getpid()), "crawl"]


def test_create_refuses_an_existing_file(tmp_path: Path) -> None:
    config = writer_config(tmp_path)
    Path(config.output).write_bytes(b"keep me")
    with pytest.raises(ArchiveError, match="Output file already exists"):
        ArchiveWriter.create(config)
    assert Path(config.output).read_bytes() == b"keep me"
    assert not Path(f"{config.output}.lock").exists()


def test_create_refuses_while_another_writer_holds_it(
    tmp_path: Path, writer: ArchiveWriter
) -> None:
    with pytest.raises(ArchiveLockError):
        ArchiveWriter.create(writer_config(tmp_path))


def test_the_parts_share_the_writers_connection_and_batch(writer: ArchiveWriter) -> None:
    writer.runs.start("crawl")
    writer.frontier.add([frontier_entry("http://example.com/", 0)])
    writer.pages.record_sitemap([("http://example.com/listed", False)])
    writer.runs.record_trap_event("sig", "/p", 3, "http://example.com/p/1", "http://example.com/p/3")
    assert writer.conn.in_transaction and writer.dirty == 1
    writer.rollback()  # one batch: all of it goes
    assert writer.conn.execute("SELECT count(*) FROM frontier").fetchone()[0] == 0
    assert writer.conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 0
    assert writer.runs.capped_signatures() == []
    assert writer.conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 1  # committed


def test_reopen_refuses_a_missing_or_foreign_file(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="Archive not found"):
        ArchiveWriter.reopen(tmp_path / "missing.nitpicker")
    text = tmp_path / "text.nitpicker"
    text.write_text("not sqlite")
    with pytest.raises(ArchiveError, match="Not a nitpicker archive"):
        ArchiveWriter.reopen(text)


@pytest.mark.integration  # starts a process
def test_close_leaves_a_plain_sqlite_file(tmp_path: Path, writer: ArchiveWriter) -> None:
    path = Path(writer_config(tmp_path).output)
    writer.runs.start("crawl")
    writer.frontier.add([frontier_entry("http://example.com/", 0), frontier_entry("http://example.com/a", 1)])
    assert Path(f"{path}-wal").exists()  # WAL while writing
    writer.close()
    assert not Path(f"{path}-wal").exists()
    assert not Path(f"{path}-shm").exists()
    assert not Path(f"{path}.lock").exists()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT count(*) FROM frontier").fetchone()[0] == 2
    finally:
        conn.close()
    sqlite_shell = Path("/usr/bin/sqlite3")
    if not sqlite_shell.exists():
        pytest.skip("/usr/bin/sqlite3 is not installed")
    result = subprocess.run(
        [str(sqlite_shell), str(path), "select count(*) from frontier"],
        capture_output=True, text=True, check=False, timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"


def test_abandon_drops_the_open_batch(tmp_path: Path, writer: ArchiveWriter) -> None:
    path = Path(writer_config(tmp_path).output)
    writer.frontier.add([frontier_entry("http://example.com/", 0)])
    writer.commit()
    writer.frontier.add([frontier_entry("http://example.com/lost", 1)])
    writer.abandon()
    assert not Path(f"{path}.lock").exists()
    assert set(frontier_states(path)) == {"http://example.com/"}


def test_close_while_a_reader_has_the_archive_open(tmp_path: Path) -> None:
    config = CrawlConfig(roots=("http://example.com/",), output=str(tmp_path / "r.nitpicker"))
    writer = ArchiveWriter.create(config)
    writer.runs.start("crawl")
    writer.frontier.add([("//example.com/", "http://example.com/", 0, 0)])
    reader = sqlite3.connect(f"{(tmp_path / 'r.nitpicker').as_uri()}?mode=ro", uri=True)
    assert reader.execute("SELECT count(*) FROM info").fetchone()[0] == 1
    writer.close()  # must not raise although the reader holds the file
    assert reader.execute("SELECT count(*) FROM frontier").fetchone()[0] == 1
    reader.close()
    assert not (tmp_path / "r.nitpicker.lock").exists()
