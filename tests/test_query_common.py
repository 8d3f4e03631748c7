"""``nitpicker.query._common``'s schema probe: what an archive has (its migrations, tables,
views and columns), asked in one place by every query that reads an older archive."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from nitpicker.archive.schema import MIGRATIONS, migrate
from nitpicker.query._common import has_column, has_migration, has_tables

ROOT = Path(__file__).resolve().parent.parent

PROBE = re.compile(r"sqlite_master|sqlite_schema|pragma_table_info|table_info\(|FROM migrations",
                   re.IGNORECASE)


@pytest.fixture
def current() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    migrate(conn)
    return conn


@pytest.fixture
def old(tmp_path: Path) -> sqlite3.Connection:
    """An archive of the first twelve migrations: before analysis, response times, outages."""
    conn = sqlite3.connect(tmp_path / "old.nitpicker", isolation_level=None)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, sql in MIGRATIONS[:12]:
        for statement in sql.split(";\n"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO migrations VALUES (?, '')", (name,))
    return conn


def test_has_migration(current: sqlite3.Connection, old: sqlite3.Connection) -> None:
    assert has_migration(current, "0014_response_time")
    assert has_migration(old, "0009_image_size")
    assert not has_migration(old, "0014_response_time")
    assert not has_migration(current, "9999_future")


def test_has_tables_wants_every_one_named(current: sqlite3.Connection,
                                          old: sqlite3.Connection) -> None:
    assert has_tables(current, "violations", "page_values", "analysis_runs")
    assert has_tables(current, "findings")  # a view counts
    assert has_tables(old, "json_ld_blocks", "json_ld_types")
    assert not has_tables(old, "json_ld_blocks", "outages")
    assert not has_tables(old, "findings")
    assert has_tables(current, "pages", "pages")  # a name twice is still one table


def test_has_column(current: sqlite3.Connection, old: sqlite3.Connection) -> None:
    assert has_column(current, "pages", "charset")
    assert has_column(old, "pages", "in_inventory")  # 0012_page_origin
    assert not has_column(old, "pages", "response_time_ms")
    assert not has_column(old, "no_such_table", "x")


def test_an_attached_archive_is_probed_by_its_name(old: sqlite3.Connection,
                                                   tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("ATTACH DATABASE ? AS old", (str(tmp_path / "old.nitpicker"),))
    assert has_migration(conn, "0011_json_ld", schema="old")
    assert not has_tables(conn, "violations", schema="old")
    assert not has_column(conn, "pages", "charset", schema="old")
    assert has_column(conn, "pages", "in_sitemap", schema="old")


def test_a_schema_name_outside_the_table_is_refused(current: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match="Invalid schema: 'main; DROP TABLE pages'"):
        has_tables(current, "pages", schema="main; DROP TABLE pages")


def test_no_other_query_module_probes_the_schema() -> None:
    """The one probe: a query asks ``has_migration`` / ``has_tables`` / ``has_column``, never
    the catalogue itself."""
    probing = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "nitpicker" / "query").rglob("*.py")
        if path.name not in ("_common.py", "connection.py")  # the opener: is it locked?
        and PROBE.search(path.read_text(encoding="utf-8")))
    assert probing == []
