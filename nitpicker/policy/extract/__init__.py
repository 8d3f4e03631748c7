"""Page facts from HTML: libxml2's tree, read once by a small target object.

:func:`extract` has lxml's HTML parser (libxml2) build the page's tree in one call, then replays
its elements to a small Python object as parse events (:mod:`nitpicker.policy.extract.tree`
says why not a parser target): a start tag, an end tag, a text.  Nothing is kept but the facts a
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
from nitpicker.policy.extract.tree import parse, replay

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



_local = threading.local()


def _target() -> Target:
    """This thread's target (reused: it keeps its buffers)."""
    target: Target | None = getattr(_local, "target", None)
    if target is None:
        target = _local.target = Target()
    return target


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
    target = _target()
    target.reset(max_anchors, skeleton, content)
    try:
        root = parse(data)
        if root is not None:
            replay(root, target.start, target.end, target.data)
        return target.close()
    except etree.LxmlError:  # libxml2 recovers from nearly everything: nothing read
        target.reset(max_anchors, skeleton, content)
        return target.close()
    except BaseException:
        _local.target = None
        raise
    finally:
        target.texts.clear()
