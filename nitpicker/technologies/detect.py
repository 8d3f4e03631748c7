"""Which technologies one page uses: its evidence matched against the data set.

:class:`PageEvidence` is what the archive keeps of a page (its URL, response headers, HTML
snapshot and the scripts and other resources it loaded); :func:`page_facts` reads the
snapshot once into what the patterns look at (meta tags, script sources, inline scripts,
the text, the document for the CSS selectors); :func:`detect` runs every technology's
patterns over them and then follows the data set's rules: ``implies`` adds a technology,
``requires`` / ``requiresCategory`` keep one only beside another, ``excludes`` drops one.

What a snapshot cannot show is not looked for: the ``js`` patterns (a script's global
variables, read in a live page), ``css`` (stylesheet bodies, not kept), ``dns``, ``robots``
and ``certIssuer`` (never fetched).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

import lxml.html
from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector

if TYPE_CHECKING:
    from collections.abc import Sequence

    from nitpicker.technologies.fingerprints import DataSet, DomPattern, Pattern

__all__ = ["Detection", "PageEvidence", "PageFacts", "detect", "page_facts"]

_EVIDENCE_NAMES: Final = {
    "url": "URL", "html": "HTML", "text": "page text", "scriptSrc": "script src",
    "scripts": "inline script", "xhr": "request", "headers": "header", "cookies": "cookie",
    "meta": "meta", "dom": "element",
}


@dataclass(frozen=True, slots=True)
class PageEvidence:
    """What the archive has of one page."""

    url: str
    html: str
    headers: Sequence[tuple[str, str]] = ()
    """Response headers (name, value), as received."""
    resources: Sequence[tuple[str, str]] = ()
    """(URL, kind) of what the page loaded: ``script``, ``stylesheet``, ``image`` …"""


@dataclass(slots=True)
class PageFacts:
    """A page read once for the patterns: texts by kind, named values by kind, the document."""

    texts: dict[str, list[str]]
    lowered: dict[str, str]
    """Each kind's texts joined and lower-cased: the required literals are looked for here."""
    named: dict[str, dict[str, list[str]]]
    document: etree._Element | None
    names: frozenset[str] = frozenset()
    """The document's element and attribute names, ids and classes, lower-cased."""
    values: str = ""
    """Its attribute values, lower-cased, one a line."""


@dataclass(slots=True)
class Detection:
    """One technology found on a page."""

    name: str
    version: str = ""
    confidence: int = 0
    evidence: str = ""
    """What matched first: ``meta generator``, ``script src``, ``header server``, ``implied by
    WordPress`` …"""


@dataclass(slots=True)
class _Found:
    detections: dict[str, Detection] = field(default_factory=dict)

    def add(self, name: str, pattern: Pattern, found: re.Match[str], evidence: str) -> None:
        detection = self.mark(name, evidence, pattern.confidence)
        version = pattern.version_of(found)
        if version and len(version) > len(detection.version):
            detection.version = version[:100]

    def mark(self, name: str, evidence: str, confidence: int = 100) -> Detection:
        detection = self.detections.setdefault(name, Detection(name, evidence=evidence))
        detection.confidence = min(100, detection.confidence + confidence)
        return detection


def page_facts(evidence: PageEvidence) -> PageFacts:
    """Read a page's snapshot and headers once into what the patterns look at."""
    document = _parse(evidence.html)
    meta: dict[str, list[str]] = {}
    script_srcs = [url for url, kind in evidence.resources if kind == "script"]
    inline: list[str] = []
    text = ""
    if document is not None:
        for element in document.iter("meta"):
            key = (element.get("name") or element.get("property") or "").lower()
            if key:
                meta.setdefault(key, []).append(element.get("content") or "")
        for element in document.iter("script"):
            src = element.get("src")
            if src:
                script_srcs.append(urljoin(evidence.url, src.strip()))
            elif element.text:
                inline.append(element.text)
        body = document.find("body")
        text = " ".join((body if body is not None else document).itertext())
    headers: dict[str, list[str]] = {}
    cookies: dict[str, list[str]] = {}
    for name, value in evidence.headers:
        headers.setdefault(name.lower(), []).append(value)
        if name.lower() == "set-cookie":
            cookie, _, rest = value.partition("=")
            cookies.setdefault(cookie.strip().lower(), []).append(rest.split(";", 1)[0])
    texts = {"url": [evidence.url], "html": [evidence.html], "text": [text],
             "scriptSrc": list(dict.fromkeys(script_srcs)), "scripts": inline,
             "xhr": [url for url, _ in evidence.resources]}
    lowered = {kind: "\n".join(values).lower() for kind, values in texts.items()}
    names, values = _markup(document)
    return PageFacts(texts, lowered, {"headers": headers, "cookies": cookies, "meta": meta},
                     document, names, values)


def _markup(document: etree._Element | None) -> tuple[frozenset[str], str]:
    """The names (elements, attributes, ids, classes) and attribute values of a document."""
    if document is None:
        return frozenset(), ""
    names: set[str] = set()
    values: list[str] = []
    for element in document.iter():
        if not isinstance(element.tag, str):
            continue  # a comment, a processing instruction
        names.add(element.tag.lower())
        for attribute, value in element.attrib.items():
            names.add(str(attribute).lower())
            values.append(value)
            if attribute == "class":
                names.update(value.lower().split())
            elif attribute == "id":
                names.add(value.lower().strip())
    return frozenset(names), "\n".join(values).lower()


def _parse(html: str) -> etree._Element | None:
    if not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None


def detect(data_set: DataSet, evidence: PageEvidence) -> list[Detection]:
    """The technologies ``evidence`` shows, by name."""
    facts = page_facts(evidence)
    found = _Found()
    for kind, patterns in data_set.texts.items():
        lowered, values = facts.lowered[kind], facts.texts[kind]
        for name, pattern in patterns:
            if pattern.literal and pattern.literal not in lowered:
                continue
            for value in values:
                match = pattern.regex.search(value)
                if match:
                    found.add(name, pattern, match, _EVIDENCE_NAMES[kind])
                    break
    for kind, named in facts.named.items():
        exact, prefixed = data_set.named[kind], data_set.prefixed[kind]
        for key, texts in named.items():
            candidates = [*exact.get(key, ()),
                          *((n, p) for prefix, n, p in prefixed if key.startswith(prefix))]
            for name, pattern in candidates:
                for value in texts:
                    match = pattern.regex.search(value)
                    if match:
                        found.add(name, pattern, match, f"{_EVIDENCE_NAMES[kind]} {key}")
                        break
    if facts.document is not None:
        for name, dom in data_set.dom:
            if dom.literals and not any(
                    text in facts.names if whole else text in facts.values
                    for text, whole in dom.literals):
                continue
            _match_dom(name, dom, facts.document, found)
    detections = found.detections
    _imply(data_set, detections)
    _apply_rules(data_set, detections)
    return sorted(detections.values(), key=lambda d: d.name.lower())


_SELECTORS: dict[str, CSSSelector | None] = {}
"""Each selector of the data set, compiled once (``None``: one lxml cannot read)."""


def _selector(selector: str) -> CSSSelector | None:
    if selector not in _SELECTORS:
        try:
            _SELECTORS[selector] = CSSSelector(selector)
        except (SelectorError, etree.XPathError, ValueError):
            _SELECTORS[selector] = None
    return _SELECTORS[selector]


def _match_dom(name: str, dom: DomPattern, document: etree._Element, found: _Found) -> None:
    selector = _selector(dom.selector)
    if selector is None:
        return
    try:
        elements = selector(document)
    except etree.XPathError:
        return
    for element in elements:
        if not dom.attributes and dom.text is None:
            found.mark(name, "element")
            return
        for attribute, pattern in dom.attributes:
            value = element.get(attribute)
            match = pattern.regex.search(value) if value is not None else None
            if match:
                found.add(name, pattern, match, f"element {attribute}")
                return
        if dom.text is not None:
            match = dom.text.regex.search(element.text_content() or "")
            if match:
                found.add(name, dom.text, match, "element text")
                return


def _imply(data_set: DataSet, detections: dict[str, Detection]) -> None:
    """Add what the detected technologies imply, and what those imply in turn."""
    pending = list(detections)
    while pending:
        technology = data_set.technologies.get(pending.pop())
        if technology is None:
            continue
        for implied, confidence in technology.implies:
            if implied not in detections and implied in data_set.technologies:
                detections[implied] = Detection(implied, "", confidence,
                                                f"implied by {technology.name}")
                pending.append(implied)


def _apply_rules(data_set: DataSet, detections: dict[str, Detection]) -> None:
    """Drop what another detected technology excludes, or whose requirement is missing."""
    for name in list(detections):
        technology = data_set.technologies.get(name)
        if technology is None:
            continue
        for excluded in technology.excludes:
            detections.pop(excluded, None)
    changed = True
    while changed:
        changed = False
        categories = {category for name in detections
                      for category in data_set.technologies[name].categories}
        for name in list(detections):
            technology = data_set.technologies[name]
            if (technology.requires and not any(r in detections for r in technology.requires)) \
                    or (technology.requires_category
                        and not any(c in categories for c in technology.requires_category)):
                del detections[name]
                changed = True
