from __future__ import annotations
import pytest_twisted
from scrapy.core.downloader import Downloader
from fixtures.throttle_site import Route, ThrottleSite
from tests.conftest import crawl

LOG = []
orig = Downloader._process_queue
def patched(self, slot):
    LOG.append((slot.concurrency, len(slot.transferring), len(slot.queue)))
    return orig(self, slot)

@pytest_twisted.ensureDeferred
async def test_probe(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(Downloader, "_process_queue", patched)
    routes = {f"/p/{i}": Route(pause=0.2) for i in range(16)}
    with ThrottleSite(routes) as site:
        await crawl(tmp_path, [site.url("/")], parallels=8, ignore_robots=True, sitemap=False,
                    settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 2})
        print([h.in_flight for h in site.hits])
        print(LOG)
