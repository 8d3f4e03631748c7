"""nitpicker.policy.extract.json_ld: the types of a JSON-LD block, its parse error; and the
blocks :func:`nitpicker.policy.extract.extract` finds in a page."""

from __future__ import annotations

import pytest

from nitpicker.policy.extract import extract
from nitpicker.policy.extract.json_ld import is_json_ld_type, read_json_ld

# (block text, types, error or None)
BLOCKS = [
    ('{"@context": "https://schema.org", "@type": "Product", "name": "W"}', ["Product"], None),
    # a nested entity is a property of the item, not an item of the page
    ('{"@type": "Product", "offers": {"@type": "Offer"}}', ["Product"], None),
    ('{"@type": ["Article", "NewsArticle"]}', ["Article", "NewsArticle"], None),
    ('[{"@type": "BreadcrumbList"}, {"@type": "WebPage"}]', ["BreadcrumbList", "WebPage"], None),
    (('{"@context": "https://schema.org", "@graph": [{"@type": "WebSite"}, {"@type": "WebPage"},'
      ' {"@type": "Person", "worksFor": {"@type": "Organization"}}]}'),
     ["WebSite", "WebPage", "Person"], None),
    # @graph inside a top-level array, and a graph node's own type
    ('[{"@type": "WebSite", "@graph": [{"@type": "Person"}]}, {"@graph": {"@type": "Event"}}]',
     ["WebSite", "Person", "Event"], None),
    # each type once per block, in the order met; non-string types ignored
    ('[{"@type": "Product"}, {"@type": ["Product", 7, "", "Offer"]}]', ["Product", "Offer"], None),
    ('{"@type": "https://schema.org/Product"}', ["https://schema.org/Product"], None),
    ('{"name": "no type"}', [], None),
    ("[]", [], None),
    ("\n  {\"@type\": \"Thing\"}\n  ", ["Thing"], None),
    ('{"@type": "Event", "name": "Launch",}', [],
     "Expecting property name enclosed in double quotes (line 1, column 37)"),
    ('{"@type": "Event"\n "name": "x"}', [], "Expecting ',' delimiter (line 2, column 2)"),
    ("", [], "empty block"),
    ("   \n", [], "empty block"),
    ('"just a string"', [], "not a JSON-LD object or array: a string"),
    ("42", [], "not a JSON-LD object or array: a number"),
    ("null", [], "not a JSON-LD object or array: null"),
    ('{"@type": "Thing", "x": NaN}', [], "NaN is not JSON"),
    ("<!-- {\"@type\": \"Thing\"} -->", [], "Expecting value (line 1, column 1)"),
    ("[" * 100_000, [], "nested too deeply to read"),
]


@pytest.mark.parametrize(("text", "types", "error"), BLOCKS)
def test_read_json_ld(text: str, types: list[str], error: str | None) -> None:
    block = read_json_ld(text)
    assert (block.types, block.error, block.is_valid) == (types, error, error is None)
    assert block.source == text.strip()


@pytest.mark.parametrize(("value", "expected"), [
    ("application/ld+json", True),
    ("APPLICATION/LD+JSON", True),
    (" application/ld+json ; charset=utf-8", True),
    ("application/json", False),
    ("text/javascript", False),
    ("", False),
])
def test_is_json_ld_type(value: str, expected: bool) -> None:
    assert is_json_ld_type(value) is expected


PAGE = """<!doctype html><html><head><title>T</title>
<script type="application/ld+json">{"@type": "Organization"}</script>
<script type="Application/LD+JSON">{"@type": "Event",}</script>
<script>var x = {"@type": "NotJsonLd"};</script>
<script type="application/json">{"@type": "AlsoNot"}</script>
</head><body><a href="/a">A <script type="application/ld+json">[{"@type": "WebPage"}]</script>
link</a>
<script type="application/ld+json">{"text": "a </b> & &amp; <a href='/x'>"}</script>
</body></html>"""


def test_extract_reads_every_json_ld_block_in_document_order() -> None:
    found = extract(PAGE)
    assert [(b.types, b.error is None) for b in found.json_ld] == [
        (["Organization"], True), ([], False), (["WebPage"], True), ([], True)]
    # script text is raw: no entity decoding, no markup, and it is no part of a link's text
    assert found.json_ld[3].source == """{"text": "a </b> & &amp; <a href='/x'>"}"""
    assert [(a.href, a.text) for a in found.anchors] == [("/a", "A link")]
    assert found.meta.title == "T"


def test_a_page_without_json_ld_has_no_blocks() -> None:
    assert extract("<html><head><script>var a = 1;</script></head><body>x</body></html>").json_ld == []
    assert extract("").json_ld == []
