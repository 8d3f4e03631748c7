"""The meta signature: when two pages count as "the same page" for trap detection (seed 003).

A CMS trap serves endless URLs (``/list/date/2024/``, ``/list/date/2025/``, …,
``/list?page=1.5e+32``, ``?session=<random>``) that all answer with one template: the same
title, description and Open Graph tags. The signature folds such pages into one value::

    sig = sha1(parent_path + "\\0" + title + "\\0" + description + "\\0" + og_title + "\\0" + og_url)

``parent_path`` is the URL's path with the query, the fragment and trailing slashes removed, then
its parent directory (seed 003 §1: "the path minus its last segment"):

=======================================  ===============
URL                                      parent path
=======================================  ===============
``https://host/list/date/2024/``         ``/list/date``
``https://host/list?page=1``             ``/``
``https://host/list/2024?p=5#top``       ``/list``
``https://host/``                        ``/``
=======================================  ===============

The query is never part of the signature, so query traps (``?page=N``, ``?session=X``) fold
into one signature; taking the parent directory folds path traps (``/date/{n}/``) as well.
Seed 003 §3's examples keep the last segment (``/list/2024?p=5`` → ``/list/2024``); that
reading never folds the path trap the seed starts from (every ``/date/{n}/`` would be its own
cluster), so the §1 definition ("minus the last segment") is used, with §3's normalisation.

Only pages with a title and at least one ``og:*`` value are signed (seed 003: pages with an empty
title or no Open Graph at all, such as external links, are never capped).

This module is the only definition: the crawl's trap cap and ``nitpicker query
duplicate-clusters`` both call it. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Protocol

from nitpicker.policy.urls import frontier_key, join_href, parse_url

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "OG_FIELDS",
    "SignatureMeta",
    "is_signable",
    "meta_signature",
    "og_url_points_elsewhere",
    "page_signature",
    "parent_path",
]

OG_FIELDS = ("og_type", "og_title", "og_site_name", "og_description", "og_url", "og_image")
"""The Open Graph fields of a page; a page with none of them is not signed."""

_SEPARATOR = "\0"


class SignatureMeta(Protocol):
    """The page metadata a signature reads (``nitpicker.policy.extract.PageMeta`` is one)."""

    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def og_type(self) -> str: ...
    @property
    def og_title(self) -> str: ...
    @property
    def og_site_name(self) -> str: ...
    @property
    def og_description(self) -> str: ...
    @property
    def og_url(self) -> str: ...
    @property
    def og_image(self) -> str: ...


def _path_of(url: str) -> str:
    """The path of ``url`` without scheme, authority, query or fragment."""
    scheme_end = url.find("://")
    rest = url[scheme_end + 3 :] if scheme_end >= 0 else url
    for stop in ("?", "#"):
        cut = rest.find(stop)
        if cut >= 0:
            rest = rest[:cut]
    if scheme_end >= 0:
        slash = rest.find("/")
        rest = rest[slash:] if slash >= 0 else ""
    return rest


def parent_path(url: str) -> str:
    """The parent directory of the URL's path: query, fragment and trailing slashes removed.

    >>> parent_path("https://host/list/date/2024/")
    '/list/date'
    >>> parent_path("https://host/list?page=1")
    '/'
    """
    path = _path_of(url).rstrip("/")
    cut = path.rfind("/")
    return (path[:cut].rstrip("/") or "/") if cut >= 0 else "/"


def meta_signature(url: str, title: str, description: str, og_title: str, og_url: str) -> str:
    """``sha1(parent_path NUL title NUL description NUL og:title NUL og:url)`` as hex."""
    text = _SEPARATOR.join((parent_path(url), title, description, og_title, og_url))
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def is_signable(title: str, og_values: Iterable[str]) -> bool:
    """Whether a page is signed at all: it has a title and at least one ``og:*`` value."""
    return bool(title) and any(og_values)


def page_signature(url: str, meta: SignatureMeta) -> str | None:
    """The signature of a page, or ``None`` when it is not signed (see :func:`is_signable`)."""
    og_values = (getattr(meta, name) for name in OG_FIELDS)
    if not is_signable(meta.title, og_values):
        return None
    return meta_signature(url, meta.title, meta.description, meta.og_title, meta.og_url)


def og_url_points_elsewhere(url: str, og_url: str) -> bool:
    """Whether ``og:url`` names another page than ``url`` (a trap signal, seed 003).

    ``og:url`` is resolved against the page and normalised; ``http`` and ``https`` forms are
    the same page. An empty ``og:url`` points nowhere, so it is not a signal.
    """
    if not og_url:
        return False
    resolved = parse_url(join_href(url, og_url))
    own = parse_url(url)
    if resolved is None or own is None:
        return True
    return frontier_key(resolved.url) != frontier_key(own.url)
