"""The page facts :func:`nitpicker.policy.extract.extract` returns: metadata, links, images,
sub-resources, JSON-LD blocks (plain slotted dataclasses, the URLs raw as the markup wrote them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nitpicker.policy.extract.json_ld import JsonLdBlock

if TYPE_CHECKING:
    from nitpicker.policy.extract.content import PageText

__all__ = ["AnchorRef", "Extracted", "ImageRef", "PageMeta", "ResourceRef"]


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
    charset: str = ""
    """The character encoding the markup declares, lower-case: the first ``<meta charset>``,
    or ``<meta http-equiv=content-type content="…; charset=…">``."""
    h1_count: int = 0
    """How many ``<h1>`` elements the page has."""
    canonical_relative: bool = False
    """The canonical was written as a relative URL (set when it is resolved)."""
    hreflang: list[tuple[str, str]] = field(default_factory=list)
    """``(hreflang, href)`` of each ``<link rel=alternate hreflang>``, in document order (the
    href resolved with the other URL fields)."""


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
    json_ld: list[JsonLdBlock] = field(default_factory=list)
    """Every ``<script type="application/ld+json">``, in document order."""
    form_actions: list[str] = field(default_factory=list)
    """The ``action`` of each ``<form>`` (``""`` when absent: the form submits to the page)."""
    skeleton: frozenset[str] | None = None
    """The page's template skeleton (:mod:`nitpicker.policy.extract.skeleton`), when asked
    for (``extract(..., skeleton=True)``)."""
    content: PageText | None = None
    """The page's fragment targets and main content's text
    (:mod:`nitpicker.policy.extract.content`), when asked for (``extract(..., content=True)``)."""


