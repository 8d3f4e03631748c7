"""``nitpicker/policy/extract/structured.py``: a page's JSON-LD, Microdata and RDFa items in
one shape, and the markup that cannot be read."""

from __future__ import annotations

from typing import Any

import pytest

from nitpicker.policy.extract import extract
from nitpicker.policy.extract.structured import (
    MarkupProblem,
    embedded_syntaxes,
    json_ld_items,
    read_embedded,
    schema_name,
)

BASE = "https://example.com/shop/widget"


@pytest.mark.parametrize(("name", "expected"), [
    ("Product", "Product"),
    ("schema:Product", "Product"),
    ("https://schema.org/Product", "Product"),
    ("http://schema.org/Product", "Product"),
    ("http://www.schema.org/name", "name"),
    ("https://schema.org/", "https://schema.org/"),  # the vocabulary, no name
    ("http://purl.org/goodrelations/v1#Offering", "http://purl.org/goodrelations/v1#Offering"),
])
def test_schema_name(name: str, expected: str) -> None:
    assert schema_name(name) == expected


@pytest.mark.parametrize(("html", "expected"), [
    ("<p>plain</p>", ()),
    ('<div itemscope itemtype="https://schema.org/Event"></div>', ("microdata",)),
    ('<div vocab="https://schema.org/" typeof="Recipe"></div>', ("rdfa",)),
    ('<meta property="og:title" content="x">', ()),  # Open Graph alone makes no item
    ('<div itemscope><span typeof="Person"></span></div>', ("microdata", "rdfa")),
])
def test_embedded_syntaxes(html: str, expected: tuple[str, ...]) -> None:
    assert embedded_syntaxes(html) == expected


def _json_ld_items(html: str) -> list[tuple[str, Any]]:
    blocks = extract(html).json_ld
    return [(item.type, item.data) for block in blocks for item in json_ld_items(block.entities)]


def test_json_ld_items_are_the_typed_top_level_entities_with_schema_names_short() -> None:
    html = ('<script type="application/ld+json">{"@context": "https://schema.org", "@graph": ['
            '{"@type": "schema:Product", "schema:name": "W", "offers": {"@type": "Offer"}},'
            '{"@id": "#untyped", "name": "not an item"}]}</script>'
            '<script type="application/ld+json">[{"@type": ["https://schema.org/Article", '
            '"NewsArticle"], "headline": "H"}]</script>')
    assert _json_ld_items(html) == [
        ("Product", {"@type": "Product", "name": "W", "offers": {"@type": "Offer"}}),
        ("Article", {"@type": ["Article", "NewsArticle"], "headline": "H"}),
    ]


def test_an_invalid_json_ld_block_has_no_item() -> None:
    assert _json_ld_items('<script type="application/ld+json">{"@type": "Product",}</script>'
                          ) == []


def test_microdata_items_nest_their_item_properties() -> None:
    html = ('<div itemscope itemtype="https://schema.org/Event" itemid="urn:gig">'
            '<span itemprop="name">Gig</span><span itemprop="name">Concert</span>'
            '<div itemprop="location" itemscope itemtype="https://schema.org/Place">'
            '<span itemprop="name">Hall</span></div></div>'
            '<p itemscope><span itemprop="note">untyped: no item</span></p>')
    found = read_embedded(html, BASE, embedded_syntaxes(html))
    assert [(item.syntax, item.type, item.data) for item in found.items] == [
        ("microdata", "Event", {"@type": "Event", "@id": "urn:gig", "name": ["Gig", "Concert"],
                                "location": {"@type": "Place", "name": "Hall"}})]
    assert found.errors == []


def test_a_microdata_itemtype_that_is_no_url_is_a_problem_and_still_an_item() -> None:
    html = '<div itemscope itemtype="Product"><span itemprop="name">W</span></div>'
    found = read_embedded(html, BASE, ("microdata",))
    assert found.errors == [MarkupProblem("microdata", "itemtype 'Product' is not an absolute URL")]
    assert [(item.type, item.data) for item in found.items] == [
        ("Product", {"@type": "Product", "name": "W"})]


def test_rdfa_nodes_fold_into_their_parents_and_urls_resolve() -> None:
    html = ('<html><head><meta property="og:title" content="Open Graph"></head><body>'
            '<div vocab="https://schema.org/" typeof="Recipe"><span property="name">Pie</span>'
            '<img property="image" src="pie.png">'
            '<div property="author" typeof="Person"><span property="name">Ann</span></div>'
            '</div></body></html>')
    found = read_embedded(html, BASE, embedded_syntaxes(html))
    assert [(item.syntax, item.type, item.data) for item in found.items] == [
        ("rdfa", "Recipe", {"@type": "Recipe", "name": "Pie",
                            "image": "https://example.com/shop/pie.png",
                            "author": {"@type": "Person", "name": "Ann"}})]


def test_rdfa_of_another_vocabulary_keeps_its_iris() -> None:
    html = ('<div prefix="gr: http://purl.org/goodrelations/v1#" typeof="gr:Offering">'
            '<span property="gr:name">W</span></div>')
    found = read_embedded(html, BASE, ("rdfa",))
    assert [(item.type, item.data) for item in found.items] == [
        ("http://purl.org/goodrelations/v1#Offering",
         {"@type": "http://purl.org/goodrelations/v1#Offering",
          "http://purl.org/goodrelations/v1#name": "W"})]
