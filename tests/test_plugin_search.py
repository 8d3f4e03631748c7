"""The bundled ``search`` plugin (plugins/search.py) on markup written here; the crawled
fixture pages are in tests/test_analyze.py."""

from __future__ import annotations

import re

import pytest
from nitpicker_plugins.search import create, parse_html, text_and_attributes, to_regex

from nitpicker.analyze.plugin import PageValue, Snapshot


@pytest.mark.parametrize(("term", "text", "hits"), [
    ("a.b", "a.b axb", 1),  # literal: the dot is a dot
    ("/a.b/", "a.b axb", 2),
    ("/ab/i", "AB ab Ab", 3),
    ("/^x/m", "x\nx", 2),
    ("/a.b/s", "a\nb", 1),
    ("/ab/gu", "ab ab", 2),  # g and u change nothing in Python
    ("/", "a / b", 1),  # too short to be a regular expression
])
def test_to_regex(term: str, text: str, hits: int) -> None:
    assert len(to_regex(term).findall(text)) == hits


@pytest.mark.parametrize(("term", "message"), [
    ("/a/x", "unknown regular expression flag 'x' in '/a/x'"),
    ("/(/", "invalid regular expression '/(/'"),
])
def test_bad_regex(term: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        to_regex(term)


def test_text_and_attributes_skip_code_comments_and_link_attributes() -> None:
    root = parse_html(
        '<html><head><title>T</title><style>s</style></head><body>'
        '<p title="t1" data-x="d" class="c" id="i" style="st">one<!-- c -->two</p>'
        '<script>js</script><template>tpl</template>tail<img alt="alt" src="s.png"></body></html>')
    assert root is not None
    assert sorted(text_and_attributes(root)) == sorted(["T", "t1", "one", "two", "tail", "alt"])


def test_empty_snapshot_and_missing_scope_give_no_row() -> None:
    plugin = create({"keywords": ["x"], "scope": "main"})
    assert plugin.each_page(Snapshot(1, "http://a/", "")) is None
    assert plugin.each_page(Snapshot(1, "http://a/", "<p>x</p>")) is None
    found = plugin.each_page(Snapshot(1, "http://a/", "<main>x x</main><p>x</p>"))
    assert found is not None and found.values == {"keyword:x": PageValue(2)}


def test_nothing_configured_records_nothing() -> None:
    plugin = create({})
    assert plugin.headers == {}
    assert plugin.each_page(Snapshot(1, "http://a/", "<p>x</p>")) is None


@pytest.mark.parametrize(("settings", "error", "message"), [
    ({"keywords": "x"}, None, ""),  # one string is a list of one
    ({"keywords": 3}, TypeError, "keywords must be a list"),
    ({"keywords": [{"title": "no search"}]}, ValueError, "keywords: each item must be"),
    ({"selectors": ["p["]}, ValueError, "invalid CSS selector in selectors: 'p['"),
    ({"scope": 1}, ValueError, "scope must be a CSS selector"),
])
def test_settings_are_checked_when_the_plugin_is_made(
        settings: dict[str, object], error: type[Exception] | None, message: str) -> None:
    if error is None:
        assert create(settings).headers == {"keyword:x": "Search keyword: x"}
        return
    with pytest.raises(error, match=re.escape(message)):
        create(settings)
