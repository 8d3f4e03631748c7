"""A page's fragment targets and main content from the extraction's parse
(``nitpicker/policy/extract/content.py``, through :func:`nitpicker.policy.extract.extract`)."""

from __future__ import annotations

import pytest

from nitpicker.policy.extract import PageText, extract


def _content(html: str) -> PageText:
    found = extract(html, content=True)
    assert found.content is not None
    return found.content


@pytest.mark.parametrize(("html", "ids"), [
    ('<h2 id="intro">I</h2><p id="x">x</p>', ["intro", "x"]),
    ('<a name="legacy">L</a><a href="/" name="both" id="own">B</a>', ["legacy", "own"]),
    ('<div name="not-an-anchor">d</div><a id="">e</a>', []),
    ('<p id="twice">1</p><p id="twice">2</p><p id="Twice">3</p>', ["twice", "Twice"]),
    ('<svg><g id="icon"></g></svg><img id="pic" src="a.png">', ["icon", "pic"]),
])
def test_the_fragment_targets(html: str, ids: list[str]) -> None:
    assert _content(f"<html><body>{html}</body></html>").ids == ids


@pytest.mark.parametrize(("body", "main", "text"), [
    ("<nav>Menu</nav><main>The <b>own</b> words</main><footer>Foot</footer>", "main",
     "The own words"),
    ('<div id="content">A <a href="/x">link</a> here</div><p>after</p>', "div#content",
     "A link here"),
    ('<div class="wrap main">M<script>var s = "no";</script><style>p{}</style></div>',
     "div.main", "M"),
    ('<header>H</header><section role="main">R</section><main>Later</main>', "section",
     "R"),
    ("<p>No main: <a href=/a>the body</a> <a href=/b>whole</a></p>", "", "No main: the body whole"),
])
def test_the_main_content(body: str, main: str, text: str) -> None:
    found = _content(f"<html><head><title>Title</title></head><body>{body}</body></html>")
    assert (found.main, " ".join(found.text.split())) == (main, text)


def test_the_links_text_is_unchanged_by_it() -> None:
    html = '<main><a href="/a">first <img alt="pic"></a> mid <a href="/b">second</a></main>'
    assert [a.text for a in extract(html, content=True).anchors] == [
        a.text for a in extract(html).anchors] == ["first pic", "second"]


def test_without_content_none_is_read() -> None:
    assert extract('<p id="x">x</p>').content is None
    assert extract("", content=True).content == PageText()
