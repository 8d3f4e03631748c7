"""LinkResolver: the string-joined fast path gives exactly what ``urljoin`` + ``parse_url`` give."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin

import pytest

from nitpicker.policy.links import LinkResolver, browser_href, is_script_or_data
from nitpicker.policy.urls import parse_url
from tests.helpers import BASES, HREFS, Archive, run

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite

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


# -- hrefs as a browser reads them (WHATWG URL) ----------------------------------------------

BASE = "http://example.com/dir/page"


@pytest.mark.parametrize(
    "href",
    [
        "javascript:void(0)",
        "JavaScript:void(0)",
        "JAVASCRIPT:void(0)",
        "java\tscript:void(0)",  # a tab inside the scheme
        "java\nscript:void(0)",
        "javascript\r\n:void(0)",
        "   javascript:void(0)",  # leading spaces
        "\x01\x0cjavascript:void(0)",  # leading C0 control characters
        "javascript:void(0)\x00 ",
        "data:text/plain,x",
        "DATA:text/plain,x",
        " d\tata:text/plain,x",
        "#top",
        "  #top",
        "\t#top",
        "",
        "  ",
        "\x00\x1f",
    ],
)
def test_script_data_and_same_page_hrefs_are_no_links(href: str) -> None:
    assert LinkResolver().resolve(BASE, href) is None


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("  /norm/target ", "http://example.com/norm/target"),
        ("\x0c../up\n", "http://example.com/up"),
        ("oth\ter", "http://example.com/dir/other"),
        (" ?q=1", "http://example.com/dir/page?q=1"),
        ("javascripts/app.html", "http://example.com/dir/javascripts/app.html"),
        ("data.html", "http://example.com/dir/data.html"),
        ("javascript.html", "http://example.com/dir/javascript.html"),
    ],
)
def test_hrefs_are_read_as_a_browser_reads_them(href: str, expected: str) -> None:
    resolved = LinkResolver().resolve(BASE, href)
    assert resolved is not None and resolved.url == expected


@pytest.mark.parametrize(
    ("href", "cleaned", "script_or_data"),
    [
        (" \tJava\nScript:x \x00", "JavaScript:x", True),
        ("\x1fdata:,", "data:,", True),
        ("/javascript:x", "/javascript:x", False),
        ("jav ascript:x", "jav ascript:x", False),  # a space inside is no browser's scheme
        ("", "", False),
    ],
)
def test_browser_href(href: str, cleaned: str, script_or_data: bool) -> None:
    assert browser_href(href) == cleaned
    assert is_script_or_data(browser_href(href)) is script_or_data


def test_a_crawl_records_no_javascript_href_as_a_link(site: FixtureSite, tmp_path: Path) -> None:
    """/norm/schemes: eight script, data and same-page hrefs in the forms a browser reads
    as such, and one real link written with spaces around it."""
    result = run("crawl", site.url("/norm/schemes"), "-o", "schemes", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "schemes.nitpicker")
    assert archive.anchors_of(site.url("/norm/schemes")) == [site.url("/norm/target?a=1")]
    assert archive.urls() == {site.url("/norm/schemes"), site.url("/norm/target?a=1")}
    assert [tuple(r) for r in archive.rows("SELECT status, errors FROM runs")] == [("finished", 0)]
