"""What a site check is: a small, named, declarative record and one SQL query.

A check's ``sql`` is a ``SELECT`` over the archive (alias ``p`` for pages, as the rest of the
query library) giving one row per finding with four columns: ``page_id`` (the page the
finding is about; ``NULL`` when the URL is no page row), ``url``, ``element`` (what on the
page: a link's target, an image's ``src``; ``NULL`` for the page itself) and ``message``
(one line, in English, with the facts of this finding). Its values are named parameters,
``params`` (the thresholds); the checks' runner
(:mod:`nitpicker.archive.check_store`) inserts the rows into ``check_findings`` with the
check's id, priority, category and fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from nitpicker.query._common import INTERNAL_HTML

__all__ = ["CATEGORIES", "OK_PAGE", "PAGE", "PRIORITIES", "Check", "counted"]

PRIORITIES: Final = ("critical", "high", "medium", "low", "info")
"""The priorities, most urgent first: ``critical`` breaks the site for its users or for
search engines, ``high`` a defect on its pages to fix soon, ``medium`` worth fixing, ``low`` a
good practice missed, ``info`` a fact to know (not necessarily wrong)."""

CATEGORIES: Final = ("links", "indexing", "content", "accessibility", "performance", "security",
                     "crawl")
"""The site checks' categories. An analyzer's findings have their own (``accessibility`` for
axe, ``html`` for markuplint, ``text`` for textlint, ``performance`` for lighthouse, else the
plugin's name)."""

PAGE: Final = INTERNAL_HTML
"""Internal HTML pages (alias ``p``): fetched, in scope, HTML, not a redirect source."""

OK_PAGE: Final = f"{INTERNAL_HTML} AND p.status BETWEEN 200 AND 299"
"""Internal HTML pages that answered 2xx: the pages whose content is judged (a 404 page's
missing description is not a defect of its own)."""

def counted(number: str, noun: str) -> str:
    """SQL for ``number`` (an SQL expression) with ``noun`` (a constant), plural unless 1:
    ``'3 pages'``, ``'1 page'``."""
    return f"({number}) || ' {noun}' || CASE WHEN ({number}) = 1 THEN '' ELSE 's' END"


_ID: Final = re.compile(r"[a-z][a-z0-9-]*/[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class Check:
    """One site check: an id ``family/name``, what a user reads, and its query."""

    id: str
    title: str
    """What is wrong, as an issue's heading: "Broken internal links"."""
    explanation: str
    """One paragraph: why it matters."""
    fix: str
    """One paragraph: how to fix it."""
    priority: str
    """Its default priority, one of :data:`PRIORITIES`."""
    category: str
    """One of :data:`CATEGORIES`."""
    sql: str
    """``SELECT page_id, url, element, message …`` (see the module's docstring)."""
    params: Mapping[str, object] = field(default_factory=dict)
    """The query's named parameters (thresholds), with their values."""

    def __post_init__(self) -> None:
        assert _ID.fullmatch(self.id), self.id
        assert self.priority in PRIORITIES, (self.id, self.priority)
        assert self.category in CATEGORIES, (self.id, self.category)

    @property
    def family(self) -> str:
        return self.id.split("/", 1)[0]
