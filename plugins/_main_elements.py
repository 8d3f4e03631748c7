"""What the main content holds, element by element (``main-contents``, issue 31).

The counts and the per-element rows :mod:`nitpicker_plugins.main_contents` adds to the
original's (word count, headings, images, tables):

- ``words``: the words of its visible text (``<script>``, ``<style>`` and ``<template>``
  left out). In space-separated scripts a word is a whitespace-separated token holding a
  letter or a digit (``—`` alone is none); Chinese characters and kana are written without
  spaces, so each counts as one word, as the original counts characters. An element that is
  not inline (``<p>``, ``<li>``, ``<br>``, …) separates words even with no space around it.
- ``buttons`` (``button``, ``input[type=button|submit|reset]``, ``[role=button]``),
  ``iframes``, ``videos``, ``audios``, ``canvases``: how many the main content has.
- The per-element rows go in the note of their count, as the table summaries do: one line a
  heading (``| level | text |``), an image (``| src | alt |``), a button (``| text |``), an
  iframe or a video (``| src | title | width | height |``). A ``|`` in a value is written
  ``\\|``; an absent ``alt`` is ``(none)``, an empty one ``""``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from nitpicker_plugins.search import compile_selector

from nitpicker.analyze.plugin import PageValue

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lxml import etree

__all__ = ["ELEMENT_HEADERS", "count_words", "element_values", "no_element_values",
           "visible_text"]

ELEMENT_HEADERS: Final = {
    "words": "Word count",
    "buttons": "Button count",
    "iframes": "Iframe count",
    "videos": "Video count",
    "audios": "Audio count",
    "canvases": "Canvas count",
}
"""The header keys and column titles these facts add, after the original's."""

_CJK: Final = re.compile(
    "[\u3005\u3007\u3041-\u3096\u309d\u309e\u30a1-\u30fa\u30fc-\u30fe\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f]")
"""Characters of scripts written without spaces between words: Han (the CJK unified
ideographs, their extensions and compatibility forms, ``々`` ``〇``), hiragana and katakana
(half-width too). Hangul is written with spaces: its words are tokens."""
_WORDLIKE: Final = re.compile(r"[^\W_]")
_SKIPPED: Final = frozenset({"script", "style", "template"})
_INLINE: Final = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "ins", "kbd", "mark", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strong",
    "sub", "sup", "time", "u", "var", "wbr",
})
_WHITESPACE: Final = re.compile(r"\s+")

_HEADINGS: Final = compile_selector("h1, h2, h3, h4, h5, h6", "headings")
_IMAGES: Final = compile_selector('img, input[type="image"]', "images")
_BUTTONS: Final = compile_selector(
    'button, input[type="button"], input[type="submit"], input[type="reset"], [role="button"]',
    "buttons")
_IFRAMES: Final = compile_selector("iframe", "iframes")
_VIDEOS: Final = compile_selector("video", "videos")
_AUDIOS: Final = compile_selector("audio", "audios")
_CANVASES: Final = compile_selector("canvas", "canvases")
_SOURCE: Final = compile_selector("source[src]", "videos")

_MEDIA_HEAD: Final = ("src", "title", "width", "height")


def visible_text(root: etree._Element) -> str:
    """The text under ``root``, without ``<script>``, ``<style>`` or ``<template>``; a space
    where an element that is not inline begins or ends. Walked without recursion (a deeply
    nested page must not exhaust the stack)."""
    parts: list[str] = [root.text or ""]
    stack: list[etree._Element | str] = list(reversed(root))
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
            continue
        if not isinstance(node.tag, str) or node.tag in _SKIPPED:  # a comment, a script, …
            parts.append(node.tail or "")
            continue
        edge = "" if node.tag in _INLINE else " "
        parts.append(edge + (node.text or ""))
        stack.append(edge + (node.tail or ""))
        stack.extend(reversed(node))
    return "".join(parts)


def count_words(text: str) -> int:
    """Words of ``text``: each Chinese character or kana, and each whitespace-separated
    token of the rest that holds a letter or a digit."""
    ideographic = len(_CJK.findall(text))
    tokens = _CJK.sub(" ", text).split()
    return ideographic + sum(1 for token in tokens if _WORDLIKE.search(token))


def _cell(value: str) -> str:
    return _WHITESPACE.sub(" ", value).strip().replace("|", "\\|")


def _note(head: Iterable[str], rows: list[tuple[str, ...]]) -> str | None:
    """A pipe table (the table summaries' form): its head line, then one line a row."""
    if not rows:
        return None
    return "\n".join(["| " + " | ".join(head) + " |",
                      *("| " + " | ".join(map(_cell, row)) + " |" for row in rows)])


def _button_text(button: etree._Element) -> str:
    """What a button says: its text, an ``<input>``'s value, else its ``aria-label`` or
    ``title``."""
    text = button.get("value", "") if button.tag == "input" else visible_text(button)
    return (text.strip() or button.get("aria-label", "").strip()
            or button.get("title", "").strip())


def _alt(image: etree._Element) -> str:
    alt = image.get("alt")
    if alt is None:
        return "(none)"
    return alt if alt.strip() else '""'


def _media(element: etree._Element) -> tuple[str, ...]:
    src = element.get("src", "")
    if not src and element.tag == "video":
        sources = _SOURCE(element)
        src = sources[0].get("src", "") if sources else ""
    return (src, *(element.get(name, "") for name in _MEDIA_HEAD[1:]))


def element_values(main: etree._Element) -> dict[str, PageValue]:
    """The cells these facts add for the main content ``main``; ``headings`` and ``images``
    replace the counts alone with counts whose notes list the elements."""
    headings = _HEADINGS(main)
    images = _IMAGES(main)
    buttons = _BUTTONS(main)
    iframes = _IFRAMES(main)
    videos = _VIDEOS(main)
    return {
        "headings": PageValue(len(headings), _note(
            ("level", "text"), [(str(h.tag)[1], visible_text(h)) for h in headings])),
        "images": PageValue(len(images), _note(
            ("src", "alt"), [(i.get("src", ""), _alt(i)) for i in images])),
        "words": PageValue(count_words(visible_text(main))),
        "buttons": PageValue(len(buttons), _note(("text",), [(_button_text(b),)
                                                            for b in buttons])),
        "iframes": PageValue(len(iframes), _note(_MEDIA_HEAD, [_media(f) for f in iframes])),
        "videos": PageValue(len(videos), _note(_MEDIA_HEAD, [_media(v) for v in videos])),
        "audios": PageValue(len(_AUDIOS(main))),
        "canvases": PageValue(len(_CANVASES(main))),
    }


def no_element_values() -> dict[str, PageValue]:
    """The cells of a page with no main content: every count 0."""
    return {key: PageValue(0) for key in ELEMENT_HEADERS}
