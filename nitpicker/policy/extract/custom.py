"""Custom extraction: ``--extract NAME=css:SELECTOR|xpath:EXPR|regex:PATTERN``.

A rule (:class:`ExtractRule`) names a value to read from every in-scope HTML page (the
rendered HTML when the page is rendered), and how:

- ``css:SELECTOR`` — the text of each element the selector matches (whitespace collapsed);
  parsel's ``::text`` and ``::attr(NAME)`` give a text node or an attribute instead
  (``price=css:.price::text``, ``image=css:meta[property='og:image']::attr(content)``);
- ``xpath:EXPR`` — the same for an XPath 1.0 expression; one that gives a string, a number or
  attributes gives them as they are (``count(//a)``, ``//link[@rel='next']/@href``);
- ``regex:PATTERN`` — each match in the page's HTML source: its first group when the pattern
  has one, else the whole match (Python's syntax; ``(?i)`` and the other inline flags work).

Each match is one value, in document order, its whitespace collapsed (a match that is only
whitespace is none), at most :data:`MAX_VALUES` a rule and page, each at most
:data:`MAX_VALUE_LENGTH` characters. :func:`parse_rule` checks a spec once, when the
crawl's options are read (:class:`ExtractError`, one line naming it); :func:`extract_values`
applies the rules to one page's HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["KINDS", "MAX_VALUES", "MAX_VALUE_LENGTH", "ExtractError", "ExtractRule",
           "compile_rules", "extract_values", "parse_rule", "rule_names"]

KINDS: Final = ("css", "xpath", "regex")
MAX_VALUES: Final = 100
"""Most values one rule keeps from one page (the first ones)."""
MAX_VALUE_LENGTH: Final = 2000
"""Characters a value keeps (the first ones)."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


class ExtractError(UserError, ValueError):
    """A rule that is not ``NAME=KIND:EXPRESSION`` or whose expression does not compile."""


@dataclass(frozen=True, slots=True)
class ExtractRule:
    """One ``--extract`` rule, its expression checked."""

    name: str
    kind: str
    """``css``, ``xpath`` or ``regex``."""
    expression: str
    xpath: str | None = None
    """The expression as XPath (a ``css`` rule's translated), ``None`` for ``regex``."""

    @property
    def spec(self) -> str:
        return f"{self.name}={self.kind}:{self.expression}"


def parse_rule(spec: str) -> ExtractRule:
    """The rule ``spec`` says; :class:`ExtractError` naming it and what is wrong."""
    name, equals, rest = spec.partition("=")
    name = name.strip()
    kind, colon, expression = rest.partition(":")
    kind = kind.strip().lower()
    if not equals or not colon or kind not in KINDS:
        raise ExtractError(f"{spec!r} is not NAME=css:SELECTOR, NAME=xpath:EXPR or "
                           "NAME=regex:PATTERN")
    if not _NAME.fullmatch(name):
        raise ExtractError(f"{spec!r}: the name {name!r} must be a letter or _ then letters, "
                           "digits, _, . or - (at most 64)")
    if not expression.strip():
        raise ExtractError(f"{spec!r}: the {kind} expression is empty")
    if kind == "regex":
        try:
            re.compile(expression)
        except re.error as exc:
            raise ExtractError(f"{spec!r}: invalid regular expression: {exc}") from exc
        return ExtractRule(name, kind, expression)
    xpath = _css_xpath(spec, expression) if kind == "css" else expression
    from lxml import etree

    try:
        etree.XPath(xpath)
    except etree.XPathSyntaxError as exc:
        raise ExtractError(f"{spec!r}: invalid XPath: {exc}") from exc
    return ExtractRule(name, kind, expression, xpath)


def _css_xpath(spec: str, selector: str) -> str:
    from cssselect.parser import SelectorError
    from parsel.csstranslator import css2xpath

    try:
        return str(css2xpath(selector))
    except (SelectorError, ValueError) as exc:
        raise ExtractError(f"{spec!r}: invalid CSS selector: {exc}") from exc


def rule_names(specs: Sequence[str]) -> list[str]:
    """The names of ``specs`` (checked: :func:`compile_rules`), in order."""
    return [rule.name for rule in compile_rules(tuple(specs))]


@lru_cache(maxsize=8)
def compile_rules(specs: tuple[str, ...]) -> tuple[ExtractRule, ...]:
    """The rules of ``specs`` (:class:`ExtractError` for a bad one, or a name given twice);
    compiled once a process."""
    rules = tuple(parse_rule(spec) for spec in specs)
    seen: set[str] = set()
    for rule in rules:
        if rule.name in seen:
            raise ExtractError(f"{rule.spec!r}: the name {rule.name!r} is given twice")
        seen.add(rule.name)
    return rules


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def extract_values(rules: Sequence[ExtractRule], html: str) -> list[tuple[str, str]]:
    """``(rule name, value)`` of every match of ``rules`` on a page's ``html``, rule by rule,
    each rule's matches in document order."""
    values: list[tuple[str, str]] = []
    tree = None
    for rule in rules:
        found: list[str] = []
        if rule.kind == "regex":
            for match in re.finditer(rule.expression, html):
                found.append(match.group(1) if match.re.groups else match.group(0))
                if len(found) >= MAX_VALUES:
                    break
        else:
            if tree is None:
                from parsel import Selector

                tree = Selector(text=html or "<html></html>", type="html")
            found = _xpath_values(tree, rule.xpath or rule.expression)
        cleaned = (" ".join((value or "").split())[:MAX_VALUE_LENGTH] for value in found)
        values += [(rule.name, value) for value in cleaned if value][:MAX_VALUES]
    return values


def _xpath_values(tree: Any, xpath: str) -> list[str]:
    from lxml import etree

    try:
        result = tree.root.xpath(xpath)
    except etree.XPathError:
        return []  # an expression that compiles but fails on this page (a bad function call)
    if not isinstance(result, list):
        return [_text(result)]
    found: list[str] = []
    for node in result[:MAX_VALUES * 4]:  # (room for the empty text nodes dropped)
        if isinstance(node, etree._Element):
            found.append("".join(node.itertext()))
        else:
            found.append(_text(node))
    return found
