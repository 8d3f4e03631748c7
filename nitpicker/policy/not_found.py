"""Titles that say a page is missing: ``content/not-found-title``, the weaker signal beside
the soft-404 probes (a page answering 200 whose title reads "Page not found").

The patterns are the phrases error pages use in English and Japanese, matched as whole words,
case-insensitively: "not found", "page not found", "404", "page does not exist", "page
cannot be found", "no longer available", "ページが見つかりません", "お探しのページ…見つかりません"
(and its variants), "ページは存在しません". "Lost and found" or "404 tips" in a longer title do
not match: a 404 must stand as the title or its own part ("404 | Site", "Error 404").
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["says_not_found"]

_NOT_FOUND: Final = re.compile(
    r"\bnot\s+found\b|\bpage\s+(?:does\s+not|doesn['’]t)\s+exist\b"
    r"|\bpage\s+(?:cannot|can['’]t|could\s+not|couldn['’]t)\s+be\s+found\b"
    r"|\bno\s+longer\s+available\b|(?:^|[|\-–—:]\s*|\berror\s+)404(?:\s*(?:$|[|\-–—:]))"
    r"|ページ(?:が|は)?見つかりません|ページ(?:は|が)存在しません|お探しの.{0,20}見つかりません",
    re.IGNORECASE)


def says_not_found(title: str | None) -> bool:
    """Whether ``title`` reads like a missing page's."""
    if not title:
        return False
    return _NOT_FOUND.search(title.strip()) is not None
