"""A page parsed into libxml2's tree, its elements then replayed to a target as parse events.

Why not lxml's *parser target* (libxml2 calling the target back while it parses)? lxml parses
with the GIL released and takes it back for each callback: some thousand times a page. In a
crawl, another thread (the archive's) wants the GIL all the time, so each callback waited for
it, and the page cost the crawl's thread 2–3× its CPU time alone (0.6 ms a page alone, 1.9 ms
beside a thread writing SQLite rows; ``bench/README.md``, "Session 15"). Here libxml2 builds the
tree in one call with the GIL released (the other thread runs meanwhile), and the replay holds
the GIL throughout.

The events are those the parser target got, in the same order: ``start(tag, attrib)`` at an
element's start tag, ``data(text)`` for its text and for the text after it (its ``tail``),
``end(tag)`` at its end. The text comes in larger pieces (a target joins its pieces anyway).
Comments and processing instructions are not replayed (a target without ``comment``/``pi``
methods never got them), and ``attrib`` is lxml's read-only view of the attributes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from lxml import etree

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["parse", "replay"]

_local = threading.local()
_EVENTS = ("start", "end")


def _parser() -> Any:
    parser = getattr(_local, "parser", None)
    if parser is None:
        # UTF-8: the text is decoded already (a <meta charset> in it no longer applies).
        parser = etree.HTMLParser(encoding="utf-8", huge_tree=True, no_network=True,
                                  remove_comments=True, remove_pis=True)
        _local.parser = parser
    return parser


def parse(data: bytes) -> Any | None:
    """The root element of ``data`` (UTF-8 HTML), or ``None`` when libxml2 finds no element
    (nothing, blanks, a comment alone). libxml2 repairs the rest; lxml raises
    :class:`lxml.etree.LxmlError` for what it cannot read at all."""
    return etree.fromstring(data, _parser())


def replay(root: Any, start: Callable[[str, Any], None], end: Callable[[str], None],
           data: Callable[[str], None]) -> None:
    """Give the elements under ``root`` (itself included) to ``start``, ``data`` and ``end``."""
    for event, element in etree.iterwalk(root, events=_EVENTS):
        tag = element.tag
        if event == "start":
            if tag.__class__ is not str:  # an entity reference left in the tree: no element
                continue
            start(tag, element.attrib)
            text = element.text
        else:
            if tag.__class__ is str:
                end(tag)
            text = element.tail
        if text:
            data(text)
