"""nitpicker.policy.urls: the archive key, the frontier key, href joining and the natural order."""

from __future__ import annotations

import random
import re
import sqlite3
from urllib.parse import urljoin

import pytest
from scrapy import Request
from w3lib.url import safe_url_string

from nitpicker.policy.urls import (
    frontier_key,
    is_valid_hostname,
    join_href,
    natural_order_key,
    natural_order_parts,
    normalize_url,
    parse_url,
    url_prefix_key,
)
from tests.helpers import BASES, HREFS

# (raw URL, expected archive key)
NORMALISE = [
    # fragment and credentials are not part of the key
    ("http://example.com/a#section", "http://example.com/a"),
    ("http://user:secret@example.com/a", "http://example.com/a"),
    ("https://user:secret@example.com/a?x=1#top", "https://example.com/a?x=1"),
    # PHPSESSID is removed, whatever its case
    ("http://example.com/a?PHPSESSID=abc", "http://example.com/a"),
    ("http://example.com/a?phpsessid=abc&x=1", "http://example.com/a?x=1"),
    ("http://example.com/a?x=1&PhpSessId=abc&y=2", "http://example.com/a?x=1&y=2"),
    ("http://example.com/a?phpsessid2=keep", "http://example.com/a?phpsessid2=keep"),
    # repeated slashes in the path are collapsed
    ("http://example.com//a///b//", "http://example.com/a/b/"),
    ("http://example.com/a//b?next=//c", "http://example.com/a/b?next=//c"),
    # query parameters sorted by name; repeated names keep their order (stable sort)
    ("http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"),
    ("http://example.com/?b=2&a=3&b=1", "http://example.com/?a=3&b=2&b=1"),
    ("http://example.com/?z=1&b=1&b=0&a=9", "http://example.com/?a=9&b=1&b=0&z=1"),
    ("http://example.com/a?", "http://example.com/a"),
    # default ports dropped, others kept
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    ("https://example.com:80/a", "https://example.com:80/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    # scheme and host lower-cased, path case kept
    ("HTTP://Example.COM/About/Index.HTML", "http://example.com/About/Index.HTML"),
    ("HTTPS://WWW.EXAMPLE.COM", "https://www.example.com/"),
    # an empty path is "/"
    ("http://example.com", "http://example.com/"),
    ("http://example.com?q=1", "http://example.com/?q=1"),
    # IDN host to punycode; non-ASCII and spaces percent-encoded
    ("http://例え.jp/", "http://xn--r8jz45g.jp/"),
    ("http://example.com/パス", "http://example.com/%E3%83%91%E3%82%B9"),
    ("http://example.com/a b?q=c d", "http://example.com/a%20b?q=c%20d"),
    ("http://example.com/?q=é", "http://example.com/?q=%C3%A9"),
    # dot segments resolved, as a browser does
    ("http://example.com/a/../b", "http://example.com/b"),
    ("http://example.com/a/./b/.", "http://example.com/a/b/"),
    ("http://example.com/../../x", "http://example.com/x"),
    ("http://example.com/a/.hidden/..x", "http://example.com/a/.hidden/..x"),
    # IPv6 host keeps its brackets
    ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    # non-HTTP schemes: scheme and path only
    ("mailto:someone@example.com", "mailto:someone@example.com"),
    ("MAILTO:someone@example.com?subject=hi", "mailto:someone@example.com"),
    ("tel:+81-3-1234-5678", "tel:+81-3-1234-5678"),
]


@pytest.mark.parametrize(("raw", "expected"), NORMALISE)
def test_normalize_url(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


# (raw URL, expected key): characters Scrapy's Request percent-encodes (w3lib's
# safe_url_string) are encoded in the key, so a link written raw and the response Scrapy
# records for it are one URL.
SCRAPY_FORM = [
    ("http://example.com/page[1].html", "http://example.com/page%5B1%5D.html"),
    ("http://example.com/page%5B1%5D.html", "http://example.com/page%5B1%5D.html"),
    ("http://example.com/list?filter[tag]=x", "http://example.com/list?filter%5Btag%5D=x"),
    ("http://example.com/list?filter%5Btag%5D=x", "http://example.com/list?filter%5Btag%5D=x"),
    ("http://example.com/a{b}|c^d", "http://example.com/a%7Bb%7D%7Cc%5Ed"),
    ('http://example.com/a`b<c>d"e', "http://example.com/a%60b%3Cc%3Ed%22e"),
    ("http://example.com/a\\b", "http://example.com/a/b"),  # a backslash is a slash
    ("http://example.com/?q=it's", "http://example.com/?q=it%27s"),  # ' encoded in a query,
    ("http://example.com/it's", "http://example.com/it's"),  # not in a path
    ("http://example.com/a\x01b\x7f", "http://example.com/a%01b%7F"),
    ("http://example.com/a\tb\n", "http://example.com/ab"),  # tabs and newlines removed
    ("\x00 http://example.com/x \x1f", "http://example.com/x"),  # C0 and space trimmed
    ("http://example.com/100%", "http://example.com/100%"),  # a lone % stays, as in Scrapy
    ("http://example.com/%5b", "http://example.com/%5b"),  # escapes are kept as written
    ("http://[::1]:8080/a[1]", "http://[::1]:8080/a%5B1%5D"),  # IPv6 brackets are kept
    ("http://example.com/?b[]=2&a[]=1", "http://example.com/?a%5B%5D=1&b%5B%5D=2"),
    ("HTTP://EXAMPLE.COM/x[1]/../y[2]", "http://example.com/y%5B2%5D"),
    ("http://example.com/[a]//b?PHPSESSID=1&c[d]=e#f[g]", "http://example.com/%5Ba%5D/b?c%5Bd%5D=e"),
]


@pytest.mark.parametrize(("raw", "expected"), SCRAPY_FORM)
def test_key_is_the_form_scrapy_requests(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected
    assert Request(expected).url == expected  # Scrapy fetches the key as it is
    assert normalize_url(Request(raw.strip("\x00 \x1f")).url) == expected


def test_raw_and_encoded_forms_share_a_key_whatever_the_characters() -> None:
    """Random URLs: the key is a fixed point of Scrapy's encoding, and what Scrapy makes of
    the raw URL (its ``response.url``) has the same key."""
    rng = random.Random(11)
    pieces = ["a", "Z", "0", "-", ".", "..", "/", "//", "?", "&", "=", "#", "%", "%5B", "%zz",
              "[", "]", "{", "}", "|", "^", "`", "'", '"', "<", ">", "\\", " ", "\t", "é", "日",
              "\x01", "\x7f", ":", "@", ";", ",", "+", "~", "!", "$", "(", ")", "*"]
    hosts = ["example.com", "EXAMPLE.com:8080", "[::1]", "例え.jp"]
    checked = 0
    for _ in range(3000):
        tail = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        raw = f"{rng.choice(['http', 'HTTPS'])}://{rng.choice(hosts)}/{tail}"
        parsed = parse_url(raw)
        if parsed is None:
            continue
        checked += 1
        assert Request(parsed.url).url == parsed.url, raw
        assert safe_url_string(parsed.url) == parsed.url, raw
        again = parse_url(parsed.url)
        assert again is not None and (again.url, again.key) == (parsed.url, parsed.key), raw
        assert normalize_url(Request(raw).url) == parsed.url, raw
    assert checked > 2500


@pytest.mark.parametrize(
    ("hostname", "valid"),
    [
        ("example.com", True),
        ("xn--r8jz45g.jp", True),
        ("my_host.local", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("exa mple.com", False),
        ('exa"mple.com', False),
        ("exa%20mple.com", False),
        ("exa<mple>.com", False),
        ("", False),
    ],
)
def test_is_valid_hostname(hostname: str, valid: bool) -> None:
    assert is_valid_hostname(hostname) is valid


@pytest.mark.parametrize(
    ("prefix", "key"),
    [
        ("https://www.google.com", "//www.google.com"),
        ("HTTPS://Example.COM/Path", "//example.com/Path"),
        ("http://example.com/list?filter[tag]", "//example.com/list?filter%5Btag%5D"),
        ("http://example.com/page%5B1%5D", "//example.com/page%5B1%5D"),
        ("http://example.com/日本", "//example.com/%E6%97%A5%E6%9C%AC"),
    ],
)
def test_url_prefix_key(prefix: str, key: str) -> None:
    assert url_prefix_key(prefix) == key


@pytest.mark.parametrize(
    "raw",
    [
        "http://[::1",  # unterminated IPv6 literal
        "http://example.com:99999/",  # port out of range
        "http:///a",  # no host
        "/relative/path",  # no scheme
        "example.com",
        "http://[x/a[1]",  # unterminated IPv6 literal, with characters to encode
        "http://[::1]:99999/a[1]",  # bad port, with characters to encode
    ],
)
def test_unparseable_is_none(raw: str) -> None:
    assert parse_url(raw) is None
    assert normalize_url(raw) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://example.com/a?b=2&a=1", "http://example.com/a"),
        ("http://example.com/a?PHPSESSID=1&z=3#x", "http://example.com/a"),
        ("http://example.com/?q=1", "http://example.com/"),
    ],
)
def test_disable_queries_drops_the_query(raw: str, expected: str) -> None:
    parsed = parse_url(raw, disable_queries=True)
    assert parsed is not None
    assert parsed.url == expected
    assert parsed.query == ""
    # without the flag the query is kept
    assert normalize_url(raw) != expected


def test_parts_of_an_http_url() -> None:
    parsed = parse_url("HTTPS://alice:pw@Example.com:8443//docs//Guide.html?b=2&a=1#intro")
    assert parsed is not None
    assert parsed.url == "https://example.com:8443/docs/Guide.html?a=1&b=2"
    assert parsed.scheme == "https"
    assert parsed.hostname == "example.com"
    assert parsed.port == 8443
    assert parsed.path == "/docs/Guide.html"
    assert parsed.query == "a=1&b=2"
    assert parsed.fragment == "intro"
    assert (parsed.username, parsed.password) == ("alice", "pw")
    assert parsed.is_http
    assert parsed.segments == ("docs", "Guide.html")
    assert parsed.key == "//example.com:8443/docs/Guide.html?a=1&b=2"


@pytest.mark.parametrize(
    ("raw", "segments"),
    [
        ("http://example.com/", ()),
        ("http://example.com/blog/", ("blog", "")),
        ("http://example.com/blog/post", ("blog", "post")),
        ("http://example.com/a/b/c/", ("a", "b", "c", "")),
    ],
)
def test_segments(raw: str, segments: tuple[str, ...]) -> None:
    parsed = parse_url(raw)
    assert parsed is not None
    assert parsed.segments == segments


@pytest.mark.parametrize(
    ("raw", "scheme", "path"),
    [
        ("mailto:someone@example.com", "mailto", "someone@example.com"),
        ("tel:+81312345678", "tel", "+81312345678"),
        ("javascript:void(0)", "javascript", "void(0)"),
    ],
)
def test_non_http_urls(raw: str, scheme: str, path: str) -> None:
    parsed = parse_url(raw)
    assert parsed is not None
    assert not parsed.is_http
    assert parsed.scheme == scheme
    assert parsed.path == path
    assert parsed.hostname == ""
    assert parsed.port is None
    assert parsed.query == ""
    assert parsed.segments == (path,)


@pytest.mark.parametrize(
    ("raw", "is_http"),
    [("http://example.com/", True), ("https://example.com/", True), ("ftp://example.com/", False)],
)
def test_is_http(raw: str, is_http: bool) -> None:
    parsed = parse_url(raw)
    assert parsed is not None
    assert parsed.is_http is is_http


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/a", "https://example.com/a"),
        ("http://example.com/a?x=1", "https://example.com/a?x=1"),
        ("http://example.com:8080/", "https://example.com:8080/"),
    ],
)
def test_frontier_key_ignores_the_scheme(a: str, b: str) -> None:
    assert frontier_key(a) == frontier_key(b)
    assert frontier_key(a) == a.removeprefix("http:")
    pa, pb = parse_url(a), parse_url(b)
    assert pa is not None and pb is not None
    assert pa.url != pb.url
    assert pa.key == pb.key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/a", "http://example.com/b"),
        ("http://example.com/a", "http://example.org/a"),
        ("http://example.com/a", "http://example.com:8080/a"),
        ("http://example.com/a?x=1", "http://example.com/a?x=2"),
    ],
)
def test_frontier_key_keeps_everything_else(a: str, b: str) -> None:
    assert frontier_key(a) != frontier_key(b)


def test_frontier_key_of_non_http_is_the_url() -> None:
    assert frontier_key("mailto:a@example.com") == "mailto:a@example.com"


@pytest.mark.parametrize("href", HREFS)
@pytest.mark.parametrize("base", BASES)
def test_join_href_equals_urljoin(base: str, href: str) -> None:
    assert join_href(base, href) == urljoin(base, href)


@pytest.mark.parametrize(
    ("base", "href", "expected"),
    [
        ("http://example.com/dir/page.html", "/root", "http://example.com/root"),
        ("http://example.com?x=1", "/root", "http://example.com/root"),
        ("https://example.com#top", "/root", "https://example.com/root"),
        ("http://example.com/dir/page?x=1", "../up", "http://example.com/up"),
        ("http://example.com/dir/page?x=1", "?q=2", "http://example.com/dir/page?q=2"),
        ("https://example.com/dir/", "//cdn.example/lib.js", "https://cdn.example/lib.js"),
        ("http://example.com/dir/", "/a/../b", "http://example.com/b"),
    ],
)
def test_join_href_results(base: str, href: str, expected: str) -> None:
    assert join_href(base, href) == expected


@pytest.mark.parametrize("href", ["HTTP://[x/", "Https://a]b/", "x://[/"])
def test_join_href_returns_what_urljoin_refuses(href: str) -> None:
    """An unclosed IPv6 bracket: ``urljoin`` raises; the href comes back, unparseable."""
    with pytest.raises(ValueError, match="IPv6"):
        urljoin("http://example.com/a", href)
    assert join_href("http://example.com/a", href) == href
    assert parse_url(href) is None


def _sorted(urls: list[str]) -> list[str]:
    return sorted(urls, key=natural_order_key)


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        # numbers compared as numbers
        (
            ["http://example.com/p/10", "http://example.com/p/2", "http://example.com/p/1"],
            ["http://example.com/p/1", "http://example.com/p/2", "http://example.com/p/10"],
        ),
        (
            ["http://example.com/page-10.html", "http://example.com/page-9.html"],
            ["http://example.com/page-9.html", "http://example.com/page-10.html"],
        ),
        (
            ["http://example.com/v10/a", "http://example.com/v9/a"],
            ["http://example.com/v9/a", "http://example.com/v10/a"],
        ),
        (
            ["http://example.com/list?page=10", "http://example.com/list?page=2"],
            ["http://example.com/list?page=2", "http://example.com/list?page=10"],
        ),
        # an index page before its siblings
        (
            ["http://example.com/b/a", "http://example.com/b/index.html", "http://example.com/b/0"],
            ["http://example.com/b/index.html", "http://example.com/b/0", "http://example.com/b/a"],
        ),
        (
            ["http://example.com/blog/a", "http://example.com/blog/"],
            ["http://example.com/blog/", "http://example.com/blog/a"],
        ),
        (
            ["http://example.com/about", "http://example.com/"],
            ["http://example.com/", "http://example.com/about"],
        ),
        # host first
        (
            ["http://b.example/a", "http://a.example/z", "http://a.example/"],
            ["http://a.example/", "http://a.example/z", "http://b.example/a"],
        ),
    ],
)
def test_natural_order(urls: list[str], expected: list[str]) -> None:
    assert _sorted(urls) == expected
    assert _sorted(list(reversed(urls))) == expected


def _tuple_order_key(url: str) -> tuple[object, ...]:
    """The natural order as plain Python tuples: the oracle for the byte-encoded key."""

    def natural(text: str) -> tuple[tuple[int, object], ...]:
        return tuple((0, int(p)) if p.isdigit() else (1, p)
                     for p in re.split(r"([0-9]+)", text) if p)

    p = natural_order_parts(url)
    return (p.host, p.port, tuple(natural(d) for d in p.dirs), 0 if p.is_index else 1,
            natural(p.stem), p.ext, natural(p.query), p.url)


def test_natural_order_key_bytes_sort_as_the_tuples_do() -> None:
    rng = random.Random(7)
    pieces = ["", "a", "b", "ab", "index", "0", "007", "7", "10", "9", "99999999999999999999",
              "x1", "x01", "é", "Z", "-", "_", "\x00", "a\x00b"]

    def name() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3)))

    urls = set()
    while len(urls) < 3000:
        path = "/".join(name() for _ in range(rng.randint(0, 3)))
        if rng.random() < 0.5:
            path += "." + rng.choice(["html", "htm", "php", "", "1", "tar.gz"])
        query = ("?" + name() + "=" + name()) if rng.random() < 0.3 else ""
        host = rng.choice(["a.example", "b.example", "a.example:8080", "a.example:81"])
        urls.add(f"http://{host}/{path}{query}")
    ordered = sorted(urls, key=natural_order_key)
    assert ordered == sorted(urls, key=_tuple_order_key)
    # and SQLite orders the keys the same way (BLOBs compare bytewise)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE u (url TEXT, key BLOB)")
    conn.executemany("INSERT INTO u VALUES (?, ?)", [(u, natural_order_key(u)) for u in urls])
    assert [r[0] for r in conn.execute("SELECT url FROM u ORDER BY key")] == ordered


def test_natural_order_key_takes_numbers_too_long_for_int() -> None:
    long_small, long_big = "1" * 5000, "2" * 5000
    urls = [f"http://example.com/p/{long_big}", f"http://example.com/p/{long_small}",
            "http://example.com/p/3"]
    assert _sorted(urls) == ["http://example.com/p/3", urls[1], urls[0]]
