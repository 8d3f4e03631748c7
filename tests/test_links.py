"""LinkResolver: the string-joined fast path gives exactly what ``urljoin`` + ``parse_url`` give."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

from nitpicker.policy.links import LinkResolver
from nitpicker.policy.urls import parse_url
from tests.helpers import BASES, HREFS

MORE_HREFS = [
    *HREFS,
    ".",
    "..",
    "./",
    "../",
    "./../x",
    "../a/./b",
    ".hidden",
    "..foo/bar",
    "../../../../../../x/../y",
    "a//b/../c",
    "a:b/c",  # a scheme-like colon
    "foo/bar:baz",
    "page\\other",
    "tab\there",
    "café/ü.html",
    "with space.html",
    "12.html#section",
    "https://example.com/dir/../x",
]


def _reference(base: str, href: str) -> str | None:
    if not href or href.startswith(("#", "javascript:", "data:")):
        return None
    parsed = parse_url(urljoin(base, href))
    return parsed.url if parsed is not None else None


@pytest.mark.parametrize("href", MORE_HREFS)
@pytest.mark.parametrize("base", BASES)
def test_resolve_equals_urljoin_then_parse(base: str, href: str) -> None:
    resolved = LinkResolver().resolve(base, href)
    assert (resolved.url if resolved is not None else None) == _reference(base, href)


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://example.com/dir/page?x=1&y=2", "http://example.com/dir/page"),
        ("http://example.com?x=1", "http://example.com/"),
    ],
)
def test_an_empty_query_replaces_the_query_as_in_a_browser(base: str, expected: str) -> None:
    """``href="?"`` is the page without its query (``urljoin`` keeps the base's query)."""
    resolved = LinkResolver().resolve(base, "?")
    assert resolved is not None and resolved.url == expected


def test_one_resolver_moves_between_bases() -> None:
    """The base's parts are cached: a new base must not reuse the last one's directory."""
    resolver = LinkResolver()
    for base in [*BASES, *reversed(BASES)]:
        for href in ("sibling.html", "?q=2", "/root", "../up"):
            resolved = resolver.resolve(base, href)
            assert (resolved.url if resolved else None) == _reference(base, href), (base, href)


@pytest.mark.parametrize("href", ["HTTP://[x/", "Https://a]b/page", "//[x/", "x:[y"])
def test_href_urljoin_refuses_is_no_link(href: str) -> None:
    """An unclosed IPv6 bracket makes ``urljoin`` raise: not a link, and the page is read."""
    resolved = LinkResolver().resolve("http://example.com/dir/page", href)
    assert resolved is None or not resolved.is_http


@pytest.mark.parametrize(
    ("base", "href", "expected"),
    [
        ("http://example.com/brackets/", "page[1].html", "http://example.com/brackets/page%5B1%5D.html"),
        ("http://example.com/brackets/", "page%5B1%5D.html",
         "http://example.com/brackets/page%5B1%5D.html"),
        ("http://example.com/b%5B1%5D/x", "list?filter[tag]=x",
         "http://example.com/b%5B1%5D/list?filter%5Btag%5D=x"),
        ("http://example.com/b%5B1%5D/x", "../[root]/child[2].html",
         "http://example.com/%5Broot%5D/child%5B2%5D.html"),
        ("http://example.com/a/", "?q[]=1", "http://example.com/a/?q%5B%5D=1"),
    ],
)
def test_raw_and_encoded_hrefs_resolve_to_one_key(base: str, href: str, expected: str) -> None:
    resolved = LinkResolver().resolve(base, href)
    assert resolved is not None and resolved.url == expected
