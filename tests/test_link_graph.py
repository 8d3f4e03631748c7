"""The link score: ``nitpicker/query/link_graph.py`` (the in-scope link graph read from an
archive, its PageRank checked against the linear system it solves) and
``nitpicker/archive/link_score.py`` (stored after a crawl and ``nitpicker check``), shown in
``query pages`` and ordering an issue's URLs, through the command line."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from nitpicker.archive.click_depth import set_click_depths, store_click_depths
from nitpicker.archive.close_reader import CloseReader, ComputedLinkScores
from nitpicker.archive.link_score import record_link_scores
from nitpicker.archive.schema import migrate
from nitpicker.query.link_graph import DAMPING, link_scores, pagerank, read_link_graph
from tests.helpers import rows, run

if TYPE_CHECKING:
    from pathlib import Path


def _exact(nodes: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """PageRank as the solution of its linear system (dangling nodes link to every node)."""
    matrix = np.zeros((nodes, nodes))
    out = [sum(1 for s, _ in edges if s == node) for node in range(nodes)]
    for source, target in edges:
        matrix[target, source] += 1 / out[source]
    for node in range(nodes):
        if not out[node]:
            matrix[:, node] = 1 / nodes
    system = np.eye(nodes) - DAMPING * matrix
    return np.linalg.solve(system, np.full(nodes, (1 - DAMPING) / nodes))


@pytest.mark.parametrize("seed", range(5))
def test_pagerank_solves_its_linear_system(seed: int) -> None:
    generator = np.random.default_rng(seed)
    nodes = 30
    pairs = {(int(s), int(t)) for s, t in generator.integers(0, nodes, size=(90, 2)) if s != t}
    edges = sorted(pairs)
    sources = np.array([s for s, _ in edges], dtype=np.int64)
    targets = np.array([t for _, t in edges], dtype=np.int64)
    found = pagerank(nodes, sources, targets)
    assert found.sum() == pytest.approx(1.0)
    assert found == pytest.approx(_exact(nodes, edges), abs=1e-8)


def test_pagerank_of_no_link_is_even_and_of_nothing_is_empty() -> None:
    none = np.zeros(0, dtype=np.int64)
    assert pagerank(4, none, none) == pytest.approx([0.25] * 4)
    assert len(pagerank(0, none, none)) == 0


_PAGE = ("INSERT INTO pages(id, url, scraped, is_external, content_type, status, nofollow,"
         " redirect_dest_id) VALUES (?, ?, 1, ?, ?, ?, ?, ?)")


def _archive(path: Path) -> sqlite3.Connection:
    """Pages 1–4 the graph's nodes (4 nofollow); 5 a redirect to 2; 6 external; 7 a 404;
    8 a PDF."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    html = "text/html"
    conn.executemany(_PAGE, [
        (1, "http://s/", 0, html, 200, 0, None), (2, "http://s/a", 0, html, 200, 0, None),
        (3, "http://s/b", 0, html, 200, 0, None), (4, "http://s/c", 0, html, 200, 1, None),
        (5, "http://s/old-a", 0, None, 301, 0, 2), (6, "http://x/", 1, html, 200, 0, None),
        (7, "http://s/gone", 0, html, 404, 0, None), (8, "http://s/f.pdf", 0, "application/pdf",
                                                      200, 0, None)])
    conn.executemany("INSERT INTO anchors(page_id, href_id) VALUES (?, ?)", [
        (1, 2), (1, 2), (1, 3), (1, 1), (1, 6), (1, 7), (1, 8),  # twice, itself, out of graph
        (3, 5),  # through a redirect: to 2
        (2, 1), (4, 1), (4, 2),  # 4 is nofollow: no edge out
        (7, 3)])  # a 404 is no node: its links count for nothing
    return conn


def test_the_graph_is_the_links_between_internal_2xx_html_pages(tmp_path: Path) -> None:
    with closing(_archive(tmp_path / "graph.db")) as conn:
        graph = read_link_graph(conn)
    assert graph.page_ids.tolist() == [1, 2, 3, 4]
    edges = {(int(graph.page_ids[s]), int(graph.page_ids[t]))
             for s, t in zip(graph.sources, graph.targets, strict=True)}
    assert edges == {(1, 2), (1, 3), (3, 2), (2, 1)}


def test_the_scores_are_stored_pages_out_of_the_graph_have_none(tmp_path: Path) -> None:
    with closing(_archive(tmp_path / "graph.db")) as conn:
        summary = record_link_scores(conn)
        scores = dict(conn.execute("SELECT id, link_score FROM pages"))
    assert (summary.pages, summary.links) == (4, 4)
    assert scores[5] is scores[6] is scores[7] is scores[8] is None
    exact = _exact(4, [(0, 1), (0, 2), (2, 1), (1, 0)]) * 4
    assert [scores[page] for page in (1, 2, 3, 4)] == pytest.approx(exact.tolist(), abs=1e-5)
    assert sum(scores[page] for page in (1, 2, 3, 4)) == pytest.approx(4, abs=1e-4)


# -- through the command line -------------------------------------------------------------------


@pytest.fixture(scope="module")
def crawled(site: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("link-score")
    done = run("crawl", site.url("/structured/"), "-o", "scored", "--silent", cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "scored.nitpicker", site.url("/structured/")


def _pages_by_score(archive: Path, base: str) -> list[tuple[str, float | None]]:
    result = run("query", str(archive), "pages", "--sort-by", "link_score", "--sort-order",
                 "desc", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return [(item["url"].removeprefix(base), item["link_score"])
            for item in json.loads(result.stdout)["items"] if item["url"].startswith(base)]


def test_the_most_linked_pages_score_highest(crawled: tuple[Path, str]) -> None:
    """The hub (linked from every page) first, then ``rdfa-missing`` (from every page but the
    hub and ``deep``), then the pages the hub alone links to, ``deep`` (linked from one page
    the hub links to) last."""
    archive, base = crawled
    ranked = _pages_by_score(archive, base)
    assert [path for path, _ in ranked[:2]] == ["", "rdfa-missing"]
    assert ranked[-1][0] == "deep"
    middle = {score for _, score in ranked[2:-1]}
    assert len(middle) == 1
    assert ranked[1][1] > middle.pop() > ranked[-1][1]  # type: ignore[operator]


def test_an_issue_lists_its_most_important_urls_first(crawled: tuple[Path, str]) -> None:
    """``rdfa-missing`` first though its URL sorts last; the two others by URL."""
    archive, base = crawled
    result = run("query", str(archive), "issue", "--id", "structured-data/missing-required",
                 cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    urls = [item["url"].removeprefix(base) for item in json.loads(result.stdout)["items"]]
    assert urls == ["rdfa-missing", "json-ld-missing", "microdata-missing"]


def test_an_archive_before_link_scores_reads_then_check_scores_it(crawled: tuple[Path, str],
                                                                  tmp_path: Path) -> None:
    archive, base = crawled
    older = tmp_path / "older.nitpicker"
    older.write_bytes(archive.read_bytes())
    with closing(sqlite3.connect(older)) as conn:
        conn.execute("ALTER TABLE pages DROP COLUMN link_score")
        conn.execute("DELETE FROM migrations WHERE name = '0032_link_score'")
        conn.commit()
    unscored = _pages_by_score(older, base)
    assert {score for _, score in unscored} == {None}
    assert [path for path, _ in unscored] == sorted(path for path, _ in unscored)  # by URL
    result = run("check", str(older), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _pages_by_score(older, base) == _pages_by_score(archive, base)
    assert rows(older, "SELECT count(*) FROM pages WHERE link_score IS NOT NULL") == [(12,)]


# -- computed in a process of their own while a crawl closes -----------------------------------


@pytest.mark.integration
def test_the_process_computes_the_scores_the_writer_would(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    with closing(_archive(path)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
                     " VALUES (1, '1', 'graph', 'http://s/', '[\"http://s/\"]', '{}', '')")
        reader = CloseReader.start(path)
        computed = reader.link_scores()
        assert computed is not None
        graph = read_link_graph(conn)
        assert computed.page_ids.tolist() == graph.page_ids.tolist() == [1, 2, 3, 4]
        assert computed.scores.tolist() == link_scores(graph).tolist()
        assert computed.edges == graph.edges == 4
        summary = record_link_scores(conn, computed)
        stored = dict(conn.execute("SELECT id, link_score FROM pages"))
        assert (summary.pages, summary.links) == (4, 4)
        record_link_scores(conn)
        assert dict(conn.execute("SELECT id, link_score FROM pages")) == stored
        changes = reader.click_depths()
        assert changes is not None and len(changes) == 7, "every page but the PDF's is reached"
        store_click_depths(conn, changes)
        read_here = dict(conn.execute("SELECT id, depth FROM pages"))
        conn.execute("UPDATE pages SET depth = NULL")
        set_click_depths(conn)
        assert dict(conn.execute("SELECT id, depth FROM pages")) == read_here


def test_given_scores_are_stored_not_computed_again(tmp_path: Path) -> None:
    with closing(_archive(tmp_path / "graph.db")) as conn:
        given = ComputedLinkScores(np.array([2, 3]), np.array([1.5, 0.25]), 7)
        summary = record_link_scores(conn, given)
        assert dict(conn.execute("SELECT id, link_score FROM pages WHERE link_score IS NOT NULL")
                    ) == {2: 1.5, 3: 0.25}
    assert (summary.pages, summary.links) == (2, 7)


@pytest.mark.integration
def test_a_process_that_fails_leaves_the_scores_and_depths_to_the_writer(tmp_path: Path) -> None:
    failed = CloseReader.start(tmp_path / "missing.nitpicker")
    assert failed.link_scores() is None
    assert failed.click_depths() is None
    stopped = CloseReader.start(tmp_path / "missing.nitpicker")
    stopped.cancel()
    assert stopped.link_scores() is None


@pytest.mark.integration
def test_a_crawl_closing_with_the_process_stores_the_same_scores_and_depths(
        crawled: tuple[Path, str], tmp_path: Path) -> None:
    archive, base = crawled
    result = run("crawl", base, "-o", "beside", "--verbose", cwd=tmp_path,
                 env={"NITPICKER_CLOSE_READER_PAGES": "1"})
    assert result.returncode == 0, result.stderr
    assert "link scores computed beside the close" in result.stderr
    beside = tmp_path / "beside.nitpicker"
    assert _pages_by_score(beside, base) == _pages_by_score(archive, base)
    depths = "SELECT url, depth FROM pages ORDER BY url"
    assert rows(beside, depths) == rows(archive, depths)
