"""Structured data: blocks and markup that cannot be read, and the items of Google's common
rich-result types that lack a property the rich result requires (or recommends).

Reads ``json_ld_blocks`` (its parse errors, migration ``0011_json_ld``), and
``structured_items`` and ``structured_data_errors`` (``0030_structured_data``: the items of
JSON-LD, Microdata and RDFa in one shape, :mod:`nitpicker.policy.extract.structured`).

:data:`RICH_RESULTS` is the table the checks read: for each type, the properties its rich
result requires and those it recommends, after Google Search Central's structured-data
documentation. A required entry is a group of alternatives: any one of them will do (a
Product needs ``offers``, ``review`` or ``aggregateRating``). A property counts when the item
has it with a value (not ``null``, ``""``, ``[]`` nor ``{}``). Only the item's own properties
are judged: what a nested item needs (a ``ListItem``'s ``position``, an ``Offer``'s
``price``) is not. An item is judged by its first type (``structured_items.type``).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from nitpicker.query.checks.model import OK_PAGE, Check

__all__ = ["CHECKS", "RICH_RESULTS", "Requirements"]


class Requirements(NamedTuple):
    """What a rich-result type's item must have, and should have."""

    required: tuple[tuple[str, ...], ...]
    """Groups of alternatives: each group needs one of its properties."""
    recommended: tuple[str, ...]


_ARTICLE: Final = Requirements((), ("author", "datePublished", "headline", "image"))

RICH_RESULTS: Final[dict[str, Requirements]] = {
    "Article": _ARTICLE,
    "NewsArticle": _ARTICLE,
    "BlogPosting": _ARTICLE,
    "Product": Requirements((("name",), ("offers", "review", "aggregateRating")),
                            ("image", "description", "brand")),
    "BreadcrumbList": Requirements((("itemListElement",),), ()),
    "FAQPage": Requirements((("mainEntity",),), ()),
    "Organization": Requirements((), ("name", "url", "logo")),
    "Event": Requirements((("name",), ("startDate",), ("location",)),
                          ("description", "endDate", "eventStatus", "image", "offers",
                           "organizer")),
    "Recipe": Requirements((("name",), ("image",)),
                           ("author", "datePublished", "description", "recipeIngredient",
                            "recipeInstructions", "totalTime")),
    "VideoObject": Requirements((("name",), ("thumbnailUrl",), ("uploadDate",)),
                                ("contentUrl", "description", "duration", "embedUrl")),
}
"""The rich-result types and their properties (types and properties by schema.org name)."""

_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9]*")
assert all(_NAME.fullmatch(name) for kind, needs in RICH_RESULTS.items()
           for name in (kind, *needs.recommended, *(p for group in needs.required for p in group)))


def _present(name: str) -> str:
    """SQL: the item ``s`` has property ``name`` with a value (a name of the table above)."""
    return f"""ifnull(json_extract(s.data, '$."{name}"'), '') NOT IN ('', '[]', '{{}}')"""


def _missing_sql(kind: str) -> str:
    """The findings of the items that lack a ``kind`` (``required``, ``recommended``)
    property: the missing ones listed in the message."""
    cases = []
    for type_name, needs in RICH_RESULTS.items():
        groups = needs.required if kind == "required" else tuple((p,) for p in needs.recommended)
        if not groups:
            continue
        parts = " || ".join(
            f"CASE WHEN NOT ({' OR '.join(_present(p) for p in group)}) THEN "
            f"'{', ' + (group[0] if len(group) == 1 else 'one of ' + ' / '.join(group))}'"
            " ELSE '' END"
            for group in groups)
        cases.append(f"WHEN '{type_name}' THEN {parts}")
    types = ", ".join(f"'{name}'" for name in RICH_RESULTS)
    return f"""SELECT p.id AS page_id, p.url AS url,
        m.syntax || ' ' || m.type || ' ' || m.ordinal AS element,
        m.type || ' (' || m.label || ') lacks the {kind} ' || substr(m.missing, 3) AS message
    FROM (SELECT s.page_id, s.syntax, s.type,
            CASE s.syntax WHEN 'json-ld' THEN 'JSON-LD' WHEN 'microdata' THEN 'Microdata'
                ELSE 'RDFa' END AS label,
            row_number() OVER (PARTITION BY s.page_id, s.syntax, s.type ORDER BY s.position)
                AS ordinal,
            CASE s.type {' '.join(cases)} ELSE '' END AS missing
        FROM structured_items s WHERE s.type IN ({types})) m
    JOIN pages p ON p.id = m.page_id
    WHERE m.missing != '' AND {OK_PAGE}"""


_INVALID_SQL: Final = f"""SELECT p.id AS page_id, p.url AS url,
        'json-ld block ' || (b.position + 1) AS element,
        'JSON-LD block ' || (b.position + 1) || ' cannot be read: ' || b.error AS message
    FROM json_ld_blocks b JOIN pages p ON p.id = b.page_id
    WHERE b.is_valid = 0 AND {OK_PAGE}
    UNION ALL
    SELECT p.id, p.url, e.syntax || ': ' || e.message,
        CASE e.syntax WHEN 'microdata' THEN 'Microdata' ELSE 'RDFa' END || ': ' || e.message
    FROM structured_data_errors e JOIN pages p ON p.id = e.page_id
    WHERE {OK_PAGE}"""

_GOOGLE: Final = "Google's structured-data documentation (Search Central) lists each type's"

CHECKS: Final = (
    Check(
        id="structured-data/invalid",
        title="Structured data that cannot be read",
        explanation=(
            "A JSON-LD block that is not valid JSON (a missing comma, a trailing comma, an "
            "HTML comment around it), or Microdata or RDFa that cannot be read (an itemtype "
            "that is not an absolute URL). Search engines ignore what they cannot read: the "
            "page loses its rich results, and whatever else the markup says of it."),
        fix=(
            "Fix the markup the message names (the JSON error's line and column count within "
            "the block); generate JSON-LD with a JSON serializer rather than by string "
            "concatenation, and give Microdata's itemtype as a full URL "
            "(https://schema.org/Product)."),
        priority="high", category="indexing", sql=_INVALID_SQL,
    ),
    Check(
        id="structured-data/missing-required",
        title="Structured data lacks required properties",
        explanation=(
            "An item of a rich-result type (Product, Event, Recipe, VideoObject, "
            "BreadcrumbList, FAQPage) lacks a property that its rich result requires: Google "
            "does not show the rich result for it (the item is not eligible)."),
        fix=(
            f"Add the properties the message names to the item. {_GOOGLE} required and "
            "recommended properties; its Rich Results Test shows what it reads from a page."),
        priority="medium", category="indexing", sql=_missing_sql("required"),
    ),
    Check(
        id="structured-data/missing-recommended",
        title="Structured data lacks recommended properties",
        explanation=(
            "An item of a rich-result type (Article, Product, Organization, Event, Recipe, "
            "VideoObject) lacks a property its rich result recommends: the result shows less "
            "(no image, no date, no author) or does not stand out."),
        fix=(
            f"Add the properties the message names where the page has them. {_GOOGLE} "
            "recommended properties."),
        priority="low", category="indexing", sql=_missing_sql("recommended"),
    ),
)
