"""Inventory seeds: URLs known from elsewhere (a CMS export, server logs), ``--inventory FILE``.

The file is UTF-8 text, one URL a line; blank lines and ``#`` comments are ignored. Its URLs
are read and validated once, when the crawl's config is built
(:func:`nitpicker.crawl.config_builder.new_config`), and seeded into the archive with the
roots when it is created (:meth:`nitpicker.crawl.session.CrawlSession.open`), as sitemap URLs
are: every listed URL is a page row marked ``pages.in_inventory = 1`` and the in-scope ones
are queued for a full crawl, so the pages that exist but that no page links to can be listed
(``nitpicker query FILE links --type orphaned``).

One URL listed in its ``http`` and ``https`` forms is one page, as any link is (the frontier
key has no scheme): in scope, the form of the root whose scope it is in is kept (a crawl of
``https://example.com/`` records ``https://example.com/a`` for a line ``http://example.com/a``),
out of scope the form listed first. :func:`plan_inventory` decides that, and counts what
the file brings for its audit record (``inventory_runs``).
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nitpicker.crawl.config import ConfigError, validate_url
from nitpicker.url_file import UrlFileError, read_url_lines

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from nitpicker.policy.urls import ParsedUrl

__all__ = ["InventoryFile", "InventorySeed", "plan_inventory", "read_inventory",
           "read_inventory_file"]

_PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class InventoryFile:
    """An inventory file as read: its URLs (normalised, each once), how many URL lines it
    has, and the sha256 of its bytes."""

    urls: tuple[str, ...]
    lines: int
    sha256: str


@dataclass
class InventorySeed:
    """What an inventory seeds into a new archive, and its counts (``inventory_runs``)."""

    by_depth: dict[int, list[tuple[str, bool]]] = field(default_factory=lambda: {0: [], 1: []})
    """depth (0: a root) → ``(url, is_external)`` to mark ``in_inventory`` (and queue, in scope)."""
    excluded: set[str] = field(default_factory=set)
    """Those ``--exclude`` or ``--exclude-url`` skip: rows, never queued."""
    urls: int = 0
    """Distinct URLs (one URL's http and https forms are one)."""
    new_pages: int = 0
    """In scope, not a root, not excluded: queued, their path naming an HTML page or none."""
    new_resources: int = 0
    """In scope, not a root, not excluded: queued, their path's extension naming another type
    of file (``.pdf``, ``.png``…): recorded from their headers."""
    scope_skipped: int = 0
    """Out of scope: rows, never fetched."""


def is_resource_path(path: str) -> bool:
    """Whether ``path`` names a file that is not an HTML page by its extension."""
    kind, _ = mimetypes.guess_type(path, strict=False)
    return kind is not None and kind not in _PAGE_TYPES


def plan_inventory(urls: Iterable[str], *, roots: Iterable[str],
                   policy_url: Callable[[str], ParsedUrl | None],
                   scope_scheme: Callable[[ParsedUrl], str | None],
                   excluded: Callable[[ParsedUrl], bool]) -> InventorySeed:
    """The inventory's URLs as the crawl seeds them. ``scope_scheme(url)`` is the scheme of
    the root whose scope ``url`` is in, ``None`` out of scope; ``excluded(url)`` whether
    ``--exclude`` or ``--exclude-url`` skip it."""
    seed = InventorySeed()
    root_set = set(roots)
    seen: set[str] = set()
    for raw in urls:
        parsed = policy_url(raw)
        if parsed is None or not parsed.is_http:
            continue
        scheme = scope_scheme(parsed)
        if scheme is not None and scheme != parsed.scheme:
            parsed = policy_url(scheme + parsed.url[len(parsed.scheme):]) or parsed
        if parsed.key in seen:
            continue  # the other scheme's form of a URL listed already
        seen.add(parsed.key)
        seed.urls += 1
        url = parsed.url
        root = url in root_set
        seed.by_depth[0 if root else 1].append((url, scheme is None))
        if scheme is None:
            seed.scope_skipped += 1
        elif excluded(parsed):
            seed.excluded.add(url)
        elif not root:
            if is_resource_path(parsed.path):
                seed.new_resources += 1
            else:
                seed.new_pages += 1
    return seed


def read_inventory(path: Path, *, disable_queries: bool = False) -> tuple[str, ...]:
    """The URLs of an inventory file, normalised, each once; ``ConfigError`` naming the file
    (and the line of a URL that is not one). Read within the bounds of
    :mod:`nitpicker.url_file`."""
    return read_inventory_file(path, disable_queries=disable_queries).urls


def read_inventory_file(path: Path, *, disable_queries: bool = False) -> InventoryFile:
    """An inventory file read and checked (:func:`read_inventory`), with its line count and
    digest."""
    try:
        entries = read_url_lines(path, "inventory file")
        digest = _sha256(path)
    except UrlFileError as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read inventory file: {path} ({exc.strerror})") from exc
    urls: dict[str, None] = {}
    for number, url in entries:
        try:
            urls[validate_url(url, disable_queries=disable_queries)] = None
        except ConfigError as exc:
            raise ConfigError(f"Inventory file {path}, line {number}: {exc}") from exc
    return InventoryFile(tuple(urls), len(entries), digest)


def _sha256(path: Path) -> str:
    """The digest of the file's bytes, read in blocks (the reader bounded its size)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
