"""The language of a page's prose, for the rule set textlint applies to it.

Declared first: the ``lang`` of the snapshot's ``<html>`` element, its primary subtag (``ja-JP``
→ ``ja``, ``en-GB`` → ``en``); a page that declares a language is that language, whatever its
text. Otherwise detected from the text (tags, scripts and styles left out): Japanese when kana
(hiragana, katakana) make at least :data:`KANA_SHARE` of its letters (kanji alone could be
Chinese), English when Latin letters make most of them; ``None`` when it is neither or has no
text.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["KANA_SHARE", "page_language"]

KANA_SHARE: Final = 0.05
"""The least share of kana among a page's letters for undeclared text to be Japanese."""

_HTML_TAG = re.compile(r"<html\b[^>]*>", re.IGNORECASE)
_LANG = re.compile(r"""\blang\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_HIDDEN = re.compile(r"<(script|style|template|noscript)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_KANA = re.compile(r"[\u3040-\u30ff\uff66-\uff9f]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_LETTER = re.compile(r"[^\W\d_]")

_SCAN: Final = 200_000
"""Characters of text read to detect the language (a long page says it early)."""


def declared_language(html: str) -> str | None:
    """The primary subtag of ``<html lang>``, lower-cased; ``None`` when not declared."""
    tag = _HTML_TAG.search(html, 0, 100_000)
    if tag is None:
        return None
    found = _LANG.search(tag.group(0))
    if found is None:
        return None
    value = next(group for group in found.groups() if group is not None).strip()
    primary = value.split("-", 1)[0].split("_", 1)[0].lower()
    return primary or None


def detected_language(html: str) -> str | None:
    """``ja`` or ``en`` from the text, else ``None``."""
    text = _TAG.sub(" ", _HIDDEN.sub(" ", html[:_SCAN * 2]))[:_SCAN]
    letters = len(_LETTER.findall(text))
    if not letters:
        return None
    if len(_KANA.findall(text)) >= KANA_SHARE * letters:
        return "ja"
    if len(_LATIN.findall(text)) > letters / 2:
        return "en"
    return None


def page_language(html: str) -> str | None:
    """The page's language: declared, else detected (see the module's docstring)."""
    return declared_language(html) or detected_language(html)
