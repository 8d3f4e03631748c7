"""nitpicker.policy.scope: isLowerLayer and the deepest-matching scope entry (SPEC §3.2)."""

from __future__ import annotations

import pytest

from nitpicker.policy.scope import Scope, ScopeEntry, is_lower_layer
from nitpicker.policy.urls import ParsedUrl, parse_url


def _parse(url: str) -> ParsedUrl:
    parsed = parse_url(url)
    assert parsed is not None, url
    return parsed


def _entry(url: str) -> ScopeEntry:
    return ScopeEntry.from_url(_parse(url))


# (target, base, is lower layer)
LOWER_LAYER = [
    # SPEC §3.2 examples
    ("http://example.com/meta/full", "http://example.com/meta/", True),
    ("http://example.com/meta/robots-noindex", "http://example.com/meta/full", False),
    ("http://example.com/meta/robots-noindex", "http://example.com/meta/", True),
    # the site root covers everything on its host
    ("http://example.com/", "http://example.com/", True),
    ("http://example.com", "http://example.com/", True),
    ("http://example.com/a/b/c.html", "http://example.com/", True),
    ("http://example.com/?q=1", "http://example.com/", True),
    # port must match; an explicit default port is the same as none
    ("http://example.com:8080/a", "http://example.com/", False),
    ("http://example.com/a", "http://example.com:8080/", False),
    ("http://example.com:8080/a", "http://example.com:8080/", True),
    ("http://example.com:80/a", "http://example.com/", True),
    ("https://example.com:443/a", "https://example.com/", True),
    ("http://example.com/a", "http://example.com:80/", True),
    # other host (a subdomain is another host)
    ("http://other.example/a", "http://example.com/", False),
    ("http://www.example.com/a", "http://example.com/", False),
    # http and https are the same scope
    ("https://example.com/blog/post", "http://example.com/blog/", True),
    ("http://example.com/blog/post", "https://example.com/blog/", True),
    ("https://example.com/page", "http://example.com/page", True),
    ("https://example.com/page/sub", "http://example.com/page", True),
    # a directory root: everything at or under it, including its query variants (correction)
    ("http://example.com/blog/", "http://example.com/blog/", True),
    ("http://example.com/blog/?page=2", "http://example.com/blog/", True),
    ("http://example.com/blog/a/b/", "http://example.com/blog/", True),
    ("http://example.com/blog//post", "http://example.com/blog/", True),
    # ... but not the path without its slash, nor a sibling with the same prefix
    ("http://example.com/blog", "http://example.com/blog/", False),
    ("http://example.com/blogger/", "http://example.com/blog/", False),
    ("http://example.com/about", "http://example.com/blog/", False),
    ("http://example.com/", "http://example.com/blog/", False),
    # a file root: itself and what is below it as a path, not its query variants
    ("http://example.com/blog/post", "http://example.com/blog/post", True),
    ("http://example.com/blog/post/", "http://example.com/blog/post", True),
    ("http://example.com/blog/post/comments", "http://example.com/blog/post", True),
    ("http://example.com/blog/post?x=1", "http://example.com/blog/post", False),
    ("http://example.com/blog/post", "http://example.com/blog/post?x=1", False),
    ("http://example.com/blog/post?x=2", "http://example.com/blog/post?x=1", False),
    ("http://example.com/blog/other", "http://example.com/blog/post", False),
    # deeper roots do not cover shallower URLs
    ("http://example.com/a/b/", "http://example.com/a/b/c/", False),
]


@pytest.mark.parametrize(("target", "base", "expected"), LOWER_LAYER)
def test_is_lower_layer(target: str, base: str, expected: bool) -> None:
    assert is_lower_layer(_parse(target), _entry(base)) is expected


TWO_ROOTS = ["http://example.com/", "http://example.com/blog/"]


@pytest.mark.parametrize(
    ("url", "entry"),
    [
        # the deepest entry wins
        ("http://example.com/blog/post", "http://example.com/blog/"),
        ("http://example.com/blog/", "http://example.com/blog/"),
        ("http://example.com/blog/?page=2", "http://example.com/blog/"),
        ("https://example.com/blog/post", "http://example.com/blog/"),
        # anything else on the host falls to the root
        ("http://example.com/blog", "http://example.com/"),
        ("http://example.com/about", "http://example.com/"),
        ("http://example.com/", "http://example.com/"),
        ("http://example.com:80/about", "http://example.com/"),
        # out of scope
        ("http://example.com:8080/blog/post", None),
        ("http://other.example/blog/post", None),
        ("mailto:someone@example.com", None),
    ],
)
@pytest.mark.parametrize("order", [1, -1], ids=["root-first", "blog-first"])
def test_scope_find_deepest_entry(url: str, entry: str | None, order: int) -> None:
    scope = Scope(TWO_ROOTS[::order])
    found = scope.find(_parse(url))
    assert (found.url if found else None) == entry
    assert (_parse(url) in scope) is (entry is not None)


def test_scope_sub_directory_only() -> None:
    scope = Scope(["http://example.com/docs/"])
    assert _parse("http://example.com/docs/guide") in scope
    assert _parse("https://example.com/docs/guide") in scope
    assert _parse("http://example.com/about") not in scope
    assert _parse("http://example.com/docs") not in scope


def test_scope_entries_per_host_and_port() -> None:
    scope = Scope(["http://localhost:3000/", "http://example.com/shop/"])
    assert _parse("http://localhost:3000/x") in scope
    assert _parse("http://localhost:8080/x") not in scope
    assert _parse("http://localhost/x") not in scope
    assert _parse("http://example.com/shop/item") in scope
    assert _parse("http://example.com/item") not in scope


@pytest.mark.parametrize("root", ["mailto:someone@example.com", "not a url", "http://[::1"])
def test_scope_rejects_non_http_roots(root: str) -> None:
    with pytest.raises(ValueError, match="not an http"):
        Scope([root])


def test_scope_entry_depth() -> None:
    assert _entry("http://example.com/").depth == 0
    assert _entry("http://example.com/blog/").depth == 2
    assert _entry("http://example.com/blog/post").depth == 2
    assert _entry("http://example.com/a/b/c/").depth == 4
