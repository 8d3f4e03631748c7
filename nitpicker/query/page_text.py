"""The text of a page as a reader sees it, from its HTML snapshot, with where each run of it
stands in the snapshot: what ``grep --in text`` searches.

No parser tree: one regular expression walks the markup (tags, comments, and the elements
whose content is never shown as text: ``head``, ``script``, ``style``, ``template``,
``noscript``), the text between is unescaped and its whitespace collapsed to one space, a tag
that is not an inline element (``<p>``, ``<br>``, ``<td>``, ``<li>`` …) separates words, and
an inline one (``<b>``, ``<a>``, ``<span>`` …) does not: ``Hello <b>world</b>`` reads
``Hello world``, ``<td>a</td><td>b</td>`` reads ``a b``. Each line of a text run is one
:class:`Segment`, so a match maps back to its line of the snapshot exactly, and to its column
nearly (an entity or a collapsed space before it on its line shifts the column).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Final

__all__ = ["PageText", "page_text"]

_MARKUP: Final = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<(head|script|style|template|noscript)\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*>.*?(?:</\1\s*>|\Z)"
    r"|</?([a-zA-Z][^\s/>]*)(?:[^>\"']|\"[^\"]*\"|'[^']*')*>"
    r"|<[!?][^>]*>",
    re.DOTALL | re.IGNORECASE,
)
"""A comment; an element whose content is no text (group 1: its name); a start or end tag
(group 2: its name); a doctype or processing instruction."""

_INLINE: Final = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "label", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u",
    "var", "wbr",
})
"""Elements inside a run of text: their tags do not separate words."""

_SPACE: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class PageText:
    """A page's text and, per segment (a line of a text run), where it starts in the text and
    in the snapshot."""

    text: str
    text_starts: list[int] = field(default_factory=list)
    """Where each segment starts in ``text``, ascending."""
    html_starts: list[int] = field(default_factory=list)
    """Where the same segment starts in the snapshot."""

    def html_offset(self, text_offset: int) -> int:
        """The snapshot offset of ``text_offset`` (exact at a segment's start; within one, the
        distance from its start, which an entity or a collapsed space shortens)."""
        index = bisect_right(self.text_starts, text_offset) - 1
        if index < 0:
            return 0
        return self.html_starts[index] + text_offset - self.text_starts[index]


def page_text(source: str) -> PageText:
    """The text of ``source`` (a snapshot's HTML), its segments mapped back to it."""
    parts: list[str] = []
    text_starts: list[int] = []
    html_starts: list[int] = []
    length = 0
    pending_space = False  # a space owed before the next word (a separating tag, a blank)
    position = 0

    def add(raw: str, at: int) -> None:
        nonlocal length, pending_space
        for line_start, line in _lines(raw, at):
            words = _SPACE.sub(" ", html.unescape(line))
            if not words.strip():
                pending_space = pending_space or bool(words)
                continue
            if words[0] == " ":
                pending_space, words = True, words[1:]
                line_start += len(line) - len(line.lstrip())
            if pending_space and length:
                parts.append(" ")
                length += 1
            pending_space = words.endswith(" ")
            words = words.rstrip(" ")
            text_starts.append(length)
            html_starts.append(line_start)
            parts.append(words)
            length += len(words)

    for markup in _MARKUP.finditer(source):
        if markup.start() > position:
            add(source[position:markup.start()], position)
        tag = markup.group(2)
        if tag is None or tag.lower() not in _INLINE:
            pending_space = True
        position = markup.end()
    if position < len(source):
        add(source[position:], position)
    return PageText("".join(parts), text_starts, html_starts)


def _lines(raw: str, at: int) -> list[tuple[int, str]]:
    """``raw`` (found at offset ``at``) as ``(offset, line)`` pieces, each newline ending one
    (and kept on it, a space once collapsed)."""
    if "\n" not in raw:
        return [(at, raw)]
    pieces = []
    start = 0
    for line in raw.splitlines(keepends=True):
        pieces.append((at + start, line))
        start += len(line)
    return pieces
