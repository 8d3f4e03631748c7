"""The end-of-run retry pass (``nitpicker/crawl/auto_retry.py``): what counts as a failure that
passes, its settings, and through the command line against a site whose pages fail once, or
always."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from nitpicker.crawl.auto_retry import AutoRetry, AutoRetrySettings
from nitpicker.items import PageItem
from tests.helpers import archive_rows as rows
from tests.helpers import run


class FlakySite(ThreadingHTTPServer):
    """``/`` links to ``/once`` (a 503 the first time, then a page linking to ``/found``),
    ``/reset-once`` (the connection reset the first time, then a page), ``/always`` (a 503
    every time) and ``/slow-1`` … ``/slow-4`` (a 503 the first time, then a page that takes
    0.3 s: :attr:`most_at_once` is how many of those answers were in flight together)."""

    daemon_threads = True

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_at_once = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site.lock:
                    site.hits[self.path] += 1
                    first = site.hits[self.path] == 1
                status, body = site.answer(self.path, first=first)
                if status == 0:
                    self.close_connection = True
                    return
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def answer(self, path: str, *, first: bool) -> tuple[int, str]:
        def page(title: str, *links: str) -> str:
            anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
            return f"<html><head><title>{title}</title></head><body>{anchors}</body></html>"

        if path == "/":
            return 200, page("Home", "/once", "/reset-once", "/always",
                             *(f"/slow-{n}" for n in range(1, 5)))
        if path == "/once":
            return (503, page("Busy")) if first else (200, page("Once", "/found"))
        if path == "/reset-once":
            return (0, "") if first else (200, page("Reset once"))
        if path == "/always":
            return 503, page("Busy")
        if path == "/found":
            return 200, page("Found")
        if path.startswith("/slow-"):
            if first:
                return 503, page("Busy")
            with self.lock:
                self.in_flight += 1
                self.most_at_once = max(self.most_at_once, self.in_flight)
            time.sleep(0.3)
            with self.lock:
                self.in_flight -= 1
            return 200, page(path)
        return 404, page("Not found")

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture
def flaky() -> Iterator[FlakySite]:
    site = FlakySite()
    yield site
    site.stop()


def crawl(site: FlakySite, directory: Path, concurrency: int) -> Any:
    return run("crawl", site.url + "/", "-o", "flaky", "--retry", "0", "--no-sitemap",
               "--ignore-robots", cwd=directory,
               env={"NITPICKER_AUTO_RETRY_CONCURRENCY": str(concurrency),
                    "NITPICKER_AUTO_RETRY_PAUSE": "0.2"})


@pytest.mark.integration
def test_the_retry_pass_recovers_what_failed_once_and_gives_up_on_what_always_fails(
        flaky: FlakySite, tmp_path: Path) -> None:
    result = crawl(flaky, tmp_path, concurrency=1)
    assert result.returncode == 0, result.stderr  # the reset recovered: no fetch error left
    archive = tmp_path / "flaky.nitpicker"
    statuses = dict(rows(archive, "SELECT url, status FROM pages"))
    url = flaky.url
    assert statuses[f"{url}/once"] == 200
    assert statuses[f"{url}/reset-once"] == 200
    assert statuses[f"{url}/always"] == 503  # fetched once more, then left as it is
    assert statuses[f"{url}/found"] == 200  # the link of a recovered page, crawled
    assert all(statuses[f"{url}/slow-{n}"] == 200 for n in range(1, 5))
    assert {path: flaky.hits[path] for path in ("/", "/once", "/reset-once", "/always",
                                                 "/found")} == {
        "/": 1, "/once": 2, "/reset-once": 2, "/always": 2, "/found": 1}
    assert rows(archive, "SELECT count(*) FROM pages WHERE url = ?", f"{url}/once") == [(1,)]
    # the pass ran with one request at a time, whatever --parallels (10)
    assert flaky.most_at_once == 1
    assert rows(archive, "SELECT kind, status, pages_done, errors, auto_retried, auto_recovered"
                         " FROM runs") == [("crawl", "finished", 9, 0, 7, 6)]
    assert "retry pass: 7 URL(s) that failed for a passing reason fetched again, 6 recovered" \
        in result.stderr
    runs = run("query", "flaky.nitpicker", "runs", cwd=tmp_path)
    (listed,) = json.loads(runs.stdout)["items"]
    assert (listed["auto_retried"], listed["auto_recovered"]) == (7, 6)


@pytest.mark.integration
def test_no_retry_pass_when_turned_off(flaky: FlakySite, tmp_path: Path) -> None:
    result = crawl(flaky, tmp_path, concurrency=0)
    assert result.returncode == 1  # the reset stays a fetch error
    archive = tmp_path / "flaky.nitpicker"
    statuses = dict(rows(archive, "SELECT url, status FROM pages"))
    assert statuses[f"{flaky.url}/once"] == 503
    assert statuses[f"{flaky.url}/reset-once"] == -1
    assert f"{flaky.url}/found" not in statuses
    assert flaky.hits["/once"] == flaky.hits["/always"] == 1
    assert rows(archive, "SELECT auto_retried, auto_recovered FROM runs") == [(None, None)]
    assert "retry pass" not in result.stderr


def item(status: int | None = 200, error: str | None = None) -> PageItem:
    return PageItem(url="https://example.com/", frontier_id=1, depth=0, is_external=False, is_target=True,
                    status=status, error=error)


@pytest.mark.parametrize(("status", "error", "transient"), [
    (503, None, True),
    (429, None, True),
    (500, None, False),
    (502, None, False),
    (404, None, False),
    (200, None, False),
    (-1, "Timeout: Getting https://example.com/ took longer than 30.0 seconds.", True),
    (-1, "Connection reset: Connection was closed cleanly.", True),
    (-1, "browser: Timeout: page.goto: Timeout 30000ms exceeded.", True),
    (-1, "Connection refused: Connection was refused by other side", False),
    (-1, "DNS lookup failed: no results for hostname lookup: nowhere.invalid.", False),
    (-1, "TLS error: certificate verify failed", False),
    (-1, "Too large: 40000000 bytes, more than the download max size", False),
])
def test_what_counts_as_a_failure_that_passes(status: int, error: str | None,
                                              transient: bool) -> None:
    crawler = get_crawler(settings_dict={"NITPICKER_AUTO_RETRY_CONCURRENCY": 2,
                                         "NITPICKER_AUTO_RETRY_PAUSE": 1.0})
    extension = AutoRetry(crawler, None, AutoRetrySettings(), crawler.stats)  # type: ignore[arg-type]
    assert extension.is_transient(item(status, error)) is transient


@pytest.mark.parametrize(("values", "message"), [
    ({"NITPICKER_AUTO_RETRY_CONCURRENCY": -1},
     "NITPICKER_AUTO_RETRY_CONCURRENCY must not be negative, got -1"),
    ({"NITPICKER_AUTO_RETRY_PAUSE": -1.0},
     "NITPICKER_AUTO_RETRY_PAUSE must be 0 to 3600 seconds, got -1.0"),
    ({"NITPICKER_AUTO_RETRY_PAUSE": 7200},
     "NITPICKER_AUTO_RETRY_PAUSE must be 0 to 3600 seconds, got 7200.0"),
])
def test_bad_settings_name_the_setting(values: dict[str, Any], message: str) -> None:
    settings = Settings({"NITPICKER_AUTO_RETRY_CONCURRENCY": 2, "NITPICKER_AUTO_RETRY_PAUSE": 10})
    settings.update(values)
    with pytest.raises(ValueError, match=message):
        AutoRetrySettings.from_settings(settings)


def test_a_concurrency_of_0_turns_it_off() -> None:
    crawler = get_crawler(settings_dict={"NITPICKER_AUTO_RETRY_CONCURRENCY": 0,
                                         "NITPICKER_AUTO_RETRY_PAUSE": 10})
    with pytest.raises(NotConfigured, match="NITPICKER_AUTO_RETRY_CONCURRENCY is 0"):
        AutoRetry.from_crawler(crawler)
