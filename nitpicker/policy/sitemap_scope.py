"""Which URLs a sitemap may list (the sitemaps.org protocol): those of its own scheme, host
and port, under its own directory; a sitemap named by a robots.txt may also list any URL of
that robots.txt's origin (cross-submission)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["outside_sitemap_scope"]


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def outside_sitemap_scope(sitemap_url: str, found_in: str | None, url: str) -> str:
    """Why ``url`` may not be listed by the sitemap at ``sitemap_url`` (named by ``found_in``,
    a robots.txt or an index; ``None``: a guess), or ``""`` when it may."""
    if found_in is not None and urlsplit(found_in).path == "/robots.txt" \
            and _origin(found_in) == _origin(url):
        return ""
    if _origin(sitemap_url) != _origin(url):
        return "not on its sitemap's scheme, host and port"
    directory = urlsplit(sitemap_url).path.rsplit("/", 1)[0] + "/"
    if not (urlsplit(url).path or "/").startswith(directory):
        return f"outside its sitemap's directory ({directory})"
    return ""
