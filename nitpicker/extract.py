"""Page facts from HTML with a streaming parser (no DOM tree).

:func:`extract` runs lxml's HTML parser (libxml2) with a *parser target*: libxml2 tokenises and
repairs the markup exactly as it would to build a tree, but instead of a tree it calls back into a
small Python object for every start tag, end tag and text chunk.  Nothing is kept but the facts a
crawl needs: the ``<head>`` metadata (:class:`PageMeta`), the ``<base href>``, every link
(:class:`AnchorRef`), every ``<img>`` (:class:`ImageRef`) and every sub-resource URL
(:class:`ResourceRef`).

The values are those a browser's DOM would give (``querySelector`` and ``textContent``), so the
result agrees with a selector-based reading of the tree lxml would build for the same text:

* single-valued fields take the *first* element that carries the value attribute;
* tag and attribute names are case-insensitive (libxml2 lower-cases them), as are the
  ``name``/``property`` values of ``<meta>`` and the tokens of ``rel``;
* text is ``textContent`` with runs of whitespace collapsed to one space and the ends stripped;
  ``<script>``/``<style>`` text never counts, ``<img alt>`` inside a link counts as a word;
* URLs are returned raw (stripped of surrounding ASCII whitespace, never resolved).

Text is collected cheaply: the target's ``data`` callback *is* ``list.append`` (a C builtin, so
the many text chunks of a page cost no Python frame); start/end handlers only remember positions
in that list, and the chunks of a link or of the title are joined once, when the element closes.

The input is text: Scrapy (through w3lib) has already decoded the body, by the HTTP charset, the
byte-order mark or the ``<meta charset>`` as a browser would, and the rendered snapshot is text
too.  So a ``<meta charset>`` in the text is ignored: it is fed to libxml2 as UTF-8.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

__all__ = [
    "AnchorRef",
    "Extracted",
    "ImageRef",
    "PageMeta",
    "ResourceRef",
    "extract",
]


# ------------------------------------------------------------------------------------------
# Public data
# ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class PageMeta:
    """Document-level metadata; every field is ``""``/``False`` when the page does not say."""

    title: str = ""
    lang: str = ""
    description: str = ""
    keywords: str = ""
    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False
    canonical: str = ""
    alternate: str = ""
    og_type: str = ""
    og_title: str = ""
    og_site_name: str = ""
    og_description: str = ""
    og_url: str = ""
    og_image: str = ""
    twitter_card: str = ""
    prev: str = ""
    """``link[rel~=prev]@href`` (a pager's previous page)."""
    next: str = ""
    """``link[rel~=next]@href`` (a pager's next page)."""


@dataclass(slots=True)
class AnchorRef:
    """An ``<a href>`` or ``<area href>``."""

    href: str  # the raw href attribute, whitespace-stripped (not resolved)
    text: str  # collapsed textContent (+ <img alt> words) for <a>; the alt attribute for <area>
    tag: str  # "a" or "area"


@dataclass(slots=True)
class ImageRef:
    """An ``<img>``; attribute values are raw, ``""`` when absent."""

    src: str  # src (stripped), or data-src when src is absent or empty
    alt: str | None
    """``None`` when the attribute is absent (``""`` is a decorative image)."""
    width: str
    height: str
    loading: str


@dataclass(slots=True)
class ResourceRef:
    """A sub-resource the page loads."""

    url: str  # raw attribute value, stripped
    kind: str  # "stylesheet" | "script" | "image" | "icon" | "media" | "preload" | "manifest"


@dataclass(slots=True)
class Extracted:
    """Everything :func:`extract` reads from one page."""

    meta: PageMeta
    base_href: str  # <base href> if present, else ""
    anchors: list[AnchorRef] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)
    resources: list[ResourceRef] = field(default_factory=list)


# ------------------------------------------------------------------------------------------
# Small helpers
# ------------------------------------------------------------------------------------------

_ASCII_WS = " \t\n\r\f"

# <meta name=...> / <meta property=...> (lower-cased, stripped) -> PageMeta field.
_META_NAME_FIELDS: dict[str, str] = {
    "description": "description",
    "keywords": "keywords",
    "twitter:card": "twitter_card",
}
_META_PROPERTY_FIELDS: dict[str, str] = {
    "og:type": "og_type",
    "og:title": "og_title",
    "og:site_name": "og_site_name",
    "og:description": "og_description",
    "og:url": "og_url",
    "og:image": "og_image",
    "twitter:card": "twitter_card",
}


def _collapse(text: str) -> str:
    """Collapse whitespace runs to one space and strip the ends."""
    return " ".join(text.split())


# One srcset candidate, after the leading whitespace/commas: the URL is the run of
# non-whitespace, minus trailing commas (which, when present, end the candidate).
_SRCSET_URL = re.compile(r"[\s,]*([^\s,]\S*?)(,*)(?=\s|$)")
# The descriptors that follow a URL: up to and including the next comma outside parentheses.
_SRCSET_DESCRIPTORS = re.compile(r"(?:[^,(]|\([^)]*\)?)*,?")


def _srcset_urls(value: str) -> list[str]:
    """The URLs of a ``srcset`` attribute (HTML's "parse a srcset attribute" algorithm)."""
    urls: list[str] = []
    pos = 0
    end = len(value)
    url_match = _SRCSET_URL.match
    desc_match = _SRCSET_DESCRIPTORS.match
    while pos < end:
        m = url_match(value, pos)
        if m is None:  # only whitespace and commas remain
            break
        urls.append(m.group(1))
        pos = m.end()
        if not m.group(2):
            d = desc_match(value, pos)
            if d is not None:  # always matches (possibly empty)
                pos = d.end()
    return urls


# ------------------------------------------------------------------------------------------
# The parser target
# ------------------------------------------------------------------------------------------

_Handler = Callable[["_Target", dict[str, str]], None]
_EndHandler = Callable[["_Target"], None]


class _Target:
    """lxml parser target: receives start/end/data events, keeps only the page facts."""

    __slots__ = (
        "anchors",
        "base_href",
        "data",
        "images",
        "meta",
        "open_anchors",
        "picture_depth",
        "raw_mark",
        "resources",
        "room",
        "seen",
        "svg_depth",
        "texts",
        "title_mark",
    )

    def __init__(self) -> None:
        self.texts: list[str] = []
        # lxml looks up ``target.data`` once, when the parser is built: a builtin bound method
        # makes the (very frequent) text events cost no Python frame.
        self.data: Callable[[str], None] = self.texts.append
        self.reset(None)

    def reset(self, max_anchors: int | None) -> None:
        self.texts.clear()
        self.meta = PageMeta()
        self.base_href = ""
        self.anchors: list[AnchorRef] = []
        self.images: list[ImageRef] = []
        self.resources: list[ResourceRef] = []
        # how many more links to collect
        self.room = sys.maxsize if max_anchors is None else max(0, max_anchors)
        # single-valued fields already set (first occurrence wins): "title", "lang", "base", ...
        self.seen: set[str] = set()
        # one entry per open <a>: (ref, index of its first text chunk), or None when not collected
        self.open_anchors: list[tuple[AnchorRef, int] | None] = []
        self.title_mark = -1  # index of the first text chunk of the open <title>, or -1
        self.raw_mark = -1  # index of the first text chunk of the open <script>/<style>, or -1
        self.svg_depth = 0
        self.picture_depth = 0

    # -- lxml callbacks ---------------------------------------------------------------------

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if tag == "a":  # the hot path (every page has many links): inlined
            stack = self.open_anchors
            href = attrib.get("href")
            if href is None or not self.room:
                stack.append(None)
                return
            self.room -= 1
            texts = self.texts
            if stack:
                mark = len(texts)
            else:
                texts.clear()  # nothing before an outermost link is needed any more
                mark = 0
            ref = AnchorRef(href.strip(" \t\n\r\f"), "", "a")
            self.anchors.append(ref)
            stack.append((ref, mark))
            return
        handler = _START.get(tag)
        if handler is not None:
            handler(self, attrib)

    def end(self, tag: str) -> None:
        if tag == "a":
            stack = self.open_anchors
            if stack:
                entry = stack.pop()
                if entry is not None:
                    ref, mark = entry
                    texts = self.texts
                    count = len(texts) - mark
                    if count == 1:
                        ref.text = " ".join(texts[mark].split())
                    elif count:
                        ref.text = " ".join("".join(texts[mark:]).split())
            return
        handler = _END.get(tag)
        if handler is not None:
            handler(self)

    def close(self) -> Extracted:
        # libxml2 closes every open element at the end of input; this is only a safety net.
        while self.open_anchors:
            self.end("a")
        if self.title_mark >= 0:
            _end_title(self)
        return Extracted(self.meta, self.base_href, self.anchors, self.images, self.resources)

    # -- start handlers ---------------------------------------------------------------------

    def _start_area(self, attrib: dict[str, str]) -> None:
        href = attrib.get("href")
        if href is None or not self.room:
            return
        self.room -= 1
        self.anchors.append(
            AnchorRef(href.strip(_ASCII_WS), _collapse(attrib.get("alt", "")), "area")
        )

    def _start_img(self, attrib: dict[str, str]) -> None:
        get = attrib.get
        alt = get("alt")
        src = get("src")
        if src is not None:
            src = src.strip(_ASCII_WS)
        self.images.append(
            ImageRef(
                src or get("data-src", "").strip(_ASCII_WS),
                alt,
                get("width", ""),
                get("height", ""),
                get("loading", ""),
            )
        )
        resources = self.resources
        if src:
            resources.append(ResourceRef(src, "image"))
        srcset = get("srcset")
        if srcset:
            for url in _srcset_urls(srcset):
                resources.append(ResourceRef(url, "image"))
        if alt and self.open_anchors:  # (None when absent)
            self.texts.append(f" {alt} ")

    def _start_link(self, attrib: dict[str, str]) -> None:
        rel = attrib.get("rel")
        href = attrib.get("href")
        if rel is None or href is None:
            return
        tokens = rel.lower().split()
        href = href.strip(_ASCII_WS)
        seen = self.seen
        if "canonical" in tokens and "canonical" not in seen:
            seen.add("canonical")
            self.meta.canonical = href
        if "alternate" in tokens and "alternate" not in seen:
            seen.add("alternate")
            self.meta.alternate = href
        for rel_name in ("prev", "next"):
            if rel_name in tokens and rel_name not in seen:
                seen.add(rel_name)
                setattr(self.meta, rel_name, href)
        if not href:
            return
        if "stylesheet" in tokens:
            kind = "stylesheet"
        elif any("icon" in token for token in tokens):
            kind = "icon"  # icon, shortcut icon, apple-touch-icon(-precomposed), mask-icon
        elif "preload" in tokens or "modulepreload" in tokens:
            kind = "preload"
        elif "manifest" in tokens:
            kind = "manifest"
        else:
            return
        self.resources.append(ResourceRef(href, kind))

    def _start_meta(self, attrib: dict[str, str]) -> None:
        content = attrib.get("content")
        if content is None:
            return
        seen = self.seen
        meta = self.meta
        name = attrib.get("name")
        if name is not None:
            key = name.strip(_ASCII_WS).lower()
            if key == "robots":
                for token in content.lower().replace(",", " ").split():
                    if token == "noindex":
                        meta.noindex = True
                    elif token == "nofollow":
                        meta.nofollow = True
                    elif token == "noarchive":
                        meta.noarchive = True
                    elif token == "none":
                        meta.noindex = meta.nofollow = True
            else:
                attr = _META_NAME_FIELDS.get(key)
                if attr is not None and attr not in seen:
                    seen.add(attr)
                    setattr(meta, attr, content.strip())
        prop = attrib.get("property")
        if prop is not None:
            attr = _META_PROPERTY_FIELDS.get(prop.strip(_ASCII_WS).lower())
            if attr is not None and attr not in seen:
                seen.add(attr)
                setattr(meta, attr, content.strip())

    def _start_script(self, attrib: dict[str, str]) -> None:
        src = attrib.get("src")
        if src is not None:
            src = src.strip(_ASCII_WS)
            if src:
                self.resources.append(ResourceRef(src, "script"))
        self.raw_mark = len(self.texts)

    def _start_style(self, attrib: dict[str, str]) -> None:
        self.raw_mark = len(self.texts)

    def _start_title(self, attrib: dict[str, str]) -> None:
        # document.title is the first <title> of the HTML namespace: not one inside an <svg>.
        if self.svg_depth == 0 and "title" not in self.seen:
            self.seen.add("title")
            self.title_mark = len(self.texts)

    def _start_html(self, attrib: dict[str, str]) -> None:
        if "lang" not in self.seen:
            self.seen.add("lang")
            self.meta.lang = attrib.get("lang", "").strip(_ASCII_WS)

    def _start_base(self, attrib: dict[str, str]) -> None:
        href = attrib.get("href")
        if href is not None and "base" not in self.seen:
            self.seen.add("base")
            self.base_href = href.strip(_ASCII_WS)

    def _start_source(self, attrib: dict[str, str]) -> None:
        kind = "image" if self.picture_depth else "media"
        src = attrib.get("src")
        if src is not None:
            src = src.strip(_ASCII_WS)
            if src:
                self.resources.append(ResourceRef(src, kind))
        srcset = attrib.get("srcset")
        if srcset:
            for url in _srcset_urls(srcset):
                self.resources.append(ResourceRef(url, kind))

    def _start_video(self, attrib: dict[str, str]) -> None:
        for name in ("src", "poster"):
            url = attrib.get(name)
            if url is not None:
                url = url.strip(_ASCII_WS)
                if url:
                    self.resources.append(ResourceRef(url, "media"))

    def _start_audio(self, attrib: dict[str, str]) -> None:
        url = attrib.get("src")
        if url is not None:
            url = url.strip(_ASCII_WS)
            if url:
                self.resources.append(ResourceRef(url, "media"))

    def _start_svg(self, attrib: dict[str, str]) -> None:
        self.svg_depth += 1

    def _start_picture(self, attrib: dict[str, str]) -> None:
        self.picture_depth += 1

    # -- end handlers -----------------------------------------------------------------------

    def _end_title(self) -> None:
        mark = self.title_mark
        if mark >= 0:
            self.title_mark = -1
            self.meta.title = _collapse("".join(self.texts[mark:]))

    def _end_raw(self) -> None:
        # <script>/<style> hold only text: drop it, so no link or title ever sees it.
        mark = self.raw_mark
        if mark >= 0:
            self.raw_mark = -1
            del self.texts[mark:]

    def _end_svg(self) -> None:
        if self.svg_depth:
            self.svg_depth -= 1

    def _end_picture(self) -> None:
        if self.picture_depth:
            self.picture_depth -= 1


_START: dict[str, _Handler] = {
    "area": _Target._start_area,
    "img": _Target._start_img,
    "link": _Target._start_link,
    "meta": _Target._start_meta,
    "script": _Target._start_script,
    "style": _Target._start_style,
    "title": _Target._start_title,
    "html": _Target._start_html,
    "base": _Target._start_base,
    "source": _Target._start_source,
    "video": _Target._start_video,
    "audio": _Target._start_audio,
    "svg": _Target._start_svg,
    "picture": _Target._start_picture,
}
_END: dict[str, _EndHandler] = {
    "title": _Target._end_title,
    "script": _Target._end_raw,
    "style": _Target._end_raw,
    "svg": _Target._end_svg,
    "picture": _Target._end_picture,
}
_end_title = _Target._end_title


# ------------------------------------------------------------------------------------------
# The parser (one per thread, reused: building one costs more than a small page)
# ------------------------------------------------------------------------------------------

_local = threading.local()


def _parser() -> tuple[Any, _Target]:
    """The (parser, target) of this thread."""
    entry: tuple[Any, _Target] | None = getattr(_local, "parser", None)
    if entry is None:
        target = _Target()
        entry = (etree.HTMLParser(target=target, encoding="utf-8", huge_tree=True), target)
        _local.parser = entry
    return entry


def _empty() -> Extracted:
    return Extracted(PageMeta(), "", [], [], [])


def extract(html: str, *, max_anchors: int | None = None) -> Extracted:
    """Read the page facts of one HTML document.

    ``html`` is the decoded text (Scrapy's ``response.text`` or the browser's snapshot).
    ``max_anchors`` caps the number of links collected (the rest of the page is still read for
    metadata, images and resources).  Never raises on malformed markup; an empty document gives
    an empty :class:`Extracted`.
    """
    if not isinstance(html, str):
        raise TypeError(f"extract() needs the decoded text (str), not {type(html).__name__}")
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: make them U+FFFD
        data = html.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()
    if not data or data.isspace():
        return _empty()
    parser, target = _parser()
    target.reset(max_anchors)
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
