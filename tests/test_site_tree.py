"""``nitpicker.query.site_tree`` and ``site_graph``: the site by folder, and its link graph
bounded to ``MAX_NODES`` nodes, on a generated archive (``fixtures/snapshot_archive.py``:
pages in ten folders, page n linking to n + 1 (the next folder) and n + 10 (its own))."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

import pytest

from fixtures.snapshot_archive import BASE, FOLDERS, build_snapshot_archive, page_url
from nitpicker.query import open_archive
from nitpicker.query.site_graph import MAX_NODES, site_graph
from nitpicker.query.site_tree import folder_tree, status_class
from nitpicker.viewer.graph import draw_graph, mix_colour

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PAGES = 1000


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path: Path = tmp_path_factory.mktemp("tree") / "tree.nitpicker"
    build_snapshot_archive(path, PAGES)
    writer = sqlite3.connect(path)
    with writer:  # a 404 and a fetch error in /news/, a page two folders down
        writer.execute("UPDATE pages SET status = 404 WHERE id = 10")
        writer.execute("UPDATE pages SET status = -1 WHERE id = 20")
        writer.execute("UPDATE pages SET url = ? WHERE id = 30", (f"{BASE}/news/2024/05/a?x=1",))
    writer.close()
    connection = open_archive(path)
    yield connection
    connection.close()


@pytest.mark.parametrize(("status", "kind"), [
    (200, "2xx"), (301, "3xx"), (404, "4xx"), (503, "5xx"), (-1, "error"), (None, "other"),
    (101, "other")])
def test_status_class(status: int | None, kind: str) -> None:
    assert status_class(status) == kind


def test_the_root_lists_the_folders_with_counts_and_status(conn: sqlite3.Connection) -> None:
    tree = folder_tree(conn)
    assert tree["origins"] == [BASE] and tree["path"] == "/" and tree["parents"] == []
    assert [folder["name"] for folder in tree["folders"]] == sorted(f"{f}/" for f in FOLDERS)
    assert tree["pages"] == PAGES and tree["files"]["total"] == 0
    news = next(folder for folder in tree["folders"] if folder["path"] == "/news/")
    assert news["pages"] == PAGES // 10
    assert (news["status"]["ok"], news["status"]["client_error"], news["status"]["error"]) == (
        PAGES // 10 - 2, 1, 1)
    assert tree["status"]["client_error"] == 1


def test_drill_down_and_page_the_files(conn: sqlite3.Connection) -> None:
    news = folder_tree(conn, "news", limit=5, offset=5)
    assert news["path"] == "/news/" and [p["path"] for p in news["parents"]] == ["/"]
    assert [f["name"] for f in news["folders"]] == ["2024/"]
    assert news["files"]["total"] == PAGES // 10 - 1
    assert len(news["files"]["items"]) == 5
    names = [item["name"] for item in news["files"]["items"]]
    assert names == sorted(names) and all(name.startswith("page-") for name in names)
    deep = folder_tree(conn, "/news/2024/05/")
    assert [p["path"] for p in deep["parents"]] == ["/", "/news/", "/news/2024/"]
    assert [item["name"] for item in deep["files"]["items"]] == ["a?x=1"]
    with pytest.raises(ValueError, match=re.escape("Invalid origin: 'https://other.example'")):
        folder_tree(conn, origin="https://other.example")


def test_a_big_site_is_a_graph_of_folders(conn: sqlite3.Connection) -> None:
    graph = site_graph(conn)
    assert graph["kind"] == "folder" and graph["pages"] == PAGES > MAX_NODES
    # the deepest level with at most MAX_NODES folders: /news/2024/05/ has its own node
    assert sorted(node["id"] for node in graph["nodes"]) == sorted(
        [f"/{f}/" for f in FOLDERS] + ["/news/2024/05/"])
    assert all(node["is_folder"] for node in graph["nodes"])
    assert sum(node["pages"] for node in graph["nodes"]) == PAGES
    # each folder links to the next (n -> n + 1); links within a folder are no edge
    ids = [node["id"] for node in graph["nodes"]]
    pairs = {(ids[e["source"]], ids[e["target"]]): e["links"] for e in graph["edges"]}
    cycle = [(f"/{FOLDERS[k]}/", f"/{FOLDERS[(k + 1) % 10]}/") for k in range(10)]
    assert all(pairs[pair] >= PAGES // 10 - 2 for pair in cycle[:-1])
    assert ("/news/", "/news/2024/05/") in pairs  # page 20 links to page 30 (n + 10)
    assert len(pairs) == len(graph["edges"]) == graph["edges_total"]
    assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0] == 0


def test_a_small_folder_is_a_graph_of_pages(conn: sqlite3.Connection) -> None:
    graph = site_graph(conn, "/blog/")
    assert graph["kind"] == "page" and graph["pages"] == len(graph["nodes"]) == PAGES // 10
    ids = [node["id"] for node in graph["nodes"]]
    assert page_url(1) in ids
    pairs = {(ids[e["source"]], ids[e["target"]]) for e in graph["edges"]}
    assert (page_url(1), page_url(11)) in pairs and len(pairs) == PAGES // 10 - 1
    drawn = draw_graph(graph, "/a/0/")
    assert len(drawn.nodes) == len(ids) and len(drawn.edges) == len(pairs)
    assert all(0 <= node.x <= drawn.size and 0 <= node.y <= drawn.size for node in drawn.nodes)
    assert drawn.nodes[0].href.startswith("/a/0/page?url=")


def test_a_node_is_coloured_by_its_worst_tenth() -> None:
    mix = {"ok": 9, "redirect": 0, "client_error": 1, "server_error": 0, "error": 0, "other": 0}
    assert mix_colour(mix) == "#ef6c00"  # type: ignore[arg-type]
    mix["ok"] = 20
    assert mix_colour(mix) == "#2e7d32"  # type: ignore[arg-type]
