"""Which URLs a sitemap may list (``nitpicker/policy/sitemap_scope.py``)."""

from __future__ import annotations

import pytest

from nitpicker.policy.sitemap_scope import outside_sitemap_scope

OTHER = "not on its sitemap's scheme, host and port"


@pytest.mark.parametrize(("sitemap", "found_in", "url", "problem"), [
    ("https://a.test/sitemap.xml", None, "https://a.test/", ""),
    ("https://a.test/sitemap.xml", None, "https://a.test/x/y", ""),
    ("https://a.test/blog/sitemap.xml", None, "https://a.test/blog/post", ""),
    ("https://a.test/blog/sitemap.xml", None, "https://a.test/shop/",
     "outside its sitemap's directory (/blog/)"),
    ("https://a.test/sitemap.xml", None, "http://a.test/", OTHER),
    ("https://a.test/sitemap.xml", None, "https://www.a.test/", OTHER),
    ("https://a.test/sitemap.xml", None, "https://a.test:8443/", OTHER),
    # cross-submission: a robots.txt names a sitemap elsewhere, which may list its site's URLs
    ("https://cdn.test/maps/a.xml", "https://a.test/robots.txt", "https://a.test/page", ""),
    ("https://cdn.test/maps/a.xml", "https://a.test/robots.txt", "https://b.test/page", OTHER),
    # an index names a sitemap: the sitemap's own place rules
    ("https://a.test/blog/s.xml", "https://a.test/sitemap.xml", "https://a.test/shop/",
     "outside its sitemap's directory (/blog/)"),
])
def test_sitemap_scope(sitemap: str, found_in: str | None, url: str, problem: str) -> None:
    assert outside_sitemap_scope(sitemap, found_in, url) == problem
