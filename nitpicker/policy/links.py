"""LinkResolver: hrefs found on a page, resolved and normalised, with a bounded cache.

Most links on a site are the same navigation links on every page, so the normalised form
of each absolute URL is cached (when the cache is full it starts afresh; memory stays flat).

A page resolves its hundred-odd hrefs against one base, so the base's parts (origin,
directory, path) are taken apart once and the common hrefs — absolute, root-relative,
protocol-relative, query-only and plain relative paths — are joined by string work;
``parse_url`` then removes dot segments and repeated slashes as a browser would. Anything
unusual (a scheme-like colon, a backslash, a control character, a non-HTTP base) goes
through ``urljoin``.

An href is read as a browser's URL parser reads it (WHATWG URL): C0 control characters and
spaces stripped from both ends, tabs and newlines removed anywhere, the scheme compared
without case. So ``JavaScript:void(0)``, ``java<TAB>script:…`` and ``  javascript:…`` are
``javascript:`` hrefs, never links, and ``  /page `` is ``/page``.
"""

from __future__ import annotations

from nitpicker.policy.urls import ParsedUrl, join_href, parse_url

__all__ = ["LinkResolver", "browser_href", "is_script_or_data"]

_SKIPPED_SCHEMES = ("javascript:", "data:")
_ABSOLUTE = ("http://", "https://")
_C0_CONTROL_OR_SPACE = "".join(map(chr, range(0x21)))


def browser_href(href: str) -> str:
    """``href`` as a browser's URL parser reads it: C0 control characters and spaces
    stripped from both ends, tabs and newlines (``\\t \\n \\r``) removed anywhere."""
    href = href.strip(_C0_CONTROL_OR_SPACE)
    if "\t" in href or "\n" in href or "\r" in href:
        href = href.replace("\t", "").replace("\n", "").replace("\r", "")
    return href


def is_script_or_data(href: str) -> bool:
    """Whether ``href`` (in its :func:`browser_href` form) is a ``javascript:`` or ``data:``
    URL, in any case."""
    return href[:1] in "jJdD" and href[:11].lower().startswith(_SKIPPED_SCHEMES)


def _odd(href: str) -> bool:
    """A scheme-like colon, a backslash or a control character: left to ``urljoin``."""
    return ":" in href or "\\" in href or "\t" in href or "\n" in href or "\r" in href


class _Base:
    """The parts of one base URL that string joins need."""

    __slots__ = ("directory", "origin", "path", "scheme", "url")

    def __init__(self, url: str) -> None:
        self.url = url
        scheme_end = url.find("://")
        self.scheme = url[:scheme_end].lower() if scheme_end > 0 else ""
        if self.scheme not in ("http", "https"):
            self.origin = self.directory = self.path = ""
            return
        start = scheme_end + 3
        end = len(url)
        for stop in ("#", "?"):
            found = url.find(stop, start, end)
            if found >= 0:
                end = found
        self.path = url[:end]  # without query and fragment
        slash = url.find("/", start, end)
        if slash < 0:
            self.origin = url[:end]
            self.directory = self.origin + "/"
            self.path = self.directory
        else:
            self.origin = url[:slash]
            self.directory = url[: url.rfind("/", slash, end) + 1]


class LinkResolver:
    """Resolves raw hrefs against a page URL into :class:`ParsedUrl` objects."""

    def __init__(self, *, disable_queries: bool = False, cache_size: int = 20_000) -> None:
        self.disable_queries = disable_queries
        self.cache_size = cache_size
        self._cache: dict[str, ParsedUrl | None] = {}
        self._base = _Base("")

    def absolute(self, base: str, href: str) -> str:
        """``href`` joined to ``base`` (not normalised yet)."""
        parts = self._base
        if parts.url != base:
            parts = self._base = _Base(base)
        if href.startswith(_ABSOLUTE):
            return href
        if not parts.origin or _odd(href):
            return join_href(base, href)
        first = href[0]
        if first == "/":
            if href.startswith("//"):
                return f"{parts.scheme}:{href}"
            return parts.origin + href
        if first == "?":
            return parts.path + href
        if first == "." or "/." in href:
            return self._dotted(parts, href)
        return parts.directory + href

    @staticmethod
    def _dotted(parts: _Base, href: str) -> str:
        """A relative href with leading ``./`` and ``../`` segments, joined without them.

        The cache is keyed by the joined string, so it must come out in the one form
        ``urljoin`` gives; dot segments anywhere else send the href through ``urljoin``.
        """
        directory = parts.directory
        root = len(parts.origin)  # the index of the path's first "/": never above it
        rest = href
        while True:
            if rest.startswith("../") or rest == "..":
                directory = directory[: directory.rfind("/", root, len(directory) - 1) + 1] or (
                    directory[: root + 1]
                )
                rest = rest[3:]
            elif rest.startswith("./") or rest == ".":
                rest = rest[2:]
            else:
                break
        if "/." in rest or rest.startswith("."):
            return join_href(parts.url, href)
        return directory + rest

    def resolve(self, base: str, href: str) -> ParsedUrl | None:
        """The normalised target of ``href`` on a page at ``base``; ``None`` when not a URL.

        Same-page fragments, ``javascript:`` and ``data:`` hrefs are not links to a URL.
        """
        if not href:
            return None
        if href[0] <= " " or href[-1] <= " " or "\t" in href or "\n" in href or "\r" in href:
            href = browser_href(href)
            if not href:
                return None
        if href[0] == "#" or (href[0] in "jJdD" and is_script_or_data(href)):
            return None
        absolute = self.absolute(base, href)
        cache = self._cache
        try:
            return cache[absolute]
        except KeyError:
            if len(cache) >= self.cache_size:
                cache.clear()  # start afresh: the site's navigation is back after one page
            parsed = cache[absolute] = parse_url(absolute, disable_queries=self.disable_queries)
            return parsed
