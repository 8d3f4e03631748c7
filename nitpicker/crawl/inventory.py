"""Inventory seeds: URLs known from elsewhere (a CMS export, server logs), ``--inventory FILE``.

The file is UTF-8 text, one URL a line; blank lines and ``#`` comments are ignored. Its URLs
are read and validated once, when the crawl's config is built
(:func:`nitpicker.crawl.config_builder.new_config`), and seeded into the archive with the
roots when it is created (:meth:`nitpicker.crawl.session.CrawlSession.open`), as sitemap URLs
are: every listed URL is a page row marked ``pages.in_inventory = 1`` and the in-scope ones
are queued for a full crawl, so the pages that exist but that no page links to can be listed
(``nitpicker query FILE links --type orphaned``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.crawl.config import ConfigError, validate_url
from nitpicker.url_file import UrlFileError, read_url_lines

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["read_inventory"]


def read_inventory(path: Path, *, disable_queries: bool = False) -> tuple[str, ...]:
    """The URLs of an inventory file, normalised, each once; ``ConfigError`` naming the file
    (and the line of a URL that is not one). Read within the bounds of
    :mod:`nitpicker.url_file`."""
    try:
        entries = read_url_lines(path, "inventory file")
    except UrlFileError as exc:
        raise ConfigError(str(exc)) from exc
    urls: dict[str, None] = {}
    for number, url in entries:
        try:
            urls[validate_url(url, disable_queries=disable_queries)] = None
        except ConfigError as exc:
            raise ConfigError(f"Inventory file {path}, line {number}: {exc}") from exc
    return tuple(urls)
