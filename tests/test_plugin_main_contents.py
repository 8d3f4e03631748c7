"""The bundled ``main-contents`` plugin (plugins/main_contents.py) on markup written here; the
crawled fixture pages are in tests/test_analyze.py."""

from __future__ import annotations

import re

import pytest
from lxml import etree
from nitpicker_plugins._main_elements import count_words, visible_text
from nitpicker_plugins._settings import SettingError
from nitpicker_plugins.main_contents import create, describe, table_summary
from nitpicker_plugins.search import parse_html

from nitpicker.analyze.plugin import Snapshot

NO_ELEMENTS = {"buttons": 0, "iframes": 0, "videos": 0, "audios": 0, "canvases": 0}


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
        "element": "article#x", "wordCount": 3, "headings": 0, "images": 0, "table": 0,
        "words": 2, **NO_ELEMENTS}


def test_no_main_element_and_an_empty_snapshot_get_a_row() -> None:
    for html in ("<p>no main</p>", ""):
        assert _values(html) == {"element": None, "wordCount": 0, "headings": 0, "images": 0,
                                 "table": 0, "words": 0, **NO_ELEMENTS}


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


@pytest.mark.parametrize(("text", "words"), [
    ("", 0),
    ("one two  three\n four", 4),
    ("well-known isn't one — two", 4),  # a token with no letter or digit is no word
    ("日本語の文章です。", 8),  # each Chinese character and kana, not the full stop
    ("Nitpickerはサイト監査ツール", 10),  # a Latin run is one word among the kana
    ("한국어 문장 입니다", 3),  # Hangul is written with spaces
    ("ｶﾀｶﾅ 123", 5),
])
def test_count_words(text: str, words: int) -> None:
    assert count_words(text) == words


def test_words_leave_out_scripts_and_break_at_blocks() -> None:
    main = parse_html("<main><ul><li>one</li><li>two</li></ul>wo<b>rd</b><br>x"
                      "<script>a b c</script><style>p {}</style><!-- d e --></main>")
    assert main is not None
    assert _values(etree.tostring(main, encoding="unicode"))["words"] == 4
    assert " ".join(visible_text(main).split()) == "one two word x"


def test_a_deeply_nested_main_is_walked_without_recursion() -> None:
    main = inner = etree.Element("main")
    for _ in range(5000):  # deeper than Python's recursion limit
        inner = etree.SubElement(inner, "div")
    inner.text = "deep words"
    inner.tail = "tail"
    assert visible_text(main).split() == ["deep", "words", "tail"]


def test_the_elements_listed_in_the_notes() -> None:
    found = create({}).each_page(Snapshot(1, "http://a/", (
        "<main><h2>A <i>b</i>\n c</h2><h6>x|y</h6>"
        '<img src="a.png" alt="Alt"><img src="b.png" alt=" "><input type="image" src="c.png">'
        "<button><span>Send</span> it</button><input type=reset value=Clear>"
        '<div role="button" title="Close"></div><input type="text" value="no button">'
        '<iframe src="/f" title="Map"></iframe>'
        '<video src="v.webm" width="640"><source src="ignored.mp4"></video>'
        '<video><source src="s.mp4"><source src="t.webm"></video>'
        "<audio></audio><audio></audio><canvas></canvas></main>")))
    cells = found.values
    assert cells["headings"].note == "| level | text |\n| 2 | A b c |\n| 6 | x\\|y |"
    assert cells["images"].note == ('| src | alt |\n| a.png | Alt |\n| b.png | "" |\n'
                                    "| c.png | (none) |")
    assert (cells["buttons"].value, cells["buttons"].note) == (
        3, "| text |\n| Send it |\n| Clear |\n| Close |")
    assert cells["iframes"].note == "| src | title | width | height |\n| /f | Map |  |  |"
    assert (cells["videos"].value, cells["videos"].note) == (2, (
        "| src | title | width | height |\n| v.webm |  | 640 |  |\n| s.mp4 |  |  |  |"))
    assert (cells["audios"].value, cells["canvases"].value) == (2, 1)
    assert cells["audios"].note is None
