"""RootRedirectMiddleware (nitpicker/middlewares/root_redirect.py): a root that redirects out of
scope brings its destination in, on a real crawl session (``tests/components.py``)."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse

from nitpicker.crawl.meta import META_DEPTH, META_MODE
from nitpicker.items import FollowMode
from nitpicker.middlewares.root_redirect import RootRedirectMiddleware
from tests.components import ROOT, open_session, unit_crawler

if TYPE_CHECKING:
    from pathlib import Path


def redirected(final: str, *, depth: int = 0, mode: FollowMode = FollowMode.FULL,
               **meta: Any) -> tuple[Request, HtmlResponse]:
    request = Request(final, meta={META_DEPTH: depth, META_MODE: mode,
                                   "redirect_urls": [ROOT], **meta})
    return request, HtmlResponse(final, body=b"<html></html>", request=request)


def test_a_root_redirecting_elsewhere_adds_its_destination(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path)
    middleware = RootRedirectMiddleware.from_crawler(crawler)
    session = open_session(crawler)
    request, response = redirected("https://www.site.test/home")
    assert middleware.process_response(request, response) is response
    assert session.in_scope("https://www.site.test/home")
    assert middleware.stats.get_value("nitpicker/root_redirect/added") == 1
    session.archive.commit()
    conn = sqlite3.connect(session.config.output)
    try:
        (roots,), = conn.execute("SELECT roots FROM info").fetchall()
    finally:
        conn.close()
    assert json.loads(roots) == [ROOT, "https://www.site.test/home"]


@pytest.mark.parametrize(
    ("final", "extra"),
    [
        ("https://site.test/", {}),  # http → https of the same root: already in scope
        ("http://site.test/welcome", {}),  # in scope
        ("https://www.site.test/", {"depth": 1}),  # not a root
        ("https://www.site.test/", {"mode": FollowMode.METADATA}),  # not a full crawl
        ("https://www.site.test/", {"playwright": True}),  # the browser's request
    ],
)
def test_other_redirects_change_no_scope(tmp_path: Path, final: str, extra: dict[str, Any]) -> None:
    crawler = unit_crawler(tmp_path)
    middleware = RootRedirectMiddleware.from_crawler(crawler)
    session = open_session(crawler)
    version = session.scope_version
    request, response = redirected(final, **extra)
    assert middleware.process_response(request, response) is response
    assert session.scope_version == version
    assert middleware.stats.get_value("nitpicker/root_redirect/added") is None


def test_a_root_that_did_not_redirect(tmp_path: Path) -> None:
    crawler = unit_crawler(tmp_path)
    middleware = RootRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.site.test/", meta={META_DEPTH: 0, META_MODE: FollowMode.FULL})
    response = HtmlResponse(request.url, body=b"", request=request)
    middleware.process_response(request, response)
    assert not middleware.session.in_scope("https://www.site.test/")
