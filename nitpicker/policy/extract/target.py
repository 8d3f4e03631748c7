"""The page facts' reader: start, end and data events in, page facts out.

See :mod:`nitpicker.policy.extract` for the rules the values follow.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from nitpicker.policy.extract.content import ContentTarget
from nitpicker.policy.extract.facts import AnchorRef, Extracted, ImageRef, PageMeta, ResourceRef
from nitpicker.policy.extract.json_ld import JsonLdBlock, is_json_ld_type, read_json_ld
from nitpicker.policy.extract.skeleton import SkeletonTarget

__all__ = ["Target", "charset_of"]


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


_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?([^\s;"']+)""", re.IGNORECASE)
"""The ``charset`` of a ``Content-Type`` value (``text/html; charset="Shift_JIS"``)."""


def charset_of(content_type: str) -> str:
    """The ``charset`` parameter of a ``Content-Type`` value, lower-case; ``""`` without one."""
    found = _CHARSET_PARAM.search(content_type)
    return found.group(1).lower() if found else ""


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
# The target
# ------------------------------------------------------------------------------------------

_Handler = Callable[["_Target", dict[str, str]], None]
_EndHandler = Callable[["_Target"], None]


class _Target:
    """Receives start/end/data events (:func:`~nitpicker.policy.extract.tree.replay`), keeps
    only the page facts."""

    __slots__ = (
        "anchors",
        "base_href",
        "content",
        "data",
        "form_actions",
        "images",
        "json_ld",
        "json_ld_open",
        "layout",
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
        # A builtin bound method: the (very frequent) text events cost no Python frame.
        self.data: Callable[[str], None] = self.texts.append
        self.reset(None)

    def reset(self, max_anchors: int | None, skeleton: bool = False,
              content: bool = False) -> None:
        self.texts.clear()
        # the page's template skeleton, from the same events (None: not asked for)
        self.layout = SkeletonTarget() if skeleton else None
        # its fragment targets and main content (None: not asked for)
        self.content = ContentTarget(self.texts) if content else None
        self.meta = PageMeta()
        self.base_href = ""
        self.anchors: list[AnchorRef] = []
        self.images: list[ImageRef] = []
        self.resources: list[ResourceRef] = []
        self.json_ld: list[JsonLdBlock] = []
        self.form_actions: list[str] = []
        self.json_ld_open = False  # the open <script> is a JSON-LD block
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

    # -- events -----------------------------------------------------------------------------

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        layout = self.layout
        if layout is not None:
            layout.start(tag, attrib)
        content = self.content
        if content is not None:
            if tag == "a":  # many: only a named one is a fragment target, none is the main
                if "id" in attrib or "name" in attrib:
                    content.name(attrib)
            elif tag in content.watch or attrib and (content.seeking or "id" in attrib):
                content.start(tag, attrib)
        if tag == "a":  # the hot path (every page has many links): inlined
            stack = self.open_anchors
            href = attrib.get("href")
            if href is None or not self.room:
                stack.append(None)
                return
            self.room -= 1
            texts = self.texts
            if stack or content is not None:  # the main content reads the whole list
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
        layout = self.layout
        if layout is not None:
            layout.end(tag)
        content = self.content
        if content is not None and tag in content.watch:
            content.end(tag)
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
        layout = self.layout
        content = self.content
        return Extracted(self.meta, self.base_href, self.anchors, self.images, self.resources,
                         self.json_ld, self.form_actions,
                         None if layout is None else layout.close(),
                         None if content is None else content.close())

    # -- start handlers ---------------------------------------------------------------------

    def _start_h1(self, attrib: dict[str, str]) -> None:
        self.meta.h1_count += 1

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
        if "alternate" in tokens:
            if "alternate" not in seen:
                seen.add("alternate")
                self.meta.alternate = href
            lang = attrib.get("hreflang")
            if lang is not None and href:
                self.meta.hreflang.append((lang.strip(_ASCII_WS), href))
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

    def _start_form(self, attrib: dict[str, str]) -> None:
        self.form_actions.append(attrib.get("action", "").strip(_ASCII_WS))

    def _start_meta(self, attrib: dict[str, str]) -> None:
        content = attrib.get("content")
        seen = self.seen
        meta = self.meta
        if "charset" not in seen:
            declared = attrib.get("charset")
            if declared is None and content is not None and attrib.get(
                    "http-equiv", "").strip(_ASCII_WS).lower() == "content-type":
                declared = charset_of(content) or None
            if declared is not None and declared.strip(_ASCII_WS):
                seen.add("charset")
                meta.charset = declared.strip(_ASCII_WS).lower()
        if content is None:
            return
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
        kind = attrib.get("type")
        # Only a JSON-LD block is read (and parsed, when it closes): other pages pay one lookup.
        self.json_ld_open = kind is not None and is_json_ld_type(kind)
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
            if self.json_ld_open:
                self.json_ld_open = False
                self.json_ld.append(read_json_ld("".join(self.texts[mark:])))
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
    "h1": _Target._start_h1,
    "form": _Target._start_form,
}
_END: dict[str, _EndHandler] = {
    "title": _Target._end_title,
    "script": _Target._end_raw,
    "style": _Target._end_raw,
    "svg": _Target._end_svg,
    "picture": _Target._end_picture,
}


_end_title = _Target._end_title
Target = _Target
