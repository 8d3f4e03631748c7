"""Metadata URLs made absolute (nitpicker/policy/extract/resolve.py): the table of real cases."""

from __future__ import annotations

import pytest

from nitpicker.policy.extract import (
    PageMeta,
    absolute_url,
    document_base,
    extract,
    resolve_meta_urls,
)

PAGE = "https://example.com/blog/post/"


@pytest.mark.parametrize(
    ("base", "value", "expected"),
    [
        pytest.param(PAGE, "canonical", "https://example.com/blog/post/canonical", id="relative"),
        pytest.param(PAGE, "../", "https://example.com/blog/", id="dot-dot"),
        pytest.param(PAGE, "/en/post/", "https://example.com/en/post/", id="root-relative"),
        pytest.param(PAGE, "//cdn.example.net/og.png", "https://cdn.example.net/og.png",
                     id="protocol-relative"),
        pytest.param(PAGE, "https://Example.COM:443/a", "https://example.com/a", id="absolute"),
        pytest.param(PAGE, "?page=2", "https://example.com/blog/post/?page=2", id="query-only"),
        pytest.param(PAGE, "/a?b=2&a=1#top", "https://example.com/a?a=1&b=2",
                     id="archive-form"),  # the form of pages.url: comparable with it
        pytest.param(PAGE, "mailto:news@example.com", "mailto:news@example.com", id="not-http"),
        pytest.param("http://example.com/a", "HTTP://EXAMPLE.com/b", "http://example.com/b",
                     id="upper-case-scheme"),
    ],
)
def test_absolute_url(base: str, value: str, expected: str) -> None:
    assert absolute_url(base, value) == expected


@pytest.mark.parametrize(
    ("page", "base_href", "expected"),
    [
        ("https://example.com/a/b", "", "https://example.com/a/b"),
        ("https://example.com/a/b", "/static/", "https://example.com/static/"),
        ("https://example.com/a/b", "sub/", "https://example.com/a/sub/"),
        ("https://example.com/a/b", "https://cdn.example.com/x/", "https://cdn.example.com/x/"),
    ],
)
def test_document_base(page: str, base_href: str, expected: str) -> None:
    assert document_base(page, base_href) == expected


def test_resolve_meta_urls_resolves_the_url_fields_only() -> None:
    found = extract(
        '<head><base href="/deeper/"><link rel="canonical" href="page">'
        '<link rel="alternate" href="../en/"><meta property="og:url" content="?lang=en">'
        '<meta property="og:image" content="og.png"><meta property="og:title" content="t/x">'
        '<link rel="next" href="2"></head>'
    )
    resolve_meta_urls(found.meta, document_base("http://h.test/a/b", found.base_href))
    meta = found.meta
    assert (meta.canonical, meta.alternate, meta.og_url, meta.og_image) == (
        "http://h.test/deeper/page", "http://h.test/en/", "http://h.test/deeper/?lang=en",
        "http://h.test/deeper/og.png")
    assert (meta.og_title, meta.next) == ("t/x", "2")  # not URLs the archive stores


def test_absent_values_stay_empty() -> None:
    meta = PageMeta()
    resolve_meta_urls(meta, PAGE)
    assert (meta.canonical, meta.alternate, meta.og_url, meta.og_image) == ("", "", "", "")
