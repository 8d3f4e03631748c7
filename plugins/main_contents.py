"""``main-contents``: the page's main content and what it holds (SPEC §7.3,
``@nitpicker/analyze-main-contents``).

The main content is the first element, in document order, that matches any of
``mainContentSelector`` (the setting, if given), ``main``, ``[role="main"]``, ``#main``,
``.main``, ``#content``, ``.content``, ``#contents``, ``.contents``, ``#main-content``,
``.main-content``, ``#main_content``, ``.main_content``, ``#mainContent``, ``.mainContent``.

Cells: ``element`` (Main element: the tag with its id and classes, e.g. ``div#content``),
``words`` (Word count: the words of its visible text, :mod:`~nitpicker_plugins._main_elements`),
``wordCount`` (Characters: the characters of its text, whitespace removed; the original's
"Word count", under its key), ``headings``
(Heading count: ``h1``–``h6``), ``images`` (Image count: ``img``, ``input[type=image]``),
``table`` (Table count; its note one line per table, ``| rows | cols | thead | tfoot |
merged |`` with ``o``/``x`` for yes/no). The headings' and images' notes list them, and
:mod:`nitpicker_plugins._main_elements` adds the words, buttons, iframes, videos, audios and
canvases (issue 31). A page with no main element gets a row all the same (the original stored
none, SPEC §12 Q7): ``element`` empty with a note saying so, the counts 0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final

from lxml import etree
from nitpicker_plugins._main_elements import ELEMENT_HEADERS, element_values, no_element_values
from nitpicker_plugins._settings import SettingError
from nitpicker_plugins.search import compile_selector, parse_html

from nitpicker.analyze.plugin import Findings, PageValue, Snapshot

__all__ = ["DEFAULT_SELECTORS", "NAME", "MainContentsPlugin", "create", "describe",
           "table_summary"]

NAME: Final = "main-contents"

DEFAULT_SELECTORS: Final = (
    "main", '[role="main"]', "#main", ".main", "#content", ".content", "#contents", ".contents",
    "#main-content", ".main-content", "#main_content", ".main_content", "#mainContent",
    ".mainContent",
)

HEADERS: Final = {
    "element": "Main element",
    "words": "Word count",
    "wordCount": "Characters",
    "headings": "Heading count",
    "images": "Image count",
    "table": "Table count",
    **{key: title for key, title in ELEMENT_HEADERS.items() if key != "words"},
}
"""Header keys (stable: the stored values') and column titles. ``words`` is the Word count;
``wordCount``, the original's figure under the original's key, is its characters (issue 26:
a column is called what it counts)."""

_WHITESPACE: Final = re.compile(r"\s+")
_TABLES: Final = compile_selector("table", "tables")
TABLE_HEAD: Final = "| rows | cols | thead | tfoot | merged |"


def describe(element: etree._Element) -> str:
    """``tag#id.class1.class2``: which element was taken as the main content."""
    text = str(element.tag)
    if element.get("id"):
        text += f"#{element.get('id')}"
    for name in (element.get("class") or "").split():
        text += f".{name}"
    return text


def _span(cell: etree._Element, name: str) -> int:
    try:
        return max(1, int(cell.get(name) or 1))
    except ValueError:
        return 1


def table_summary(table: etree._Element) -> str:
    """One line: rows, columns (the widest row, colspans counted), thead, tfoot, merged."""
    rows = [row for row in table.iter("tr") if _own_table(row) is table]
    cols = 0
    merged = False
    for row in rows:
        cells = [cell for cell in row if cell.tag in ("td", "th")]
        cols = max(cols, sum(_span(cell, "colspan") for cell in cells))
        merged = merged or any(_span(cell, "colspan") > 1 or _span(cell, "rowspan") > 1
                               for cell in cells)
    has_head = any(child.tag == "thead" for child in table)
    has_foot = any(child.tag == "tfoot" for child in table)

    def mark(flag: bool) -> str:
        return "o" if flag else "x"

    return f"| {len(rows)} | {cols} | {mark(has_head)} | {mark(has_foot)} | {mark(merged)} |"


def _own_table(row: etree._Element) -> etree._Element | None:
    for ancestor in row.iterancestors("table"):
        return ancestor
    return None


class MainContentsPlugin:
    """Finds the main content element and counts its words, headings, images and tables."""

    label = "Main content"
    seconds_per_page = 0.01  # the estimate at the interactive choice
    version = "1.2"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = dict(HEADERS)
        first = settings.get("mainContentSelector")
        if first is not None and not isinstance(first, str):
            raise SettingError(f"{NAME}: setting 'mainContentSelector' must be a CSS selector "
                               f"(a string), got {first!r}", setting="mainContentSelector")
        self.selectors: tuple[str, ...] = ((first,) if first else ()) + DEFAULT_SELECTORS
        if first:  # named alone when it is bad
            compile_selector(first, "mainContentSelector", plugin=NAME)
        self._main = compile_selector(", ".join(self.selectors), "mainContentSelector",
                                      plugin=NAME)
        self.concurrency = max(1, min(4, os.cpu_count() or 1))

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def each_page(self, snapshot: Snapshot) -> Findings:
        root = parse_html(snapshot.html)
        found = self._main(root) if root is not None else []
        if not found:
            note = f"No main content element: nothing matches {', '.join(self.selectors)}"
            return Findings(values={
                "element": PageValue(None, note),
                "wordCount": PageValue(0), "headings": PageValue(0), "images": PageValue(0),
                "table": PageValue(0), **no_element_values(),
            })
        main = found[0]  # lxml returns the matches in document order
        tables = _TABLES(main)
        return Findings(values={
            "element": PageValue(describe(main)),
            "wordCount": PageValue(len(_WHITESPACE.sub("", main.text_content()))),
            "table": PageValue(len(tables), "\n".join([TABLE_HEAD, *map(table_summary, tables)])
                               if tables else None),
            **element_values(main),
        })


def create(settings: Mapping[str, Any]) -> MainContentsPlugin:
    """The entry point's factory (``nitpicker.analyze``: ``main-contents``)."""
    return MainContentsPlugin(settings)
