"""BodyGuard (nitpicker/middlewares/body.py): which downloads stop after their headers or early,
on a real crawl session (``tests/components.py``) and real requests and headers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Headers
from scrapy.utils.test import get_crawler

from nitpicker.crawl.meta import META_MODE, META_PREFLIGHT
from nitpicker.items import FollowMode
from nitpicker.middlewares.body import BodyGuard
from tests.components import unit_crawler

if TYPE_CHECKING:
    from pathlib import Path

HTML = Headers({"Content-Type": "text/html; charset=utf-8"})
PDF = Headers({"Content-Type": "application/pdf"})


def guard(tmp_path: Path, **settings: Any) -> BodyGuard:
    return BodyGuard.from_crawler(unit_crawler(tmp_path, ("http://site.test/docs/",), settings))


def request(url: str, mode: FollowMode = FollowMode.FULL, **meta: Any) -> Request:
    return Request(url, meta={META_MODE: mode, **meta})


def stops(call: Any, *args: Any) -> bool:
    try:
        call(*args)
    except StopDownload as exc:
        assert not exc.fail  # the response is kept, only its body is cut
        return True
    return False


@pytest.mark.parametrize(
    ("headers", "req", "stopped"),
    [
        (PDF, request("http://site.test/docs/a.pdf"), True),  # not HTML: headers only
        (HTML, request("http://site.test/docs/a"), False),
        (Headers({}), request("http://site.test/docs/a"), False),  # unknown type: read it
        (PDF, Request("http://site.test/robots.txt"), False),  # not a crawl request
        # a preflight in scope: the browser fetches the page next
        (HTML, request("http://site.test/docs/a", **{META_PREFLIGHT: True}), True),
        # a preflight out of scope: recorded from HTTP, read on
        (HTML, request("http://site.test/blog/", **{META_PREFLIGHT: True}), False),
    ],
)
def test_headers_received(tmp_path: Path, headers: Headers, req: Request, stopped: bool) -> None:
    body_guard = guard(tmp_path)
    assert stops(body_guard.headers_received, headers, 0, req) is stopped
    assert body_guard.stats.get_value("nitpicker/body/headers_only") == (1 if stopped else None)


@pytest.mark.parametrize(
    ("req", "cut"),
    [
        (request("https://elsewhere.test/", FollowMode.METADATA), True),
        (request("http://site.test/blog/", **{META_PREFLIGHT: True}), True),  # out of scope
        (request("http://site.test/docs/a"), False),  # a full page is read whole
    ],
)
def test_metadata_only_downloads_stop_after_the_metadata_bytes(
    tmp_path: Path, req: Request, cut: bool
) -> None:
    body_guard = guard(tmp_path, NITPICKER_METADATA_BYTES=1000)
    assert body_guard.metadata_bytes == 1000
    assert not stops(body_guard.bytes_received, b"x" * 600, req)
    assert stops(body_guard.bytes_received, b"x" * 600, req) is cut
    assert body_guard.stats.get_value("nitpicker/body/truncated") == (1 if cut else None)


def test_the_default_metadata_bytes(tmp_path: Path) -> None:
    assert guard(tmp_path).metadata_bytes == 16384


def test_not_configured_without_a_crawl_session() -> None:
    with pytest.raises(NotConfigured):
        BodyGuard.from_crawler(get_crawler())
