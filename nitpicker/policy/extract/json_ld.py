"""JSON-LD blocks: what a ``<script type="application/ld+json">`` says, and whether it parses.

:func:`read_json_ld` turns the text of one block into a :class:`JsonLdBlock`: the block as
written, the ``@type`` values of its top-level entities, and the parse error of a block that is
not JSON-LD. The entities whose types count are the ones a search engine reads as items of the
page: the block's object, each member of a top-level array, and each member of an ``@graph``
(at any of those levels); a value nested inside an entity (an offer's ``@type`` inside a
product) is a property of that entity, not an item of the page. ``@type`` is a string or an
array of strings; types are kept as written (``Product``, ``schema:Product``,
``https://schema.org/Product``), each once per block, in the order first met.

A block that does not parse as JSON, parses to something else than an object or an array, is
empty, or nests deeper than Python's parser allows is recorded with an ``error`` (never
raised): a page with a broken block is a finding of the crawl, not a failure of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsonLdBlock", "is_json_ld_type", "read_json_ld"]

MEDIA_TYPE = "application/ld+json"


@dataclass(slots=True)
class JsonLdBlock:
    """One ``<script type="application/ld+json">`` of a page."""

    source: str
    """The block's text as written (whitespace at its ends stripped)."""
    types: list[str] = field(default_factory=list)
    """The ``@type`` values of its top-level entities (``[]`` for an invalid block)."""
    error: str | None = None
    """Why the block is not JSON-LD (``None`` when it is)."""
    entities: list[dict[str, Any]] = field(default_factory=list)
    """Its top-level entities that declare a ``@type``, as parsed, in document order (the
    structured data's items: :mod:`nitpicker.policy.extract.structured`)."""

    @property
    def is_valid(self) -> bool:
        return self.error is None


def is_json_ld_type(value: str) -> bool:
    """Whether a ``<script type>`` value names JSON-LD (case-insensitive, parameters allowed:
    ``application/ld+json; charset=utf-8``)."""
    return value.split(";", 1)[0].strip(" \t\n\r\f").lower() == MEDIA_TYPE


def _refuse_constant(name: str) -> Any:
    # Python's parser takes NaN and Infinity; JSON does not.
    raise ValueError(f"{name} is not JSON")


_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean",
          type(None): "null"}


def read_json_ld(text: str) -> JsonLdBlock:
    """The :class:`JsonLdBlock` of one block's text (never raises)."""
    source = text.strip(" \t\n\r\f")
    # The text is read as it is, as JSON.parse would: an HTML comment around the JSON (an old
    # habit for scripts) makes the block invalid.
    if not source:
        return JsonLdBlock(source, error="empty block")
    try:
        data = json.loads(source, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        return JsonLdBlock(source, error=f"{exc.msg} (line {exc.lineno}, column {exc.colno})")
    except ValueError as exc:  # a NaN / Infinity constant
        return JsonLdBlock(source, error=str(exc))
    except RecursionError:
        return JsonLdBlock(source, error="nested too deeply to read")
    if not isinstance(data, dict | list):
        return JsonLdBlock(source, error=f"not a JSON-LD object or array: {_KINDS[type(data)]}")
    types: list[str] = []
    entities: list[dict[str, Any]] = []
    _collect_types(data, types, set(), entities)
    return JsonLdBlock(source, types, entities=entities)


def _collect_types(data: Any, types: list[str], seen: set[str],
                   entities: list[dict[str, Any]]) -> None:
    """The ``@type`` values of ``data``'s top-level entities (arrays and ``@graph`` opened),
    and those entities."""
    pending = [data]
    while pending:
        node = pending.pop(0)
        if isinstance(node, list):
            pending[0:0] = node  # in document order, before what was pending
            continue
        if not isinstance(node, dict):
            continue
        declared = node.get("@type")
        if declared:
            entities.append(node)
        for value in declared if isinstance(declared, list) else (declared,):
            if isinstance(value, str) and value and value not in seen:
                seen.add(value)
                types.append(value)
        graph = node.get("@graph")
        if isinstance(graph, list | dict):
            pending[0:0] = graph if isinstance(graph, list) else [graph]
