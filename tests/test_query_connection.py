"""``nitpicker.query.connection``: the one way to read an archive — :func:`open_archive`,
read-only and checked — which every reader uses, and the writers' check before they take the
lock (the writer's own connection: ``nitpicker.archive.connection.connect``)."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

from nitpicker.archive.connection import connect
from nitpicker.archive.schema import migrate
from nitpicker.archive.writer import ArchiveError, check_archive_file
from nitpicker.query.connection import ArchiveOpenError, open_archive, read_only_uri
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent

OTHER_CONNECTIONS = {
    "nitpicker/query/connection.py": "the opener itself",
    "nitpicker/archive/connection.py": "the writer's connection, once the file is checked",
    "nitpicker/archive/trap_counts.py": "the trap cap's scratch file of --workers N, no archive",
    "nitpicker/query/diff.py": "an in-memory connection both archives are attached to",
}


def _archive(path: Path) -> Path:
    conn = connect(path)
    migrate(conn)
    conn.execute("INSERT INTO info(id, version, name, base_url, roots, from_list, config,"
                 " created_at) VALUES (1, '0', 'x', 'https://x.example/', '[]', 0, '{}', '')")
    conn.close()
    return path


def test_no_module_but_the_opener_connects_to_a_file() -> None:
    """Every reader of an archive opens it with ``open_archive`` (and every writer checks it
    so): no second opener with its own checks (or none)."""
    found = {}
    for folder in ("nitpicker", "plugins", "reports"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "connect"
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "sqlite3"):
                    found[path.relative_to(ROOT).as_posix()] = node.lineno
    assert set(found) == set(OTHER_CONNECTIONS), found


def test_the_read_only_variant_never_writes(tmp_path: Path) -> None:
    conn = open_archive(_archive(tmp_path / "a.nitpicker"))
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM info")
    finally:
        conn.close()


def test_the_writers_connection(tmp_path: Path) -> None:
    conn = connect(_archive(tmp_path / "a.nitpicker"))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.isolation_level is None  # autocommit: the writer begins its own batches
    finally:
        conn.close()


@pytest.mark.parametrize(("content", "message"), [
    (None, "Archive not found: {path}"),
    (b"not sqlite", "Not a nitpicker archive: {path}"),
])
def test_a_file_that_is_no_archive_is_one_message_naming_it(tmp_path: Path, content: bytes | None,
                                                             message: str) -> None:
    path = tmp_path / "notes.nitpicker"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ArchiveOpenError) as raised:
        open_archive(path)
    assert str(raised.value) == message.format(path=path)
    with pytest.raises(ArchiveError, match=re.escape(message.format(path=path))):
        check_archive_file(path)  # the writers' check is the same check


def test_an_archive_of_a_newer_nitpicker_is_refused(tmp_path: Path) -> None:
    path = _archive(tmp_path / "a.nitpicker")
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO migrations VALUES ('9999_future', '')")
    with pytest.raises(ArchiveOpenError, match="newer nitpicker"):
        open_archive(path)


def test_read_only_uri_names_the_file_read_only(tmp_path: Path) -> None:
    path = _archive(tmp_path / "a b.nitpicker")  # a space: quoted in the URI
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("ATTACH DATABASE ? AS s", (read_only_uri(path),))
        assert conn.execute("SELECT name FROM s.info").fetchone() == ("x",)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM s.info")
    finally:
        conn.close()


@pytest.mark.integration
def test_merge_says_a_foreign_shard_as_every_reader_does(tmp_path: Path) -> None:
    """``merge`` reads its shards with the one opener: a file that is not an archive is the
    line ``query``, ``diff`` and ``analyze`` give."""
    good = _archive(tmp_path / "a.nitpicker")
    foreign = tmp_path / "notes.nitpicker"
    foreign.write_text("not sqlite")
    done = run("merge", str(good), str(foreign), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: Not a nitpicker archive: {foreign}"]
    assert not (tmp_path / "merged.nitpicker").exists()
