"""``nitpicker.query.charts``: the one count behind each chart, which the viewer's Summary and
the HTML report both draw (each its own way)."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

import pytest

from nitpicker.archive.schema import migrate
from nitpicker.query import charts, get_summary
from nitpicker.query.connection import open_archive
from nitpicker.report import ReportSource
from nitpicker.viewer.views import OpenArchive, summary_view

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

BASE = "https://site.example"

PAGES = [  # url, status, content type, depth, external, redirect to, skipped
    ("/", 200, "text/html", 0, 0, None, 0),
    ("/a", 200, "text/html", 1, 0, None, 0),
    ("/b", 200, "text/html", 1, 0, None, 0),
    ("/c", 404, "text/html", 2, 0, None, 0),
    ("/d", 500, "text/html", 2, 0, None, 0),
    ("/old", 301, "text/html", 1, 0, "/a", 0),  # a redirect source: no page of its own
    ("/notes.txt", 404, "text/plain", 2, 0, None, 0),  # known non-HTML: no page
    ("/private", None, None, None, 0, None, 1),  # skipped
    ("https://other.example/", 200, "text/html", None, 1, None, 0),  # external
    ("/x", -1, None, 3, 0, None, 0),  # a fetch error
]


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    path = tmp_path / "site.nitpicker"
    build = sqlite3.connect(path, isolation_level=None)
    migrate(build)
    build.execute("INSERT INTO info(id, version, name, base_url, roots, from_list, config,"
                  " created_at) VALUES (1, '0', 'site', ?, ?, 0, '{}', '')",
                  (BASE + "/", f'["{BASE}/"]'))
    for url, status, kind, depth, external, _, skipped in PAGES:
        build.execute("INSERT INTO pages(url, scraped, is_target, is_external, status,"
                      " content_type, depth, is_skipped) VALUES (?, ?, 1, ?, ?, ?, ?, ?)",
                      (_url(url), int(not skipped), external, status, kind, depth, skipped))
    for url, *_, target, _ in PAGES:
        if target:
            build.execute("UPDATE pages SET redirect_dest_id = (SELECT id FROM pages WHERE"
                          " url = ?) WHERE url = ?", (_url(target), _url(url)))
    build.close()
    conn = open_archive(path)
    yield path, conn
    conn.close()


def _url(path: str) -> str:
    return path if path.startswith("https:") else BASE + path


def test_the_status_chart_counts_the_pages(archive: tuple[Path, sqlite3.Connection]) -> None:
    _, conn = archive
    assert charts.status_distribution(conn) == [("-1", 1), ("200", 4), ("404", 1), ("500", 1)]
    assert charts.pages_by_depth(conn) == [("0", 1), ("1", 2), ("2", 2)]  # HTML in scope


def test_query_summary_counts_the_statuses_the_chart_shows(
        archive: tuple[Path, sqlite3.Connection]) -> None:
    _, conn = archive
    assert [(str(row["status"]), row["count"])
            for row in get_summary(conn)["status_distribution"]] == charts.status_distribution(conn)


def test_the_viewer_draws_the_charts_counts(archive: tuple[Path, sqlite3.Connection]) -> None:
    path, conn = archive
    _, data = summary_view(OpenArchive(0, path, conn, BASE), {})
    drawn = {name: [(bar["label"], bar["count"]) for bar in chart["bars"]]
             for name, chart in (("status", data["status_chart"]), *data["charts"].items())}
    assert drawn == {"status": charts.status_distribution(conn),
                     "depth": charts.pages_by_depth(conn),
                     "content_type": charts.content_types(conn),
                     "validator": charts.findings_by_validator(conn)}


def test_the_report_draws_the_charts_counts(archive: tuple[Path, sqlite3.Connection],
                                            tmp_path: Path) -> None:
    from nitpicker_reports.html import HtmlReporter

    _, conn = archive
    out = tmp_path / "report.html"
    HtmlReporter().write(ReportSource(conn, []), out)
    html = out.read_text(encoding="utf-8")

    def drawn(chart_id: str) -> list[tuple[str, int]]:
        svg = re.search(rf'<svg class="chart" id="{chart_id}".*?</svg>', html)
        assert svg is not None, chart_id
        return [(label, int(count)) for label, count in
                re.findall(r'<g class="bar"><title>(.*?): (\d+)</title>', svg.group())]

    assert drawn("chart-status") == charts.status_distribution(conn)
    assert drawn("chart-depth") == charts.pages_by_depth(conn)
