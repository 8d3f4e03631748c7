"""A page's template skeleton: the layout its template gives it, without its own content.

The skeleton is the set of *structural paths* of the page's ``<body>``: for every element that
is part of the layout, the path of tokens from the body down to it, a token being the tag, its
``id`` and its sorted ``class`` names (``div#main.col.wide``), each run of digits written
``0`` (``post-1234`` and ``post-87`` are one token). An element is part of the layout when it is
a layout element (``div``, ``section``, ``header``, ``footer``, ``nav``, ``aside``, ``main``,
``article``, ``form``; its ``id`` is part of its token) or has a ``class``; a prose element
without one (``p``, ``ul``, ``h2``, ``table``, ``a`` …; an ``id`` alone is most often a
heading's anchor, ``h2#installing``) is the page's own content: it and everything inside it
are left out, and so are scripts, styles, SVG and code (``pre``, ``code``: a highlighted
block's classed ``span`` elements are the page's code, not its template). Digits are masked in
ids and classes, never in the tag (``h2`` stays ``h2``). Paths stop at :data:`MAX_DEPTH` tokens and the walk at :data:`MAX_ELEMENTS` elements, so a huge page
costs no more than a large one.

Pages of one template share most of their paths (header, navigation, the content area's
frame, the footer); two templates differ in their containers, and a container's class is in
every path below it. :mod:`nitpicker.policy.templates` groups pages by it.

:class:`SkeletonTarget` reads the parse events :func:`~nitpicker.policy.extract.tree.replay`
gives; a crawl gets a page's skeleton from the parse that extracts its facts.
"""

from __future__ import annotations

import re
import sys
from typing import Final

from lxml import etree

from nitpicker.policy.extract.tree import parse, replay

__all__ = ["MAX_DEPTH", "MAX_ELEMENTS", "SkeletonTarget", "skeleton"]

MAX_DEPTH: Final = 12
"""Tokens in a path at most: deeper elements are the content's, not the template's."""

MAX_ELEMENTS: Final = 20_000
"""Elements walked at most in a page."""

_LAYOUT: Final = frozenset({"div", "section", "header", "footer", "nav", "aside", "main",
                            "article", "form", "body"})
_LEFT_OUT: Final = frozenset({"script", "style", "template", "noscript", "svg", "math",
                              "head", "title", "meta", "link", "base", "pre", "code",
                              "textarea", "select", "iframe", "object"})
"""Never the layout, nor anything inside them: a highlighted code block's hundreds of classed
``span`` elements are one page's code, not its template."""
_VOID: Final = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                          "source", "track", "wbr", "param"})
_DIGITS = re.compile(r"\d+")


def _token(tag: str, attributes: dict[str, str]) -> str | None:
    """The element's token, or ``None`` when it is content (a prose element without a class:
    an ``id`` alone does not make one layout, it is most often a heading's anchor slug)."""
    classes = attributes.get("class", "").split()
    layout = tag in _LAYOUT
    if not layout and not classes:
        return None
    ident = attributes.get("id", "").strip() if layout else ""
    named = (f"#{ident}" if ident else "") + "".join(f".{c}" for c in sorted(set(classes)))
    return tag + _DIGITS.sub("0", named)


class SkeletonTarget:
    """The parse events' reader: a stack of open elements, the paths of the layout ones.

    :func:`skeleton` parses with it alone; the crawl's extraction
    (:func:`nitpicker.policy.extract.extract` with ``skeleton=True``) passes it the events of
    its own parse of the same bytes, so a crawled page is not parsed a second time for it."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        # one entry per open element: its path, or None when it (or an ancestor) is skipped
        self.stack: list[str | None] = []
        self.in_body = False
        self.seen = 0

    def start(self, tag: object, attrib: dict[str, str]) -> None:
        if not isinstance(tag, str):  # a comment or processing instruction
            return
        name = tag.lower()
        if name in _VOID:
            return  # no end event to pair with a push; never layout anyway
        if not self.in_body:
            if name == "body":
                self.in_body = True
                self.stack.append("body")
            return
        parent = self.stack[-1] if self.stack else None
        path = None
        self.seen += 1
        if parent is not None and name not in _LEFT_OUT and self.seen <= MAX_ELEMENTS \
                and parent.count("/") < MAX_DEPTH - 1:
            token = _token(name, attrib)
            if token is not None:
                path = sys.intern(f"{parent}/{token}")
                self.paths.add(path)
        self.stack.append(path)

    def end(self, tag: object) -> None:
        if not isinstance(tag, str) or tag.lower() in _VOID or not self.in_body:
            return
        if self.stack:
            self.stack.pop()
        if not self.stack:
            self.in_body = False

    def data(self, data: str) -> None:
        pass

    def close(self) -> frozenset[str]:
        return frozenset(self.paths)


def skeleton(html: str | bytes) -> frozenset[str]:
    """The page's structural paths (empty for a page without a body or any layout)."""
    target = SkeletonTarget()
    # UTF-8, as the extraction reads a page and as the archive stores its snapshot (libxml2
    # would otherwise go by the page's own <meta charset>, which the text no longer is in).
    data = html.encode("utf-8") if isinstance(html, str) else html
    if not data.strip():
        return frozenset()
    try:
        root = parse(data)
    except etree.LxmlError:  # what libxml2 cannot read at all has no skeleton
        return frozenset()
    if root is not None:
        replay(root, target.start, target.end, target.data)
    return target.close()
