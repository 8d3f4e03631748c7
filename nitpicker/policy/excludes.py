"""Excludes: glob patterns on the pathname, URL prefixes, and keywords in the HTML (SPEC §3.7).

Globs follow micromatch: ``*`` does not cross ``/``, ``**`` does, braces expand
(``/blog/*.{html,php}``). A value may hold several comma-separated globs; commas inside
braces do not split. A path with percent-escapes (``/%E3%83%96…``, ``/page%5B1%5D``) matches
a glob written either way: encoded or decoded. URL prefixes are compared in the form URLs are
keyed in (host lower-cased, ``[ ] { } |`` and non-ASCII percent-encoded), however they are
written. Keywords are literal text, or ``/regex/flags`` with flags from ``gim``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from wcmatch import glob

from nitpicker.policy.urls import ParsedUrl, url_prefix_key

__all__ = [
    "DEFAULT_EXCLUDED_URLS",
    "Excludes",
    "keyword_pattern",
    "split_globs",
]

DEFAULT_EXCLUDED_URLS: tuple[str, ...] = (
    "https://social-plugins.line.me",
    "https://access.line.me",
    "https://lineit.line.me",
    "https://line.me",
    "https://plus.google.com",
    "https://twitter.com",
    "https://x.com",
    "https://www.facebook.com/share.php",
    "https://www.facebook.com/share/",
    "https://www.facebook.com/sharer/",
    "https://www.facebook.com/share_channel/",
    "https://www.google.com",
)

_GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE
_REGEX_KEYWORD = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)


def split_globs(value: str) -> list[str]:
    """Split ``a,b`` into globs, keeping commas inside ``{…}`` (``/x/*.{a,b},/y/*``)."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def keyword_pattern(keyword: str) -> re.Pattern[str]:
    """``/re/flags`` becomes that regex (flags ``g``, ``i``, ``m``); anything else a literal."""
    match = _REGEX_KEYWORD.match(keyword)
    if match is None:
        return re.compile(re.escape(keyword))
    source, flags = match.groups()
    unknown = set(flags) - set("gim")
    if unknown:
        raise ValueError(f"unsupported regex flag(s) {''.join(sorted(unknown))!r} in {keyword!r}")
    re_flags = 0
    if "i" in flags:
        re_flags |= re.IGNORECASE
    if "m" in flags:
        re_flags |= re.MULTILINE
    try:
        return re.compile(source, re_flags)
    except re.error as exc:
        raise ValueError(f"invalid regex in exclude keyword {keyword!r}: {exc}") from exc


@dataclass(frozen=True)
class Excludes:
    """The exclude rules of one crawl."""

    globs: tuple[str, ...] = ()
    url_prefixes: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    _prefix_keys: tuple[str, ...] = field(init=False, repr=False)
    _patterns: tuple[re.Pattern[str], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_prefix_keys", tuple(url_prefix_key(p) for p in self.url_prefixes))
        object.__setattr__(self, "_patterns", tuple(keyword_pattern(k) for k in self.keywords))

    def excludes_url(self, url: ParsedUrl) -> bool:
        """True when the pathname matches a glob or the URL starts with a prefix."""
        if self._prefix_keys and url.key.startswith(self._prefix_keys):
            return True
        if self.globs and url.is_http:
            path = url.path
            if glob.globmatch(path, self.globs, flags=_GLOB_FLAGS):
                return True
            return "%" in path and glob.globmatch(unquote(path), self.globs, flags=_GLOB_FLAGS)
        return False

    def matched_keyword(self, html: str) -> str | None:
        """The text of the first keyword match in ``html``, or ``None``."""
        for pattern in self._patterns:
            found = pattern.search(html)
            if found is not None:
                return found.group(0)
        return None
