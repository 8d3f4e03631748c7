"""``--dedupe-cap`` end to end: real crawls of the trap site (``fixtures/traps.py``) in-process.

The bound on a stopped trap: each trap page links two trap URLs, and the pages are counted one
at a time, so when the T-th page of a signature caps it, at most ``1 + 2 × (T - 1)`` trap URLs
were ever queued (the entry, and two from each page counted before the firing). Those are
fetched; nothing after. ``T`` is the page's threshold: ``ceil(0.3 × N)`` with ``og:url``
naming the parent list, ``N`` without ``og:url``.

Predictive pagination (on by default) adds to that bound: the pages predicted ahead of a trap's
numbered links before the cap fired are already queued, and land (SPEC §9.4), at most
``--parallels`` of them per series (:data:`PREDICTED`). The tests of the cap's own bound crawl
with ``predict_pagination=False``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy.crawler import CrawlerRunner

from fixtures.traps import PAGER_PAGES, SECTIONS, TrapSite
from nitpicker.crawl.config import CrawlConfig
from nitpicker.policy.trapcap import OG_URL_ELSEWHERE, TrapCap, TrapSignals
from nitpicker.query.trap_events import list_trap_events
from nitpicker.spiders.site import SiteSpider
from tests.helpers import Archive, crawl_settings, run

if TYPE_CHECKING:
    from collections.abc import Iterator

CAP = 100
SAFETY = 3000
"""``--max-pages`` of the capped crawls: a broken cap fails the test instead of crawling on."""
TRAP_T = TrapCap(CAP).threshold(TrapSignals(trap=(OG_URL_ELSEWHERE,)))  # 30
PLAIN_T = TrapCap(CAP).threshold(TrapSignals())  # 100
PREDICTED = 10
"""Pages predicted ahead of a series: ``--parallels`` (default 10)."""
PREDICTED_WHEN_CAPPED = 2 * PREDICTED
"""Predicted pages a trap may still land once its cap fires: each of the up to ``--parallels``
pages in flight then predicts up to ``--parallels`` past itself, so the last prediction can
reach ``--parallels`` beyond the last page the cap let through, plus the pages in flight."""

# name -> (the path its URLs start with, the parent path of its pages, its entry on /trap/)
TRAPS = {
    "date": ("/trap/date/", "/trap/date", "/trap/date/2024/"),
    "query": ("/trap/query", "/trap", "/trap/query?page=1"),
    "session": ("/trap/session", "/trap", "/trap/session?session=start"),
}
EXCLUDE = {"date": "/trap/date/**", "query": "/trap/query", "session": "/trap/session",
           "plain": "/trap/plain/**"}


def bound(threshold: int) -> int:
    """Most trap pages fetched when the cap fires at ``threshold``."""
    return 1 + 2 * (threshold - 1)


def only(name: str) -> dict[str, Any]:
    """Crawl options isolating one trap under ``/trap/``: the others excluded, the site
    navigation (out of scope there) recorded but not fetched."""
    return {"excludes": tuple(glob for other, glob in EXCLUDE.items() if other != name),
            "fetch_external": False}


@pytest.fixture(scope="module")
def traps() -> Iterator[TrapSite]:
    with TrapSite() as server:
        yield server


async def crawl_with_stats(tmp_path: Path, roots: list[str], **options: Any
                           ) -> tuple[Archive, dict[str, Any]]:
    """``tests.conftest.crawl``, also returning the crawl's Scrapy stats."""
    output = tmp_path / f"trap-{len(list(tmp_path.glob('*.nitpicker')))}.nitpicker"
    options.setdefault("retry", 0)
    options.setdefault("render", False)
    config = options.pop("config", None) or CrawlConfig(roots=tuple(roots), output=str(output),
                                                        **options)
    runner = CrawlerRunner(crawl_settings())
    crawler = runner.create_crawler(SiteSpider)
    await runner.crawl(crawler, config=config)
    return Archive(Path(config.output)), crawler.stats.get_stats()  # type: ignore[union-attr]


def events(archive: Archive) -> list[dict[str, Any]]:
    return [dict(e) for e in list_trap_events(archive.conn)["items"]]


def last_run(archive: Archive) -> sqlite3.Row:
    return archive.rows("SELECT * FROM runs ORDER BY id DESC LIMIT 1")[0]


# -- each trap, alone: stopped with the cap, endless without ---------------------------------


@pytest.mark.parametrize("name", sorted(TRAPS))
@pytest_twisted.ensureDeferred
async def test_cap_stops_the_trap(name: str, traps: TrapSite, tmp_path: Path) -> None:
    prefix, parent, entry = TRAPS[name]
    traps.clear_log()
    archive, stats = await crawl_with_stats(tmp_path, [traps.url("/trap/")], dedupe_cap=CAP,
                                            max_pages=SAFETY, predict_pagination=False,
                                            **only(name))
    fetched = traps.fetched(prefix)
    assert TRAP_T <= len(fetched) <= bound(TRAP_T)
    assert last_run(archive)["status"] == "finished"  # it ended on its own: nothing pending
    [event] = events(archive)
    assert event["parent_path"] == parent and event["count"] == TRAP_T
    assert event["first_url"] == traps.url(entry)
    assert event["last_url"].startswith(traps.url(prefix))
    assert event["run_id"] == last_run(archive)["id"]
    assert stats["nitpicker/trapcap/fired"] == 1
    # The links that were not queued are rows, never requested.
    capped = archive.urls("skip_reason = 'dedupe cap'")
    assert capped and all(url.startswith(traps.url(prefix)) for url in capped)
    assert not {traps.url(target) for target in fetched} & capped
    assert archive.rows("SELECT count(*) AS n FROM pages WHERE skip_reason = 'dedupe cap'"
                        " AND status IS NOT NULL")[0]["n"] == 0
    assert stats["nitpicker/trapcap/capped_links"] >= len(capped)
    if name == "date":
        # Past Number.MAX_SAFE_INTEGER the years print in scientific notation: fetched, then
        # stopped.
        assert any("e+" in target for target in fetched)


@pytest.mark.parametrize("name", sorted(TRAPS))
@pytest_twisted.ensureDeferred
async def test_cap_stops_the_trap_with_predicted_pages(name: str, traps: TrapSite,
                                                      tmp_path: Path) -> None:
    """The cap fires at the same count with predictive pagination; the pages predicted before
    it fired land, and the capped pages predict nothing further."""
    prefix, parent, _ = TRAPS[name]
    traps.clear_log()
    archive, _ = await crawl_with_stats(tmp_path, [traps.url("/trap/")], dedupe_cap=CAP,
                                        max_pages=SAFETY, **only(name))
    assert TRAP_T <= len(traps.fetched(prefix)) <= bound(TRAP_T) + PREDICTED_WHEN_CAPPED
    assert last_run(archive)["status"] == "finished"
    assert [(e["parent_path"], e["count"]) for e in events(archive)] == [(parent, TRAP_T)]


@pytest.mark.parametrize("name", sorted(TRAPS))
@pytest_twisted.ensureDeferred
async def test_without_the_cap_the_trap_keeps_going(name: str, traps: TrapSite,
                                                    tmp_path: Path) -> None:
    prefix = TRAPS[name][0]
    traps.clear_log()
    archive, stats = await crawl_with_stats(tmp_path, [traps.url("/trap/")], max_pages=150,
                                            dedupe_cap=0, **only(name))
    run = last_run(archive)
    assert (run["status"], run["error_code"]) == ("stopped", "page_limit")
    assert len(traps.fetched(prefix)) == 149  # the whole budget but the /trap/ index
    assert len(traps.fetched(prefix)) > 2 * bound(TRAP_T)
    assert events(archive) == [] and "nitpicker/trapcap/fired" not in stats


def test_the_cap_is_on_by_default_through_the_cli(traps: TrapSite, tmp_path: Path) -> None:
    """No --dedupe-cap: the trap is capped at the default threshold (100) and the crawl ends
    on its own; --dedupe-cap 0 turns the cap off (the trap then runs into --max-pages)."""
    traps.clear_log()
    args = ["--silent", "--no-predict-pagination", "--no-fetch-external",
            *(f"--exclude={glob}" for other, glob in EXCLUDE.items() if other != "date")]
    result = run("crawl", traps.url("/trap/"), "-o", "default", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "default.nitpicker")
    assert [(e["parent_path"], e["count"]) for e in events(archive)] == [("/trap/date", TRAP_T)]
    assert (last_run(archive)["status"], len(traps.fetched("/trap/date/"))) == (
        "finished", len(archive.urls("url LIKE ? AND status = 200", traps.url("/trap/date/%"))))
    result = run("crawl", traps.url("/trap/"), "-o", "off", "--dedupe-cap", "0",
                 "--max-pages", "80", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    off = Archive(tmp_path / "off.nitpicker")
    assert events(off) == []
    assert (last_run(off)["status"], last_run(off)["error_code"]) == ("stopped", "page_limit")


# -- the whole site with --dedupe-cap 100 ----------------------------------------------------


@pytest_twisted.async_fixture(scope="module")
async def whole_site(traps: TrapSite, tmp_path_factory: pytest.TempPathFactory
                     ) -> dict[str, Any]:
    traps.clear_log()
    archive, stats = await crawl_with_stats(tmp_path_factory.mktemp("traps"), [traps.url("/")],
                                            dedupe_cap=CAP, max_pages=SAFETY)
    prefixes = ("/trap/date/", "/trap/query", "/trap/session", "/trap/plain/", "/pager/page/",
                "/feed/", "/sections/")
    lists = {"/trap/date/", "/trap/plain/", "/sections/"}  # the list pages linking them
    fetched = {prefix: [t for t in traps.fetched(prefix) if t not in lists] for prefix in prefixes}
    return {"archive": archive, "stats": stats, "fetched": fetched}


def test_whole_site_every_trap_fired_once_with_its_parent_path(whole_site: dict[str, Any],
                                                               traps: TrapSite) -> None:
    archive = whole_site["archive"]
    found = sorted((e["parent_path"], e["first_url"], e["count"]) for e in events(archive))
    assert found == [
        ("/trap", traps.url("/trap/query?page=1"), TRAP_T),
        ("/trap", traps.url("/trap/session?session=start"), TRAP_T),
        ("/trap/date", traps.url("/trap/date/2024/"), TRAP_T),
        ("/trap/plain", traps.url("/trap/plain/2024/"), PLAIN_T),
    ]
    rows = archive.rows("SELECT signature, parent_path, count, first_url, last_url, created_at,"
                        " run_id, threshold, trap_signals, legit_signals FROM trap_events"
                        " ORDER BY id")
    assert events(archive) == [
        {**dict(row), "trap_signals": json.loads(row["trap_signals"]),
         "legit_signals": json.loads(row["legit_signals"])} for row in rows]
    # each firing's score: the og:url traps fired on their trap signal, the plain one on none
    scores = sorted((e["parent_path"], e["threshold"], e["trap_signals"], e["legit_signals"])
                    for e in events(archive))
    assert scores == [("/trap", TRAP_T, [OG_URL_ELSEWHERE], [])] * 2 + [
        ("/trap/date", TRAP_T, [OG_URL_ELSEWHERE], []), ("/trap/plain", PLAIN_T, [], [])]
    assert whole_site["stats"]["nitpicker/trapcap/fired"] == 4
    assert last_run(archive)["status"] == "finished"


def test_whole_site_traps_are_bounded(whole_site: dict[str, Any]) -> None:
    fetched = whole_site["fetched"]
    for prefix in ("/trap/date/", "/trap/query", "/trap/session"):
        assert TRAP_T <= len(fetched[prefix]) <= bound(TRAP_T) + PREDICTED_WHEN_CAPPED, prefix
    # No og:url: the cap fires at N, later than the og:url traps (at 30 % of N) — even though
    # each trap page carries 61 navigation links: the age window counts discovered links.
    assert PLAIN_T <= len(fetched["/trap/plain/"]) <= bound(PLAIN_T) + PREDICTED_WHEN_CAPPED
    assert len(fetched["/trap/plain/"]) > bound(TRAP_T) + PREDICTED_WHEN_CAPPED


def test_whole_site_legit_look_alikes_are_all_crawled(whole_site: dict[str, Any],
                                                      traps: TrapSite) -> None:
    archive = whole_site["archive"]
    fetched = whole_site["fetched"]
    pager = {traps.url(f"/pager/page/{n}") for n in range(1, PAGER_PAGES + 1)}
    feed = {traps.url(f"/feed/?page={n}") for n in range(1, PAGER_PAGES + 1)}
    sections = {traps.url(f"/sections/s{i}/item") for i in range(1, SECTIONS + 1)}
    crawled = archive.urls("status = 200 AND is_target = 1")
    assert pager <= crawled
    # Each page fetched; past the last, at most PREDICTED predicted pages (404, not recorded).
    beyond = {t for t in fetched["/pager/page/"] if int(t.rsplit("/", 1)[1]) > PAGER_PAGES}
    assert len(set(fetched["/pager/page/"])) == PAGER_PAGES + len(beyond)
    assert len(beyond) <= PREDICTED
    marks = ",".join("?" * len(beyond))
    assert not archive.urls(f"url IN ({marks})", *(traps.url(t) for t in beyond))
    # One title and og:url = the list on every feed page (a trap signal), but rel=prev/next:
    # the threshold is 5 × 100, so all 300 pages are crawled.
    assert feed <= crawled
    assert sections <= crawled and len(fetched["/sections/"]) == SECTIONS
    assert not archive.urls("skip_reason = 'dedupe cap' AND url NOT LIKE ?",
                            traps.url("/trap/%"))


def test_whole_site_stats(whole_site: dict[str, Any]) -> None:
    stats = whole_site["stats"]
    assert stats["nitpicker/trapcap/sticky"] == 4
    assert stats["nitpicker/trapcap/capped_links"] > 0
    # Pager pages, sections and the feed are all counted at once (nothing evicted them yet).
    assert stats["nitpicker/trapcap/entries"] >= PAGER_PAGES


# -- smaller caps ----------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_small_cap_trap_and_legit_pager(traps: TrapSite, tmp_path: Path) -> None:
    cap = 20
    traps.clear_log()
    archive, _ = await crawl_with_stats(tmp_path, [traps.url("/trap/")], dedupe_cap=cap,
                                        max_pages=SAFETY, **only("session"))
    trap_t = TrapCap(cap).threshold(TrapSignals(trap=(OG_URL_ELSEWHERE,)))
    assert trap_t == 6
    assert trap_t <= len(traps.fetched("/trap/session")) <= bound(trap_t)
    assert [e["count"] for e in events(archive)] == [trap_t]
    # The feed has the trap signal and rel=prev/next: capped at 5 × 20, not at 6.
    traps.clear_log()
    archive, _ = await crawl_with_stats(tmp_path, [traps.url("/feed/")], dedupe_cap=cap,
                                        max_pages=SAFETY)
    [event] = events(archive)
    assert event["count"] == 5 * cap and event["parent_path"] == "/"
    assert 5 * cap <= len(traps.fetched("/feed/")) < PAGER_PAGES


@pytest_twisted.ensureDeferred
async def test_resume_keeps_a_capped_trap_capped(traps: TrapSite, tmp_path: Path) -> None:
    traps.clear_log()
    first, _ = await crawl_with_stats(tmp_path, [traps.url("/trap/")], dedupe_cap=CAP,
                                      max_pages=40, **only("session"))
    assert last_run(first)["error_code"] == "page_limit"
    assert len(events(first)) == 1  # fired at the 30th trap page, 9 more fetched, 20 pending
    stored = first.rows("SELECT config FROM info")[0]["config"]
    first.conn.close()
    config = CrawlConfig.from_json(stored, resume=True, max_pages=SAFETY)
    resumed, stats = await crawl_with_stats(tmp_path, [], config=config)
    assert last_run(resumed)["status"] == "finished"
    # Without the capped signature restored, the 20 pending pages would start a new count and
    # queue 40 more trap URLs, and the trap would fire a second time.
    assert len(events(resumed)) == 1 and "nitpicker/trapcap/fired" not in stats
    assert len(traps.fetched("/trap/session")) <= bound(TRAP_T)


def test_query_trap_events_and_clusters_on_the_whole_site(whole_site: dict[str, Any]) -> None:
    import json
    import subprocess
    import sys

    path = str(whole_site["archive"].path)
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    import os

    def query(*args: str) -> Any:
        done = subprocess.run([sys.executable, "-m", "nitpicker.cli", "query", path, *args],
                              capture_output=True, text=True, env={**os.environ, **env},
                              timeout=60, check=True)
        return json.loads(done.stdout)

    events_page = query("trap-events")
    assert events_page["total"] == 4
    assert {e["parent_path"] for e in events_page["items"]} == {"/trap", "/trap/date", "/trap/plain"}
    clusters = query("duplicate-clusters", "--min-count", "10")
    parents = {c["parent_path"] for c in clusters["items"]}
    assert {"/trap/date", "/trap/plain"} <= parents
    # clusters whose og:url names another page come first
    assert clusters["items"][0]["og_url_mismatch"] is True
