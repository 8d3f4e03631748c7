"""What ``concat`` and ``split`` share (nitpicker/archive/transfer.py): the scope test of a
stored URL, and writing the new archive (their commands are tested in tests/test_concat.py
and tests/test_split.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nitpicker.archive.transfer import ScopeTest, TransferError, write_archive


@pytest.mark.parametrize(("url", "root"), [
    ("https://example.com/blog/", "https://example.com/blog/"),
    ("http://example.com/blog/post", "https://example.com/blog/"),  # either scheme
    ("https://example.com/blog/?page=2", "https://example.com/blog/"),
    ("https://example.com/docs/api", "https://example.com/docs/api"),
    ("https://example.com/docs/api/v2", "https://example.com/docs/api"),
    ("https://example.com/docs/api-old", None),  # a file root covers what lies under it only
    ("https://example.com/blogs/", None),
    ("https://example.com:8080/blog/", None),  # another port
    ("https://www.example.com/blog/", None),
    ("mailto:someone@example.com", None),
])
def test_scope_of_a_stored_url(url: str, root: str | None) -> None:
    scope = ScopeTest(["https://example.com/blog/", "https://example.com/docs/api"],
                      disable_queries=False)
    assert scope.root_of(url) == root
    assert scope(url) == (root is not None)


def test_a_write_sqlite_refuses_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    def full(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE filler(x)")
        raise sqlite3.OperationalError("database or disk is full")

    output = tmp_path / "new.nitpicker"
    with pytest.raises(TransferError, match=r"^cannot write .*new\.nitpicker: database or disk "
                                            r"is full$"):
        write_archive(output, full)
    assert list(tmp_path.iterdir()) == []
