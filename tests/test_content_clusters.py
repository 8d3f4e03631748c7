"""The near-duplicate clusters (``nitpicker/archive/content_clusters.py``) over a real, migrated
archive whose pages' contents are written here: which pages cluster, at which threshold,
their exact copies, the pages not compared; a group of candidates larger than
:data:`~nitpicker.archive.content_clusters.PAIRWISE` too."""

from __future__ import annotations

import random
import sqlite3
from typing import TYPE_CHECKING

import pytest

from nitpicker.archive.content_clusters import PAIRWISE, record_content_clusters
from nitpicker.archive.schema import migrate
from nitpicker.policy.minhash import fingerprint

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "clusters.nitpicker", isolation_level=None)
    migrate(connection)
    yield connection
    connection.close()


def _words(seed: int, count: int = 300) -> list[str]:
    chooser = random.Random(seed)
    return [f"w{chooser.randrange(3000)}" for _ in range(count)]


def _changed(words: list[str], *positions: int) -> list[str]:
    return [f"x{n}" if n in positions else word for n, word in enumerate(words)]


def _page(conn: sqlite3.Connection, url: str, words: list[str], *, status: int = 200) -> int:
    page_id = int(conn.execute(
        "INSERT INTO pages(url, scraped, is_external, content_type, status)"
        " VALUES (?, 1, 0, 'text/html', ?) RETURNING id", (url, status)).fetchone()[0])
    signed = fingerprint(" ".join(words))
    conn.execute("INSERT INTO page_content(page_id, ids, main, words, content_hash, minhash)"
                 " VALUES (?, 0, 'main', ?, ?, ?)",
                 (page_id, signed.words, signed.content_hash, signed.minhash))
    return page_id


def _clusters(conn: sqlite3.Connection) -> dict[str, str]:
    """URL -> its cluster's first URL."""
    return dict(conn.execute(
        "SELECT p.url, f.url FROM content_clusters k JOIN pages p ON p.id = k.page_id"
        " JOIN pages f ON f.id = k.cluster_id"))


def test_near_duplicates_cluster_and_the_rest_do_not(conn: sqlite3.Connection) -> None:
    base, other = _words(1), _words(2)
    _page(conn, "/a", base)
    _page(conn, "/b", _changed(base, 100))
    _page(conn, "/c", _changed(base, 200, 250))
    _page(conn, "/a-copy", [word.upper() for word in base])  # an exact copy of /a
    _page(conn, "/half", base[:150] + other[:150])
    _page(conn, "/other", other)
    _page(conn, "/other-404", _changed(other, 5), status=404)  # not compared: not 2xx
    _page(conn, "/short-1", ["five", "words", "on", "a", "page"])
    _page(conn, "/short-2", ["five", "words", "on", "a", "page", "too"])
    summary = record_content_clusters(conn, 0.9)
    assert _clusters(conn) == {"/a": "/a", "/b": "/a", "/c": "/a", "/a-copy": "/a"}
    assert (summary.pages, summary.clusters, summary.clustered) == (5, 1, 4)
    similarity = dict(conn.execute("SELECT p.url, k.similarity FROM content_clusters k"
                                   " JOIN pages p ON p.id = k.page_id"))
    assert similarity["/a"] == similarity["/a-copy"] == 1.0
    assert 0.9 <= similarity["/c"] <= 1.0 and 0.9 <= similarity["/b"] <= 1.0
    record_content_clusters(conn, 0.2)  # replaced whole; /half is a third like /a and /other:
    assert sorted(_clusters(conn)) == ["/a", "/a-copy", "/b", "/c", "/half", "/other"]


def test_a_large_group_of_candidates_is_clustered_through_leaders(
        conn: sqlite3.Connection) -> None:
    """More alike pages than :data:`PAIRWISE`, each a word changed: one cluster; and as many
    pages each of their own words: none."""
    base = _words(3)
    count = PAIRWISE + 20
    for n in range(count):
        _page(conn, f"/alike/{n:03}", _changed(base, n))
        _page(conn, f"/own/{n:03}", _words(100 + n))
    record_content_clusters(conn, 0.9)
    found = _clusters(conn)
    assert sorted(found) == [f"/alike/{n:03}" for n in range(count)]
    assert set(found.values()) == {"/alike/000"}


def test_an_archive_without_signatures_has_no_clusters(conn: sqlite3.Connection) -> None:
    summary = record_content_clusters(conn, 0.9)
    assert (summary.pages, summary.clusters, _clusters(conn)) == (0, 0, {})
