"""Page facts from HTML with a streaming parser (no DOM tree).

:func:`extract` runs lxml's HTML parser (libxml2) with a *parser target*: libxml2 tokenises and
repairs the markup exactly as it would to build a tree, but instead of a tree it calls back into a
small Python object for every start tag, end tag and text chunk.  Nothing is kept but the facts a
crawl needs: the ``<head>`` metadata (:class:`PageMeta`), the ``<base href>``, every link
(:class:`AnchorRef`), every ``<img>`` (:class:`ImageRef`), every sub-resource URL
(:class:`ResourceRef`) and every JSON-LD block (:class:`JsonLdBlock`, parsed only when the page
has one: :mod:`nitpicker.policy.extract.json_ld`).

The values are those a browser's DOM would give (``querySelector`` and ``textContent``), so the
result agrees with a selector-based reading of the tree lxml would build for the same text:

* single-valued fields take the *first* element that carries the value attribute;
* tag and attribute names are case-insensitive (libxml2 lower-cases them), as are the
  ``name``/``property`` values of ``<meta>`` and the tokens of ``rel``;
* text is ``textContent`` with runs of whitespace collapsed to one space and the ends stripped;
  ``<script>``/``<style>`` text never counts, ``<img alt>`` inside a link counts as a word;
* URLs are returned raw (stripped of surrounding ASCII whitespace, never resolved);
  :func:`resolve_meta_urls` makes the metadata's URLs absolute (the crawl stores them so).

Text is collected cheaply: the target's ``data`` callback *is* ``list.append`` (a C builtin, so
the many text chunks of a page cost no Python frame); start/end handlers only remember positions
in that list, and the chunks of a link or of the title are joined once, when the element closes.

The input is text: Scrapy (through w3lib) has already decoded the body, by the HTTP charset, the
byte-order mark or the ``<meta charset>`` as a browser would, and the rendered snapshot is text
too.  So a ``<meta charset>`` in the text is ignored: it is fed to libxml2 as UTF-8.
"""

from __future__ import annotations

import threading
from typing import Any

from lxml import etree

from nitpicker.policy.extract.content import PageText
from nitpicker.policy.extract.facts import AnchorRef, Extracted, ImageRef, PageMeta, ResourceRef
from nitpicker.policy.extract.json_ld import JsonLdBlock, read_json_ld
from nitpicker.policy.extract.resolve import (
    META_URL_FIELDS,
    absolute_url,
    document_base,
    http_form_action,
    resolve_meta_urls,
)
from nitpicker.policy.extract.target import Target

__all__ = [
    "META_URL_FIELDS",
    "AnchorRef",
    "Extracted",
    "ImageRef",
    "JsonLdBlock",
    "PageMeta",
    "PageText",
    "ResourceRef",
    "absolute_url",
    "document_base",
    "extract",
    "http_form_action",
    "read_json_ld",
    "resolve_meta_urls",
]



# ------------------------------------------------------------------------------------------
# The parser (one per thread, reused: building one costs more than a small page)
# ------------------------------------------------------------------------------------------

_local = threading.local()


def _parser() -> tuple[Any, Target]:
    """The (parser, target) of this thread."""
    entry: tuple[Any, Target] | None = getattr(_local, "parser", None)
    if entry is None:
        target = Target()
        entry = (etree.HTMLParser(target=target, encoding="utf-8", huge_tree=True), target)
        _local.parser = entry
    return entry


def _empty() -> Extracted:
    return Extracted(PageMeta(), "", [], [], [])


def extract(html: str, *, max_anchors: int | None = None, skeleton: bool = False,
            content: bool = False) -> Extracted:
    """Read the page facts of one HTML document.

    ``html`` is the decoded text (Scrapy's ``response.text`` or the browser's snapshot).
    ``max_anchors`` caps the number of links collected (the rest of the page is still read for
    metadata, images and resources).  ``skeleton``: also the page's template skeleton, from
    the same parse (what :func:`~nitpicker.policy.extract.skeleton.skeleton` gives for the
    page's UTF-8 bytes). ``content``: also its fragment targets and main content's text
    (:class:`~nitpicker.policy.extract.content.PageText`). Never raises on malformed markup; an empty document gives an empty
    :class:`Extracted`.
    """
    if not isinstance(html, str):
        raise TypeError(f"extract() needs the decoded text (str), not {type(html).__name__}")
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: make them U+FFFD
        data = html.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()
    if not data or data.isspace():
        empty = _empty()
        if skeleton:
            empty.skeleton = frozenset()
        if content:
            empty.content = PageText()
        return empty
    parser, target = _parser()
    target.reset(max_anchors, skeleton, content)
    try:
        parser.feed(data)
        result: Extracted = parser.close()
    except etree.LxmlError:
        # libxml2 recovers from nearly everything; keep what was read, start afresh next time.
        _local.parser = None
        result = target.close()
    except BaseException:
        _local.parser = None
        raise
    finally:
        target.texts.clear()
    return result
