"""``search``: keyword and selector hits on each page (SPEC §7.3, ``@nitpicker/analyze-search``).

Settings:

- ``keywords``: a list of strings or ``{"search": …, "title": …}`` tables. A string written
  ``/pattern/flags`` is a regular expression (flags ``i``, ``m``, ``s``; ``g``, ``u``, ``y``
  accepted and ignored), any other string is matched literally. Matches are counted in the
  text nodes (not inside ``<script>``, ``<style>``, ``<template>`` or comments) and in the
  attribute values, but ``href``, ``src``, ``srcset``, ``id``, ``class``, ``style``, ``d`` and
  ``data-*``.
- ``selectors``: the same shape, CSS selectors: a cell ``true`` when the page has a match.
- ``scope``: a CSS selector; only inside the first element it finds (default the whole page).
  A page without it gets no row.

Cells: ``keyword:<search>`` → the number of matches (0 included), titled ``Search keyword:
<title>``; ``selector:<search>`` → ``true`` (no cell when absent), titled ``Search selector:
<title>``. Unlike the original, a ``{search, title}`` item is searched by ``search`` and
titled by ``title`` (SPEC §12 Q8). No violations.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cssselect import SelectorError
from lxml import etree, html
from lxml.cssselect import CSSSelector
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import Findings, PageValue, Snapshot

__all__ = ["NAME", "DocumentTooDeepError", "SearchPlugin", "compile_selector", "create",
           "parse_html", "to_regex"]

NAME: Final = "search"

_SKIPPED_ELEMENTS: Final = frozenset({"script", "style", "template", "noscript"})
_SKIPPED_ATTRIBUTES: Final = frozenset({"href", "src", "srcset", "id", "class", "style", "d"})
_FLAGS: Final = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "u": 0, "y": 0}
_REGEX_LITERAL: Final = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)


def to_regex(term: str) -> re.Pattern[str]:
    """``/pattern/flags`` as a regular expression, anything else matched literally
    (the original's ``strToRegex``). Raises ``ValueError`` naming a bad one."""
    literal = _REGEX_LITERAL.match(term)
    if not literal:
        return re.compile(re.escape(term))
    pattern, flags = literal.groups()
    value = 0
    for flag in flags:
        if flag not in _FLAGS:
            raise ValueError(f"unknown regular expression flag {flag!r} in {term!r}")
        value |= _FLAGS[flag]
    try:
        return re.compile(pattern, value)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {term!r}: {exc}") from exc


def compile_selector(selector: str, setting: str, *, plugin: str = NAME) -> CSSSelector:
    """A CSS selector, or :class:`SettingError` (a ``ValueError``) naming the plugin, the
    setting it came from and the selector."""
    try:
        return CSSSelector(selector, translator="html")
    except SelectorError as exc:
        raise SettingError(f"{plugin}: setting {setting!r} has an invalid CSS selector "
                           f"{selector!r} ({exc})", setting=setting) from exc


class DocumentTooDeepError(ValueError):
    """The page nests elements deeper than libxml2 parses (2,048 levels with ``huge_tree``):
    what is deeper is not in the tree, so counting in it would be wrong in silence."""


_DEPTH_LIMIT: Final = re.compile(r"Excessive depth in document: (\d+)")

_parsers = threading.local()


def _parser() -> html.HTMLParser:
    """This thread's parser (an lxml parser is not to be shared between threads), with
    ``huge_tree``: libxml2's default stops at 255 levels of nesting and drops the rest of the
    page without an error, which real pages (generated layouts, broken markup that never closes
    a ``<div>``) reach."""
    parser: html.HTMLParser | None = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = html.HTMLParser(huge_tree=True)
    return parser


def parse_html(text: str) -> etree._Element | None:
    """The page's root element, or ``None`` for a snapshot with no markup at all;
    :class:`DocumentTooDeepError` when the page is nested deeper than the parser goes."""
    if not text.strip():
        return None
    parser = _parser()
    try:
        root = html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):  # nothing parsable (only a comment, …)
        return None
    for entry in parser.error_log:
        too_deep = _DEPTH_LIMIT.search(entry.message)
        if too_deep:
            raise DocumentTooDeepError(
                f"the page is nested deeper than {too_deep.group(1)} elements: what is deeper "
                "cannot be parsed")
    return root


@dataclass(frozen=True, slots=True)
class _Term:
    search: str
    title: str


def _terms(value: Any, setting: str) -> list[_Term]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence):
        raise SettingError(f"{NAME}: setting {setting!r} must be a list, got {value!r}",
                           setting=setting)
    terms = []
    for item in value:
        if isinstance(item, str) and item:
            terms.append(_Term(item, item))
        elif isinstance(item, Mapping) and isinstance(item.get("search"), str) and item["search"]:
            title = item.get("title")
            terms.append(_Term(item["search"], title if isinstance(title, str) and title
                               else item["search"]))
        else:
            raise SettingError(f"{NAME}: setting {setting!r}: each item must be a string or a "
                               f"table with 'search' (and 'title'), got {item!r}",
                               setting=setting)
    return terms


def _keyword(term: _Term) -> tuple[_Term, re.Pattern[str]]:
    try:
        return term, to_regex(term.search)
    except ValueError as exc:
        raise SettingError(f"{NAME}: setting 'keywords': {exc}", setting="keywords") from exc


def text_and_attributes(root: etree._Element) -> Iterator[str]:
    """The text nodes and the searched attribute values under ``root`` (included)."""
    for node in root.iter():
        if node is not root and node.tail:
            parent = node.getparent()
            if parent is None or parent.tag not in _SKIPPED_ELEMENTS:
                yield node.tail
        if not isinstance(node.tag, str):  # a comment or processing instruction
            continue
        if node.tag in _SKIPPED_ELEMENTS:
            continue
        if node.text:
            yield node.text
        for name, value in node.attrib.items():
            if name not in _SKIPPED_ATTRIBUTES and not name.startswith("data-"):
                yield value


class SearchPlugin:
    """Counts keyword matches and finds selectors on each page."""

    label = "Keyword search"
    seconds_per_page = 0.005  # the estimate at the interactive choice
    version = "1.1"  # 1.1: pages nested deeper than 255 levels are searched whole

    def __init__(self, settings: Mapping[str, Any]) -> None:
        scope = settings.get("scope")
        if scope is not None and not isinstance(scope, str):
            raise SettingError(f"{NAME}: setting 'scope' must be a CSS selector (a string), "
                               f"got {scope!r}", setting="scope")
        self._scope = compile_selector(scope, "scope") if scope else None
        self._keywords = [_keyword(term) for term in _terms(settings.get("keywords"), "keywords")]
        self._selectors = [(term, compile_selector(term.search, "selectors"))
                           for term in _terms(settings.get("selectors"), "selectors")]
        headers = {f"keyword:{term.search}": f"Search keyword: {term.title}"
                   for term, _ in self._keywords}
        headers.update({f"selector:{term.search}": f"Search selector: {term.title}"
                        for term, _ in self._selectors})
        self.headers: dict[str, str] = headers
        self.concurrency = max(1, min(4, os.cpu_count() or 1))

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def each_page(self, snapshot: Snapshot) -> Findings | None:
        if not self.headers:  # nothing to search for
            return None
        root = parse_html(snapshot.html)
        if root is None:
            return None
        if self._scope is not None:
            found = self._scope(root)
            if not found:
                return None
            root = found[0]
        values: dict[str, PageValue] = {}
        if self._keywords:
            texts = list(text_and_attributes(root))
            for term, regex in self._keywords:
                hits = sum(1 for text in texts for _ in regex.finditer(text))
                values[f"keyword:{term.search}"] = PageValue(hits)
        for term, selector in self._selectors:
            if selector(root):
                values[f"selector:{term.search}"] = PageValue(True)
        return Findings(values=values)


def create(settings: Mapping[str, Any]) -> SearchPlugin:
    """The entry point's factory (``nitpicker.analyze``: ``search``)."""
    return SearchPlugin(settings)
