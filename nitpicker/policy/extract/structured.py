"""Structured data: a page's JSON-LD, Microdata and RDFa items in one shape.

An **item** (:class:`StructuredItem`) is one top-level typed entity of the page: its syntax
(``json-ld``, ``microdata``, ``rdfa``), its type and its properties as a JSON object
(``{"@type": "Product", "name": "…", "offers": {…}}``). Type names and property names of
schema.org are shortened in all three (``https://schema.org/Product``, ``schema:Product`` and
``Product`` are all ``Product``); other vocabularies' IRIs are kept as written. An entity with
several types is stored under its first (all of them stay in its ``@type``).

- **JSON-LD** items are the typed top-level entities :func:`~nitpicker.policy.extract.json_ld.read_json_ld`
  found while parsing the block (no second parse).
- **Microdata** and **RDFa** are read with `extruct <https://github.com/scrapinghub/extruct>`_
  (its ``uniform`` output), and only on a page whose markup has an ``itemscope`` or a
  ``typeof`` attribute (:func:`embedded_syntaxes`: two substring searches; a page without
  either, nearly every page, costs nothing more). RDFa's graph is folded back into nested
  items: a node that another node refers to is that node's property, not an item of its own;
  a ``<meta property="og:…">`` without ``typeof`` makes no item. extruct (and the RDF
  libraries it brings) is imported the first time a page needs it.

What cannot be read is a :class:`MarkupProblem` (never raised): a Microdata ``itemtype``
that is not an absolute URL (the Microdata spec requires one, and consumers ignore the type),
or markup extruct cannot read at all. JSON-LD's own parse errors stay on its blocks
(``json_ld_blocks.error``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = [
    "MarkupProblem",
    "StructuredData",
    "StructuredItem",
    "embedded_syntaxes",
    "json_ld_items",
    "read_embedded",
    "schema_name",
]

_SCHEMA_PREFIXES: Final = ("https://schema.org/", "http://schema.org/", "https://www.schema.org/",
                           "http://www.schema.org/", "schema:")

_MAX_DEPTH: Final = 8
"""How deep RDFa's nodes are folded into their parents (a deeper one stays a reference)."""

_RDFA_NOISE: Final = frozenset({"http://www.w3.org/ns/rdfa#usesVocabulary"})


@dataclass(slots=True)
class StructuredItem:
    """One top-level typed entity of a page."""

    syntax: str
    """``json-ld``, ``microdata`` or ``rdfa``."""
    type: str
    """Its (first) type: a schema.org name (``Product``) or another vocabulary's IRI."""
    data: dict[str, Any]
    """Its properties by name, ``@type`` among them (a list when it has several)."""


@dataclass(slots=True)
class MarkupProblem:
    """Structured data of one syntax that could not be read."""

    syntax: str
    message: str


@dataclass(slots=True)
class StructuredData:
    """A page's items, then what could not be read."""

    items: list[StructuredItem] = field(default_factory=list)
    errors: list[MarkupProblem] = field(default_factory=list)


def schema_name(name: str) -> str:
    """A type or property name with schema.org's prefix taken off (``schema:name``,
    ``https://schema.org/name`` → ``name``); any other name as it is."""
    for prefix in _SCHEMA_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix):]
    return name


def _types(declared: Any) -> list[str]:
    values = declared if isinstance(declared, list) else [declared]
    return [schema_name(value) for value in values if isinstance(value, str) and value]


def _shorten(value: Any, depth: int = 0) -> Any:
    """``value`` with schema.org's prefix off every key and ``@type`` (JSON-LD, Microdata)."""
    if depth > _MAX_DEPTH * 4:
        return value
    if isinstance(value, list):
        return [_shorten(member, depth + 1) for member in value]
    if not isinstance(value, dict):
        return value
    shortened: dict[str, Any] = {}
    for key, member in value.items():
        if key == "@type":
            types = _types(member)
            shortened[key] = types[0] if len(types) == 1 else types
        else:
            shortened[schema_name(key)] = _shorten(member, depth + 1)
    return shortened


def _item(syntax: str, entity: dict[str, Any]) -> StructuredItem | None:
    data = _shorten(entity)
    types = _types(data.get("@type"))
    return StructuredItem(syntax, types[0], data) if types else None


def json_ld_items(entities: list[dict[str, Any]]) -> list[StructuredItem]:
    """The items of a page's JSON-LD entities (:attr:`JsonLdBlock.entities`)."""
    return [item for entity in entities if (item := _item("json-ld", entity)) is not None]


def embedded_syntaxes(html: str) -> tuple[str, ...]:
    """The syntaxes besides JSON-LD the page may hold: ``microdata`` when its markup has
    ``itemscope``, ``rdfa`` when it has ``typeof`` (attribute names as written in lower case,
    as nearly all are; a substring search, so a page that merely mentions them is read too)."""
    found = []
    if "itemscope" in html:
        found.append("microdata")
    if "typeof" in html:
        found.append("rdfa")
    return tuple(found)


def read_embedded(html: str, base_url: str, syntaxes: tuple[str, ...]) -> StructuredData:
    """The Microdata and RDFa items of ``html`` (``syntaxes``: of :func:`embedded_syntaxes`),
    with what could not be read. Never raises for the page's markup."""
    import extruct  # (slow to import: only a page with such markup needs it)

    found = StructuredData()
    for syntax in syntaxes:
        try:
            # Microdata as extruct reads it (each itemtype as written); RDFa in its uniform,
            # expanded JSON-LD form
            extracted = extruct.extract(html, base_url=base_url, syntaxes=[syntax],
                                        uniform=syntax == "rdfa", errors="strict")
        except Exception as exc:  # noqa: BLE001 -- extruct and its RDF parsers raise many kinds;
            # any of them means this syntax could not be read on this page: a finding, not a crash
            found.errors.append(MarkupProblem(syntax, f"could not be read: {exc}"[:500]))
            continue
        entities = extracted.get(syntax, [])
        if syntax == "microdata":
            _microdata(entities, found)
        else:
            _rdfa(entities, found)
    return found


def _microdata(entities: list[dict[str, Any]], found: StructuredData) -> None:
    for entity in entities:
        declared = entity.get("type")
        for value in declared if isinstance(declared, list) else [declared]:
            if isinstance(value, str) and value and not _absolute(value):
                found.errors.append(MarkupProblem(
                    "microdata", f"itemtype {value!r} is not an absolute URL"))
        item = _item("microdata", _microdata_entity(entity, 0))
        if item is not None:
            found.items.append(item)


def _microdata_entity(value: Any, depth: int) -> Any:
    """extruct's Microdata item (``{"type", "id", "properties"}``) as a JSON-LD-like object."""
    if isinstance(value, list):
        return [_microdata_entity(member, depth) for member in value]
    if not isinstance(value, dict) or "properties" not in value or depth > _MAX_DEPTH:
        return value
    entity: dict[str, Any] = {}
    if value.get("type"):
        entity["@type"] = value["type"]
    if value.get("id"):
        entity["@id"] = value["id"]
    properties = value["properties"]
    if isinstance(properties, dict):
        for key, member in properties.items():
            entity[key] = _microdata_entity(member, depth + 1)
    return entity


def _absolute(value: str) -> bool:
    parts = urlsplit(value)
    return bool(parts.scheme and (parts.netloc or parts.scheme not in ("http", "https")))


def _rdfa(nodes: list[dict[str, Any]], found: StructuredData) -> None:
    by_id = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    referenced = {value["@id"] for node in nodes for key, values in node.items()
                  if not key.startswith("@") and isinstance(values, list)
                  for value in values if isinstance(value, dict) and "@id" in value}
    for node in nodes:
        if node.get("@type") and node.get("@id") not in referenced:
            item = _item("rdfa", _fold(node, by_id, (), 0))
            if item is not None:
                found.items.append(item)


def _fold(node: dict[str, Any], by_id: dict[str, dict[str, Any]], path: tuple[str, ...],
          depth: int) -> dict[str, Any]:
    """An expanded RDFa node as a nested item: values unwrapped, referred nodes inlined."""
    folded: dict[str, Any] = {}
    node_id = node.get("@id")
    if isinstance(node_id, str) and not node_id.startswith("_:"):
        folded["@id"] = node_id
    if "@type" in node:
        folded["@type"] = node["@type"]
    inside = (*path, node_id) if isinstance(node_id, str) else path
    for key, values in node.items():
        if key.startswith("@") or key in _RDFA_NOISE:
            continue
        members = [_value(value, by_id, inside, depth)
                   for value in (values if isinstance(values, list) else [values])]
        folded[key] = members[0] if len(members) == 1 else members
    return folded


def _value(value: Any, by_id: dict[str, dict[str, Any]], path: tuple[str, ...],
           depth: int) -> Any:
    if not isinstance(value, dict):
        return value
    if "@value" in value:
        return value["@value"]
    if "@list" in value and isinstance(value["@list"], list):
        return [_value(member, by_id, path, depth) for member in value["@list"]]
    target_id = value.get("@id")
    target = by_id.get(target_id) if isinstance(target_id, str) else None
    if target is None or target_id in path or depth >= _MAX_DEPTH or not any(
            not key.startswith("@") for key in target):
        return target_id
    return _fold(target, by_id, path, depth + 1)
