"""The bundled ``search`` plugin (plugins/search.py) on markup written here; the crawled
fixture pages are in tests/test_analyze.py."""

from __future__ import annotations

import re

import pytest
from nitpicker_plugins._settings import SettingError
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


@pytest.mark.parametrize(("settings", "setting", "message"), [
    ({"keywords": 3}, "keywords", "search: setting 'keywords' must be a list, got 3"),
    ({"keywords": {"search": "x"}}, "keywords", "setting 'keywords' must be a list"),
    ({"keywords": [{"title": "no search"}]}, "keywords",
     "setting 'keywords': each item must be a string or a table with 'search'"),
    ({"keywords": ["/[/"]}, "keywords",
     "search: setting 'keywords': invalid regular expression '/[/': unterminated"),
    ({"keywords": ["/a/q"]}, "keywords", "unknown regular expression flag 'q' in '/a/q'"),
    ({"selectors": ["p["]}, "selectors",
     "search: setting 'selectors' has an invalid CSS selector 'p[' (Expected"),
    ({"selectors": [3]}, "selectors", "each item must be a string"),
    ({"scope": 1}, "scope", "search: setting 'scope' must be a CSS selector (a string), got 1"),
    ({"scope": "main >"}, "scope", "search: setting 'scope' has an invalid CSS selector 'main >'"),
])
def test_bad_settings_are_setting_errors_naming_the_setting(
        settings: dict[str, object], setting: str, message: str) -> None:
    """A SettingError (the user's to fix: ``analyze`` stops before the archive), not a plain
    ValueError or TypeError (which let the other plugins run)."""
    with pytest.raises(SettingError, match=re.escape(message)) as err:
        create(settings)
    assert err.value.setting == setting


def test_one_keyword_string_is_a_list_of_one() -> None:
    assert create({"keywords": "x"}).headers == {"keyword:x": "Search keyword: x"}
