"""nitpicker.policy.excludes: micromatch-style globs, URL prefixes and keywords (SPEC §3.7, §12 Q2)."""

from __future__ import annotations

import re

import pytest

from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS, Excludes, keyword_pattern, split_globs
from nitpicker.policy.urls import ParsedUrl, parse_url


def _parse(url: str) -> ParsedUrl:
    parsed = parse_url(url)
    assert parsed is not None, url
    return parsed


# (pathname, glob, excluded) — micromatch 4 results, SPEC §3.7
GLOBS = [
    ("/blog/2020/01", "/blog/**/*", True),
    ("/blog/2020/01", "/blog/*", False),  # `*` does not cross `/` (Q2)
    ("/blog/2020", "/blog/*", True),
    ("/about", "/blog/*", False),
    ("/exclude/secret/hidden", "/exclude/secret/*", True),
    ("/exclude/secret/a/hidden", "/exclude/secret/*", False),
    ("/blog/a.html", "/blog/*.{html,php}", True),
    ("/blog/a.php", "/blog/*.{html,php}", True),
    ("/blog/a.txt", "/blog/*.{html,php}", False),
    ("/blog/sub/a.html", "/blog/*.{html,php}", False),
    ("/blog/sub/a.html", "/blog/**/*.{html,php}", True),
    ("/blog/a/b/c", "/blog/**", True),
    ("/admin/users", "/admin/*", True),
    ("/admin", "/admin/*", False),
    ("/a/x.b.c", "/a/{x.{b,c},y}.c", True),  # nested braces
    ("/a/y.c", "/a/{x.{b,c},y}.c", True),
    ("/a/x.d.c", "/a/{x.{b,c},y}.c", False),
    ("/page1", "/page?", True),
    ("/page10", "/page?", False),
    # a path with characters the key percent-encodes matches a glob written either way
    ("/odd{1}|x^y.html", "/odd*.html", True),
    ("/odd{1}|x^y.html", "/*|*", True),
    ("/odd{1}|x^y.html", "/*%7C*", True),
    ("/ブログ/a", "/ブログ/*", True),
    ("/ブログ/a", "/%E3%83%96%E3%83%AD%E3%82%B0/*", True),
    ("/ブログ/a/b", "/ブログ/*", False),
]


@pytest.mark.parametrize(("path", "pattern", "expected"), GLOBS)
def test_glob_matches_the_pathname(path: str, pattern: str, expected: bool) -> None:
    excludes = Excludes(globs=(pattern,))
    assert excludes.excludes_url(_parse(f"http://example.com{path}")) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # pathname only: host and query are not matched
        ("http://example.com/blog/a?x=/admin/b", False),
        ("http://admin.example/blog/a", False),
        ("https://other.example/admin/b", True),
        ("http://example.com/admin/b?x=1", True),
    ],
)
def test_glob_ignores_host_and_query(url: str, expected: bool) -> None:
    assert Excludes(globs=("/admin/*",)).excludes_url(_parse(url)) is expected


def test_several_globs_any_matches() -> None:
    excludes = Excludes(globs=tuple(split_globs("/blog/*.{html,php},/admin/*")))
    assert excludes.excludes_url(_parse("http://example.com/blog/a.php"))
    assert excludes.excludes_url(_parse("http://example.com/admin/x"))
    assert not excludes.excludes_url(_parse("http://example.com/blog/a.txt"))


def test_globs_do_not_apply_to_non_http_urls() -> None:
    excludes = Excludes(globs=("**",))
    assert excludes.excludes_url(_parse("http://example.com/x"))
    assert not excludes.excludes_url(_parse("mailto:someone@example.com"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/blog/*.{html,php},/admin/*", ["/blog/*.{html,php}", "/admin/*"]),
        ("/a/{x,{y,z}}/*,/b/*", ["/a/{x,{y,z}}/*", "/b/*"]),  # nested braces
        ("/a/*", ["/a/*"]),
        ("/a/*, /b/* ,,", ["/a/*", "/b/*"]),  # trimmed, empty parts dropped
        ("/x/{a,b},/y/{c,d},/z", ["/x/{a,b}", "/y/{c,d}", "/z"]),
        ("/a/}b,/c", ["/a/}b", "/c"]),  # a stray closing brace does not unbalance
        ("", []),
    ],
)
def test_split_globs(value: str, expected: list[str]) -> None:
    assert split_globs(value) == expected


@pytest.mark.parametrize(
    ("keyword", "html", "matched"),
    [
        ("a.b", "xx a.b yy", True),
        ("a.b", "xx axb yy", False),  # literal: the dot is escaped
        ("(draft)", "a (draft) page", True),
        ("(draft)", "a draft page", False),
        ("[noindex]", "n", False),
        ("/dr[a-z]ft/", "a draft page", True),
        ("/Draft/", "a draft page", False),  # regex: case-sensitive without i
        ("/Draft/i", "a draft page", True),
        ("/^secret$/m", "line\nsecret\nline", True),
        ("/^secret$/", "line\nsecret\nline", False),
        ("/draft/g", "draft", True),
        ("/draft/gim", "DRAFT", True),
        ("Draft", "a draft page", False),  # a literal is case-sensitive
    ],
)
def test_keyword_pattern(keyword: str, html: str, matched: bool) -> None:
    assert (keyword_pattern(keyword).search(html) is not None) is matched


@pytest.mark.parametrize("keyword", ["/draft/x", "/draft/is", "/draft/u"])
def test_keyword_pattern_rejects_unknown_flags(keyword: str) -> None:
    bad = "".join(sorted(set(keyword.rsplit("/", 1)[1]) - set("gim")))
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        keyword_pattern(keyword)


@pytest.mark.parametrize("keyword", ["/[unclosed/", "/(a/", "/*x/"])
def test_keyword_pattern_rejects_invalid_regex(keyword: str) -> None:
    with pytest.raises(ValueError, match="invalid regex"):
        keyword_pattern(keyword)


def test_matched_keyword_returns_the_matched_text() -> None:
    excludes = Excludes(keywords=("nothing-here", "/dr[a-z]+t/i"))
    assert excludes.matched_keyword("<p>This is a DRAFT page</p>") == "DRAFT"
    assert excludes.matched_keyword("<p>final</p>") is None
    assert Excludes().matched_keyword("<p>draft</p>") is None


def test_invalid_keyword_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="invalid regex"):
        Excludes(keywords=("/[/",))


@pytest.mark.parametrize(
    ("prefix", "url", "expected"),
    [
        ("http://x.com/a", "https://x.com/a/b", True),  # scheme-insensitive
        ("https://x.com/a", "http://x.com/a/b", True),
        ("http://x.com/a", "http://x.com/a", True),
        ("http://x.com/a", "http://x.com/ab", True),  # a plain string prefix
        ("http://x.com/a/", "http://x.com/a", False),
        ("http://x.com/a", "http://x.com/b", False),
        ("http://x.com/a", "http://y.com/a", False),
        ("http://x.com/a", "http://x.com:8080/a", False),
        # written as a key is: host case and percent-encoding do not matter
        ("HTTP://X.COM/a", "http://x.com/a/b", True),
        ("http://x.com/list?filter[tag]", "http://x.com/list?filter[tag]=1", True),
        ("http://x.com/list?filter[tag]", "http://x.com/list?filter%5Btag%5D=1", True),
        ("http://x.com/page%5B1%5D", "http://x.com/page[1].html", True),
        ("http://x.com/ブログ/", "http://x.com/ブログ/a", True),
        ("http://x.com/ブログ/", "http://x.com/ブ/a", False),
    ],
)
def test_url_prefix(prefix: str, url: str, expected: bool) -> None:
    assert Excludes(url_prefixes=(prefix,)).excludes_url(_parse(url)) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://twitter.com/intent/tweet?text=hi", True),
        ("http://twitter.com/share", True),
        ("https://x.com/intent/post?url=a", True),
        ("https://www.facebook.com/sharer/sharer.php?u=a", True),
        ("https://www.facebook.com/share.php?u=a", True),
        ("https://www.facebook.com/share/abc", True),
        ("https://line.me/R/msg/text/?a", True),
        ("https://social-plugins.line.me/lineit/share?url=a", True),
        ("https://www.google.com/maps", True),
        ("https://www.facebook.com/somepage", False),
        ("https://example.com/", False),
    ],
)
def test_default_excluded_urls(url: str, expected: bool) -> None:
    assert Excludes(url_prefixes=DEFAULT_EXCLUDED_URLS).excludes_url(_parse(url)) is expected


def test_default_excluded_urls_list() -> None:
    for prefix in (
        "https://twitter.com",
        "https://x.com",
        "https://www.facebook.com/share.php",
        "https://www.facebook.com/share/",
        "https://www.facebook.com/sharer/",
        "https://www.facebook.com/share_channel/",
    ):
        assert prefix in DEFAULT_EXCLUDED_URLS
    assert len(DEFAULT_EXCLUDED_URLS) == 12


def test_no_rules_excludes_nothing() -> None:
    assert not Excludes().excludes_url(_parse("https://twitter.com/share"))
