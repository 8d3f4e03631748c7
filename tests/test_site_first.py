"""The site first (issue 27, item 1): in-scope pages are fetched before out-of-scope checks,
whatever the checks cost; the progress line counts the two apart.

Real crawls of :class:`fixtures.graph_site.GraphSite` with a :class:`~fixtures.graph_site.HeldHost`
as the external host: it answers nothing until the test releases it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from fixtures.graph_site import GraphSite, HeldHost
from nitpicker.cli.progress import lanes
from nitpicker.crawl.session import CrawlCounters
from tests.helpers import crawl, run

if TYPE_CHECKING:
    from pathlib import Path

CHAIN = 4
"""In-scope pages one below the other: each is found only when the one above is fetched."""
CHECKS = 12
"""Links of the root to the held external host: three times the crawl's concurrency."""


def chain_site(held: HeldHost) -> GraphSite:
    """``/`` links ``/p1`` and the external URLs; ``/p1`` → ``/p2`` → … → ``/p{CHAIN}``."""
    pages: dict[str, list[str]] = {"/": ["/p1", *(held.url(f"/x{n}") for n in range(CHECKS))]}
    for n in range(1, CHAIN + 1):
        pages[f"/p{n}"] = [f"/p{n + 1}"] if n < CHAIN else []
    return GraphSite(pages)


def release_when_recorded(archive: Path, url: str, held: HeldHost) -> threading.Thread:
    """A thread that releases ``held`` once ``url`` is recorded in ``archive`` (committed)."""

    def watch() -> None:
        deadline = time.monotonic() + held.hold
        while time.monotonic() < deadline and not held.released.is_set():
            try:
                conn = sqlite3.connect(f"{archive.as_uri()}?mode=ro", uri=True, timeout=1)
                try:
                    row = conn.execute("SELECT status FROM pages WHERE url = ?", (url,)).fetchone()
                finally:
                    conn.close()
            except sqlite3.Error:
                row = None
            if row is not None and row[0] is not None:
                break
            time.sleep(0.05)
        held.release()

    thread = threading.Thread(target=watch, name="release-when-recorded", daemon=True)
    thread.start()
    return thread


@pytest.mark.integration
@pytest_twisted.ensureDeferred
async def test_the_last_site_page_is_recorded_before_a_slow_host_s_checks(tmp_path: Path) -> None:
    """The external host answers only once the site's deepest page is recorded. Leased by
    depth alone, ``/p2`` would wait behind the twelve checks at depth 1 until they timed out
    (``DOWNLOAD_TIMEOUT``); site first, the chain is crawled while the checks wait, and every
    check is answered afterwards."""
    with HeldHost(hold=60) as held, chain_site(held) as site:
        last = site.url(f"/p{CHAIN}")
        watcher = release_when_recorded(tmp_path / "crawl-0.nitpicker", last, held)
        # a timeout long enough for a loaded machine: the held host's robots.txt waits for the
        # release too, and one that times out gives the host up (its checks never answered)
        archive = await crawl(tmp_path, [site.url("/")], parallels=4,
                              settings={"DOWNLOAD_TIMEOUT": 30})
        watcher.join(timeout=5)
    checks = archive.rows("SELECT url, status, fetched_at FROM pages WHERE is_external = 1")
    assert len(checks) == CHECKS
    assert {row["status"] for row in checks} == {200}, "no check timed out"
    site_pages = archive.rows("SELECT url, fetched_at FROM pages WHERE is_external = 0")
    assert len(site_pages) == CHAIN + 1
    last_site = max(row["fetched_at"] for row in site_pages)
    assert last_site <= min(row["fetched_at"] for row in checks)


@pytest.mark.integration
def test_the_progress_line_counts_the_site_and_the_external_checks_apart(tmp_path: Path) -> None:
    with HeldHost(hold=0) as held, chain_site(held) as site:
        held.release()
        result = run("crawl", site.url("/"), "-o", str(tmp_path / "a.nitpicker"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"site {CHAIN + 1}/{CHAIN + 1} · external {CHECKS}/{CHECKS}" in result.stderr


def test_lanes_shows_each_lane_done_of_known() -> None:
    counters = CrawlCounters(done=10, external=3)
    assert lanes(counters, 5, 40) == "site 7/12 · external 3/43"
