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

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["read_inventory"]


def read_inventory(path: Path, *, disable_queries: bool = False) -> tuple[str, ...]:
    """The URLs of an inventory file, normalised, each once; ``ConfigError`` naming the file
    (and the line of a URL that is not one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read inventory file: {path} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Inventory file is not UTF-8 text: {path} (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start})"
        ) from exc
    urls: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        url = line.split("#", 1)[0].strip()
        if not url:
            continue
        try:
            urls[validate_url(url, disable_queries=disable_queries)] = None
        except ConfigError as exc:
            raise ConfigError(f"Inventory file {path}, line {number}: {exc}") from exc
    if not urls:
        raise ConfigError(f"No URLs found in inventory file: {path}")
    return tuple(urls)
