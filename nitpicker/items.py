"""The items the spider yields: one ``PageItem`` per fetched (or skipped, or failed) URL."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import IntEnum

from nitpicker.policy.extract import PageMeta

__all__ = ["MAX_URL_LENGTH", "FollowMode", "ImageRecord", "LinkRecord", "MissedPrediction", "PageItem", "Redirect", "ResourceRecord", "too_long_stand_in"]


class FollowMode(IntEnum):
    """What the crawl does with a discovered URL."""

    FULL = 0
    """In scope: fetch, extract, follow its links."""
    METADATA = 1
    """Fetch status, headers and the title from the first bytes; follow nothing."""
    STUB = 2
    """Recorded as a row, never fetched (``--no-fetch-external``, non-HTTP schemes)."""
    EXCLUDED = 3
    """Recorded as skipped (``--exclude``, ``--exclude-url``)."""
    CAPPED = 5
    """Found on a page of a capped trap signature (``--dedupe-cap``): a row, not queued."""
    INVALID = 4
    """A URL the archive cannot hold (longer than ``MAX_URL_LENGTH``): an error row, never
    fetched."""
    PREDICTED = 6
    """A page predicted ahead of a page's pager links (:mod:`nitpicker.policy.pagination`): a
    frontier row only, fetched like ``FULL``; recorded only when it answers as a page."""


MAX_URL_LENGTH = 8190
"""The longest URL recorded as it is (the original's ``string(8190)`` column)."""


def too_long_stand_in(url: str) -> str:
    """The row key of a URL longer than ``MAX_URL_LENGTH``: its start and a digest."""
    digest = hashlib.sha1(url.encode("utf-8")).hexdigest()[:16]
    return f"{url[:1000]}#too-long-{digest}"


@dataclass(slots=True)
class LinkRecord:
    """An anchor on a page, resolved and normalised."""

    url: str
    key: str
    hash: str
    text: str
    is_external: bool
    mode: FollowMode


@dataclass(slots=True)
class ImageRecord:
    src: str
    alt: str | None
    width: float | None = None
    height: float | None = None
    current_src: str = ""
    natural_width: int | None = None
    natural_height: int | None = None
    is_lazy: bool = False
    viewport_width: int | None = None
    source_code: str = ""


@dataclass(slots=True)
class ResourceRecord:
    """A sub-resource of a page: referenced in its markup, or loaded by the browser."""

    url: str
    kind: str
    is_external: bool
    status: int | None = None
    status_text: str | None = None
    content_type: str | None = None
    content_length: int | None = None
    compress: str | None = None
    cdn: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class Redirect:
    """One hop of a redirect chain that ended at the page."""

    url: str
    status: int


@dataclass(slots=True)
class PageItem:
    """Everything recorded about one URL the crawl dealt with."""

    url: str
    """Final URL (after redirects), normalised."""
    frontier_id: int | None
    depth: int
    is_external: bool
    is_target: bool
    status: int | None = None
    status_text: str = ""
    content_type: str | None = None
    content_length: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    meta: PageMeta = field(default_factory=PageMeta)
    redirects: list[Redirect] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    images: list[ImageRecord] = field(default_factory=list)
    resources: list[ResourceRecord] = field(default_factory=list)
    html: str | None = None
    """The HTML snapshot (in-scope HTML pages only)."""
    skip_reason: str | None = None
    links_capped: bool = False
    """More links than ``MAX_LINKS_PER_PAGE`` on the page: only that many were kept."""
    error: str | None = None
    """Fetch error text (DNS, refused, timeout, TLS, reset); status is then -1."""
    predictions: list[tuple[str, str]] = field(default_factory=list)
    """(frontier key, URL) of the pages predicted ahead of the page's pager links: queued as
    ``PREDICTED`` frontier rows, never page rows."""

    @property
    def is_skipped(self) -> bool:
        return self.skip_reason is not None


@dataclass(slots=True)
class MissedPrediction:
    """A predicted URL that did not answer as a page of its own (an error status, a network
    error, a redirect, a skip): nothing is recorded for it. Its frontier row goes, or, when a
    real link or a sitemap has reached the URL meanwhile, is queued again as a normal one."""

    url: str
    """The URL as predicted (the first of a redirect chain)."""
    frontier_id: int | None
    reason: str
    """Why it missed: the status, ``redirected``, ``skipped`` or the error."""
