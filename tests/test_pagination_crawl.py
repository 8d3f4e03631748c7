"""Predictive pagination in real crawls of the fixture site (nitpicker/middlewares/pagination.py).

What is recorded, and that nothing is recorded from a missed prediction; never timings (those
are bench/pagination.py's).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest
import pytest_twisted
from scrapy.exceptions import NotConfigured

from fixtures.site import PAGER_MAX
from nitpicker.middlewares.pagination import PaginationMiddleware
from tests.components import unit_crawler
from tests.helpers import Archive, crawl, run

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite


def requested(site: FixtureSite, pattern: str) -> Counter[str]:
    """GET requests whose target matches ``pattern``: target → how many."""
    return Counter(t for method, _, t in site.request_log
                   if method == "GET" and re.fullmatch(pattern, t))


def no_rows_for(archive: Archive, urls: list[str]) -> None:
    marks = ",".join("?" * len(urls))
    assert archive.rows(f"SELECT url FROM pages WHERE url IN ({marks})", *urls) == []
    assert archive.rows(f"SELECT url FROM frontier WHERE url IN ({marks})", *urls) == []


@pytest_twisted.ensureDeferred
async def test_spec_scenario_19_predicted_404s_are_not_stored(
    site: FixtureSite, tmp_path: Path
) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/pagination/")], parallels=5)
    pages = {site.url(f"/pagination/page/{n}") for n in range(1, 11)}
    assert pages <= archive.internal_pages()
    assert {r["status"] for r in archive.rows(
        "SELECT status FROM pages WHERE url LIKE ?", site.url("/pagination/page/%"))} == {200}
    # Page 9 and its link to 10 predicted 11..15 (parallels 5): fetched, 404, never stored.
    missed = [f"/pagination/page/{n}" for n in range(11, 16)]
    assert set(requested(site, r"/pagination/page/\d+")) >= set(missed)
    no_rows_for(archive, [site.url(path) for path in missed])
    assert archive.rows("SELECT count(*) AS n FROM frontier WHERE state < 2")[0]["n"] == 0
    run = archive.rows("SELECT status, errors FROM runs")[0]
    assert (run["status"], run["errors"]) == ("finished", 0)


@pytest_twisted.ensureDeferred
async def test_no_predict_pagination_requests_only_linked_pages(
    site: FixtureSite, tmp_path: Path
) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/pagination/")], parallels=5,
                          predict_pagination=False)
    assert set(requested(site, r"/pagination/page/\d+")) == {
        f"/pagination/page/{n}" for n in range(1, 11)}
    assert archive.page(site.url("/pagination/page/10"))["status"] == 200


@pytest.mark.parametrize("predict", [True, False])
@pytest_twisted.ensureDeferred
async def test_the_pager_is_recorded_the_same_and_each_page_fetched_once(
    site: FixtureSite, tmp_path: Path, predict: bool
) -> None:
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/pager/")], parallels=8,
                          predict_pagination=predict)
    pager = [site.url("/pager/")] + [site.url(f"/pager/?page={n}") for n in range(2, PAGER_MAX + 1)]
    rows = archive.rows("SELECT url, status, title, is_target FROM pages ORDER BY url")
    assert {r["url"] for r in rows} == set(pager)
    assert all((r["status"], r["is_target"]) == (200, 1) for r in rows)
    assert {r["title"] for r in rows} == {f"Pager page {n}" for n in range(1, PAGER_MAX + 1)}
    # Every page recorded once, fetched once, whether a real link or a prediction got there first.
    fetched = requested(site, r"/pager/(\?page=\d+)?")
    assert all(fetched[t] == 1 for t in ["/pager/", *(f"/pager/?page={n}" for n in range(2, 201))])
    # Its anchors point at the pages' own rows: next, previous and first.
    assert archive.anchors_of(site.url("/pager/?page=57")) == [
        site.url("/pager/"), site.url("/pager/?page=56"), site.url("/pager/?page=58")]
    beyond = [t for t in fetched if int(re.sub(r"\D", "", t) or 1) > PAGER_MAX]
    if predict:
        # Pages were fetched ahead of their links: past the end too (404, not recorded), once.
        assert beyond and all(fetched[t] == 1 for t in beyond)
        # Most pages were reached by a prediction first (their frontier rows say so).
        assert archive.rows("SELECT count(*) AS n FROM frontier WHERE mode = 6")[0]["n"] > 100
    else:
        assert beyond == []
    assert archive.rows("SELECT count(*) AS n FROM frontier WHERE state < 2")[0]["n"] == 0


@pytest_twisted.ensureDeferred
async def test_a_missed_prediction_a_real_link_reaches_is_recorded_once(
    site: FixtureSite, tmp_path: Path
) -> None:
    """/pagination/links links to page 12 (404), which page 9's prediction fetches too."""
    site.clear_log()
    archive = await crawl(
        tmp_path, [site.url("/pagination/"), site.url("/pagination/links")], parallels=5
    )
    broken = archive.rows("SELECT id, status, is_target FROM pages WHERE url = ?",
                          site.url("/pagination/page/12"))
    assert [(r["status"], r["is_target"]) for r in broken] == [(404, 1)]
    assert archive.anchors_of(site.url("/pagination/links")) == [site.url("/pagination/page/12")]
    no_rows_for(archive, [site.url(f"/pagination/page/{n}") for n in (11, 13, 14, 15)])
    assert archive.rows("SELECT count(*) AS n FROM frontier WHERE state < 2")[0]["n"] == 0


@pytest_twisted.ensureDeferred
async def test_predicted_404s_do_not_make_a_trap_cluster(site: FixtureSite, tmp_path: Path) -> None:
    """Past the pager's end, every predicted page is the same "Page not found" 404 under
    /pager/: counted, they would be a cluster of one signature and fire the trap cap."""
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/pager/")], parallels=10, dedupe_cap=3)
    assert len(requested(site, r"/pager/\?page=2\d\d")) >= 3  # 201, 202, … were predicted
    assert archive.rows("SELECT * FROM trap_events") == []
    assert archive.page(site.url("/pager/?page=200"))["status"] == 200
    assert archive.rows("SELECT url FROM pages WHERE status = 404") == []


@pytest_twisted.ensureDeferred
async def test_predictions_never_go_runaway_or_scientific(site: FixtureSite, tmp_path: Path) -> None:
    """/pagination/runaway links 99998 and 99999 (the next is a runaway number), two
    scientific-notation years, and a pager under a scientific-notation segment."""
    site.clear_log()
    archive = await crawl(tmp_path, [site.url("/pagination/runaway")], parallels=10)
    linked = {url.removeprefix(site.base_url) for url in archive.anchors_of(site.url("/pagination/runaway"))}
    assert len(linked) == 6
    assert set(requested(site, r"/pagination/runaway/.+")) == linked


def test_an_endless_pager_ends_through_the_cli(site: FixtureSite, tmp_path: Path) -> None:
    """Every /endless/{n}/ answers 200 and links 2020 and 2021: the pages the index and
    the two years predict (the next --parallels numbers, 10 by default) are fetched; a
    predicted page, whose links do not continue the series, predicts nothing further."""
    site.clear_log()
    result = run("crawl", site.url("/endless/"), "-o", "endless", "--silent", cwd=tmp_path,
                 timeout=90)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "endless.nitpicker")
    expected = {site.url("/endless/")} | {site.url(f"/endless/{n}/") for n in range(2020, 2032)}
    assert archive.urls() == expected
    assert set(requested(site, r"/endless/.*")) == {
        url.removeprefix(site.base_url) for url in expected}
    assert [tuple(r) for r in archive.rows("SELECT status, error_code FROM runs")] == [
        ("finished", None)]


@pytest.mark.parametrize(
    ("options", "enabled"),
    [
        ({}, True),
        ({"predict_pagination": False}, False),
        ({"single": True}, False),
        ({"recursive": False}, False),
        ({"list_mode": True, "recursive": False}, False),
    ],
)
def test_the_option_turns_the_middleware_on_and_off(
    tmp_path: Path, options: dict[str, object], enabled: bool
) -> None:
    crawler = unit_crawler(tmp_path, parallels=7, **options)
    if enabled:
        assert PaginationMiddleware.from_crawler(crawler).count == 7
    else:
        with pytest.raises(NotConfigured):
            PaginationMiddleware.from_crawler(crawler)
