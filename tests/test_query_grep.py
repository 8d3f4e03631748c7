"""``nitpicker.query.grep`` and ``page_text``: the search of the stored snapshots, on a
generated archive of 200 snapshots, the marker in two (``fixtures/snapshot_archive.py``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from fixtures.snapshot_archive import MARKER, build_snapshot_archive, page_url
from nitpicker.query import open_archive
from nitpicker.query.grep import compile_pattern, count_snapshots, grep_snapshots
from nitpicker.query.page_text import page_text
from nitpicker.query.snapshot_encoding import decode

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

PAGES = 200
EVERY = 100


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path: Path = tmp_path_factory.mktemp("grep") / "grep.nitpicker"
    build_snapshot_archive(path, PAGES, marker_every=EVERY)
    connection = open_archive(path)
    yield connection
    connection.close()


@pytest.mark.parametrize(("html", "text"), [
    ("<p>Hello <b>world</b></p>", "Hello world"),
    ("<td>a</td><td>b</td>", "a b"),
    ("<p>one</p>\n  <p>two\n   three</p>", "one two three"),
    ("x<br>y", "x y"),
    ("<head><title>T</title><script>var s = '<p>no</p>';</script></head><p>yes</p>", "yes"),
    ("<style>p { color: red }</style><!-- a comment --><p>shown</p>", "shown"),
    ("<p title=\"a > b\">fish &amp; chips&nbsp;&lt;3</p>", "fish & chips <3"),  # nbsp a space
    ("<template><p>later</p></template><noscript>off</noscript>ok", "ok"),
], ids=["inline", "cells", "lines", "br", "head-script", "style-comment", "entities",
        "template-noscript"])
def test_page_text(html: str, text: str) -> None:
    assert page_text(html).text == text


def test_page_text_maps_back_to_the_snapshot() -> None:
    source = "<html>\n<body>\n<p>alpha</p>\n<ul><li>beta</li>\n<li>gamma delta</li></ul>"
    text = page_text(source)
    for word in ("alpha", "beta", "gamma", "delta"):
        offset = text.html_offset(text.text.index(word))
        assert source[offset:offset + len(word)] == word


@pytest.mark.parametrize(("pattern", "ignore_case", "matches", "misses"), [
    ("a.b", False, ["xa.by"], ["axb"]),
    ("/a.b/", False, ["axb"], ["ab"]),
    ("/^GTAG/", True, ["gtag('x')"], ["a gtag"]),
    ("Näïve", True, ["NÄÏVE"], ["naive"]),
    ("/", False, ["a/b"], ["ab"]),
], ids=["literal", "regex", "regex-ignore-case", "unicode-case", "one-slash"])
def test_compile_pattern(pattern: str, ignore_case: bool, matches: list[str],
                         misses: list[str]) -> None:
    regex = compile_pattern(pattern, ignore_case=ignore_case)
    assert all(regex.search(text) for text in matches)
    assert not any(regex.search(text) for text in misses)


@pytest.mark.parametrize(("pattern", "message"), [
    ("", "Invalid pattern: ''"),
    ("/(/", "Invalid regular expression '/(/': missing )"),
    ("/a*/", "Invalid pattern '/a*/': it matches the empty string"),
])
def test_bad_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        compile_pattern(pattern)


def test_finds_the_marker_with_line_column_and_snippet(conn: sqlite3.Connection) -> None:
    seen: list[int] = []
    result = grep_snapshots(conn, MARKER, on_progress=seen.append)
    assert (result["total"], result["pages_matched"], result["pages_searched"]) == (2, 2, PAGES)
    assert [item["url"] for item in result["items"]] == [page_url(EVERY), page_url(2 * EVERY)]
    first = result["items"][0]
    assert first["match"] == MARKER
    assert MARKER in first["snippet"] and first["snippet"].startswith("…")
    assert len(first["snippet"]) <= len(MARKER) + 2 * 60 + 2
    encoding, html = conn.execute("SELECT encoding, html FROM snapshots WHERE page_id = ?",
                                  (EVERY,)).fetchone()
    line = decode(encoding, html).decode().splitlines()[first["line"] - 1]
    assert line[first["column"] - 1:].startswith(MARKER)
    assert seen[-1] == PAGES and seen == sorted(seen)


def test_pages_of_matches_and_every_match_counted(conn: sqlite3.Connection) -> None:
    every = grep_snapshots(conn, "<p class=", limit=0)
    assert every["items"] == [] and every["pages_matched"] == PAGES
    per_page = every["total"] // PAGES
    assert every["total"] == per_page * PAGES and per_page > 10
    window = grep_snapshots(conn, "<p class=", limit=5, offset=per_page - 2)
    assert len(window["items"]) == 5 and window["total"] == every["total"]
    assert [item["url"] for item in window["items"]] == [page_url(1)] * 2 + [page_url(2)] * 3
    assert grep_snapshots(conn, MARKER, offset=1)["items"][0]["url"] == page_url(2 * EVERY)
    assert grep_snapshots(conn, MARKER, offset=2)["items"] == []


def test_url_pattern_case_and_scope(conn: sqlite3.Connection) -> None:
    news = grep_snapshots(conn, MARKER, url_pattern="%/news/%")
    assert (news["total"], news["pages_searched"]) == (2, PAGES // 10)
    assert count_snapshots(conn, "%/blog/%") == PAGES // 10
    assert grep_snapshots(conn, MARKER, url_pattern="%/blog/%")["total"] == 0
    assert grep_snapshots(conn, MARKER.upper())["total"] == 0
    assert grep_snapshots(conn, MARKER.upper(), ignore_case=True)["total"] == 2
    # markup is not text: an attribute is found in the html, never in the text
    assert grep_snapshots(conn, 'class="text"', url_pattern="%page-1.html")["total"] > 0
    assert grep_snapshots(conn, 'class="text"', scope="text")["total"] == 0
    text = grep_snapshots(conn, f"/{MARKER} in page \\d+/", scope="text")
    assert [item["match"] for item in text["items"]] == [f"{MARKER} in page {EVERY}",
                                                         f"{MARKER} in page {2 * EVERY}"]
    assert text["items"][0]["line"] == grep_snapshots(conn, MARKER)["items"][0]["line"]
    # entities are decoded in the text: "&copy; Grep Example &amp; friends"
    assert grep_snapshots(conn, "© Grep Example & friends", scope="text")["total"] == PAGES


@pytest.mark.parametrize(("options", "message"), [
    ({"scope": "css"}, "Invalid scope: 'css'. Must be one of: html, text"),
    ({"limit": -1}, "Invalid limit: -1"),
    ({"offset": -1}, "Invalid offset: -1"),
])
def test_bad_options(conn: sqlite3.Connection, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        grep_snapshots(conn, MARKER, **options)  # type: ignore[arg-type]
