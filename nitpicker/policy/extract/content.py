"""What a page's links can point at and what its main content says, from the extraction's parse.

:class:`ContentTarget` takes the start and end events of the extraction's streaming parse
(:func:`nitpicker.policy.extract.extract` with ``content=True``), as the template skeleton's
target does, and reads two facts without a tree:

- the page's **fragment targets**: every element's ``id`` and every ``<a name>``, what a link's
  ``#fragment`` scrolls to (``links/broken-fragment``). Over the rendered DOM's HTML when the
  browser rendered the page, so an id a script creates counts;
- its **main content**: the first element, in document order, that the ``main-contents``
  plugin would take (``main``, ``[role="main"]``, ``#main``, ``.main``, ``#content``, …: the
  same list; not a link), else the ``<body>``; its text is the text chunks the extraction collects between
  the element's start and end (script and style text never counts). The near-duplicate checks
  read it (:mod:`nitpicker.policy.minhash`).

The text chunks are the extraction target's own list, read by position: without the content,
the target clears the list when an outermost link opens (nothing before it is needed for the
links' texts); with it, the target keeps the whole page's chunks (a copy of them at each link
cost the parse about a tenth more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAIN_SELECTORS", "MAX_FRAGMENT_TARGETS", "ContentTarget", "PageText"]

MAIN_SELECTORS: Final = (
    "main", '[role="main"]', "#main", ".main", "#content", ".content", "#contents", ".contents",
    "#main-content", ".main-content", "#main_content", ".main_content", "#mainContent",
    ".mainContent",
)
"""The main content's selectors, as the ``main-contents`` plugin's defaults (the first element
matching any of them, in document order)."""

_MAIN_NAMES: Final = frozenset(selector[1:] for selector in MAIN_SELECTORS
                               if selector[0] in "#.")
"""The ids and class names of :data:`MAIN_SELECTORS` (the two lists are the same names)."""

MAX_FRAGMENT_TARGETS: Final = 5000
"""Ids and names kept at most per page (a page of generated ids stays small in the archive)."""

_BEFORE_MAIN: Final = frozenset({"main", "body"})
_VOID: Final = frozenset({"a", "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
                          "meta", "source", "track", "wbr", "param"})


@dataclass(slots=True)
class PageText:
    """A page's fragment targets and its main content's text."""

    ids: list[str] = field(default_factory=list)
    """Its elements' ids and ``<a name>`` values, in document order, each once."""
    main: str = ""
    """Where the main content was taken from: ``main``, ``div#content``, ``div.main``; ``""``:
    no element matched, the body's text is taken."""
    text: str = ""
    """The main content's text, as the document has it (whitespace not collapsed: the
    tokeniser reads words, :mod:`nitpicker.policy.minhash`; the archive signs it:
    :mod:`nitpicker.archive.content_signer`)."""


class ContentTarget:
    """The events' fragment targets and the main content's span of text chunks.

    The extraction calls :meth:`start` only for an element whose tag is in :attr:`watch`, that
    has an ``id``, or that has attributes while :attr:`seeking` the main content, and
    :meth:`end` only for a tag in :attr:`watch` (most elements cost one test, no call):
    before the main content, ``main`` and ``body``; inside it, its own tag (its nesting is
    counted to find its end); after it, none."""

    __slots__ = ("body", "depth", "ids", "main", "main_end", "main_start", "main_tag",
                 "seeking", "seen", "texts", "watch")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts  # the extraction's text chunks (the same list, kept whole)
        self.ids: list[str] = []
        self.seen: set[str] = set()
        self.main = ""
        self.main_tag = ""
        self.main_start = -1  # position of the main content's first chunk in the texts
        self.main_end = -1
        self.depth = 0  # open elements of the main content's tag, itself included
        self.body = -1  # position of the body's first chunk
        self.watch: frozenset[str] = _BEFORE_MAIN
        self.seeking = True
        """No main content element yet: any element with attributes may be it."""

    def _position(self) -> int:
        return len(self.texts)

    def name(self, attrib: dict[str, str]) -> None:
        """An ``<a>``'s id, else its ``name``: a fragment target (a link is never the main
        content, nor one of its nested tags)."""
        ident = attrib.get("id") or attrib.get("name")
        if ident and ident not in self.seen and len(self.ids) < MAX_FRAGMENT_TARGETS:
            self.seen.add(ident)
            self.ids.append(ident)

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        ident = attrib.get("id")
        if ident and ident not in self.seen and len(self.ids) < MAX_FRAGMENT_TARGETS:
            self.seen.add(ident)
            self.ids.append(ident)
        if self.depth:
            if tag == self.main_tag:
                self.depth += 1
        elif self.main_start < 0 and tag not in _VOID and self._is_main(tag, attrib):
            self.main = self._describe(tag, attrib)
            self.main_tag = tag
            self.main_start = self._position()
            self.seeking = False
            self.depth = 1
            self.watch = frozenset((tag,))
        elif tag == "body" and self.body < 0:
            self.body = self._position()

    def end(self, tag: str) -> None:
        if self.depth and tag == self.main_tag:
            self.depth -= 1
            if not self.depth:
                self.main_end = self._position()
                self.watch = frozenset()

    def close(self) -> PageText:
        texts = self.texts
        if self.main_start >= 0:
            end = self.main_end if self.main_end >= 0 else len(texts)
            chunks = texts[self.main_start:end]
        else:
            chunks = texts[max(self.body, 0):]
        return PageText(self.ids, self.main, "".join(chunks))

    @staticmethod
    def _is_main(tag: str, attrib: dict[str, str]) -> bool:
        if tag == "main" or attrib.get("role") == "main":
            return True
        if attrib.get("id") in _MAIN_NAMES:
            return True
        classes = attrib.get("class")
        return classes is not None and not _MAIN_NAMES.isdisjoint(classes.split())

    @staticmethod
    def _describe(tag: str, attrib: dict[str, str]) -> str:
        ident = attrib.get("id")
        if ident in _MAIN_NAMES:
            return f"{tag}#{ident}"
        for name in (attrib.get("class") or "").split():
            if name in _MAIN_NAMES:
                return f"{tag}.{name}"
        return tag
