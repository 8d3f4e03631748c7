"""The bundled ``main-contents`` plugin (plugins/main_contents.py) on markup written here; the
crawled fixture pages are in tests/test_analyze.py."""

from __future__ import annotations

import re

import pytest
from nitpicker_plugins._settings import SettingError
from nitpicker_plugins.main_contents import create, describe, table_summary
from nitpicker_plugins.search import parse_html

from nitpicker.analyze.plugin import Snapshot


def _values(html: str, **settings: str) -> dict[str, object]:
    found = create(settings).each_page(Snapshot(1, "http://a/", html))
    return {key: cell.value for key, cell in found.values.items()}


def test_nested_tables_are_summarised_apart() -> None:
    root = parse_html(
        "<table><tfoot><tr><td>f</td></tr></tfoot><tr><td rowspan=2>a</td>"
        "<td><table><tr><td>i</td><td>j</td><td>k</td></tr></table></td></tr></table>")
    assert root is not None
    outer, inner = root.iter("table")
    assert table_summary(outer) == "| 2 | 2 | x | o | o |"
    assert table_summary(inner) == "| 1 | 3 | x | x | x |"


def test_the_first_match_in_document_order_and_the_setting() -> None:
    html = '<div class="content">a b<div id="main">c</div></div><article id="x">zz z</article>'
    assert _values(html)["element"] == "div.content"
    assert _values(html)["wordCount"] == 3
    # the setting joins the list: the first match in the document still wins
    assert _values(html, mainContentSelector="#x")["element"] == "div.content"
    assert _values('<p>p</p><article id="x">zz z</article>', mainContentSelector="#x") == {
        "element": "article#x", "wordCount": 3, "headings": 0, "images": 0, "table": 0}


def test_no_main_element_and_an_empty_snapshot_get_a_row() -> None:
    for html in ("<p>no main</p>", ""):
        assert _values(html) == {"element": None, "wordCount": 0, "headings": 0, "images": 0,
                                 "table": 0}


@pytest.mark.parametrize(("html", "expected"), [
    ('<main id="m" class="a  b">x</main>', "main#m.a.b"),
    ("<div role=main>x</div>", "div"),
])
def test_describe(html: str, expected: str) -> None:
    root = parse_html(html)
    assert root is not None
    element = next(e for e in root.iter() if e.tag in ("main", "div"))
    assert describe(element) == expected


@pytest.mark.parametrize(("value", "message"), [
    (3, "main-contents: setting 'mainContentSelector' must be a CSS selector (a string), got 3"),
    ("##", "main-contents: setting 'mainContentSelector' has an invalid CSS selector '##'"),
    ("div[", "main-contents: setting 'mainContentSelector' has an invalid CSS selector 'div['"),
])
def test_a_bad_selector_is_a_setting_error(value: object, message: str) -> None:
    with pytest.raises(SettingError, match=re.escape(message)) as err:
        create({"mainContentSelector": value})
    assert err.value.setting == "mainContentSelector"
