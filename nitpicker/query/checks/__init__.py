"""The built-in site checks: small, named checks over the archive, one module a family.

Each check (:class:`~nitpicker.query.checks.model.Check`) has an id ``family/name``
(``links/broken-internal``), a title, an explanation (why it matters) and a fix, a default
priority (``critical``, ``high``, ``medium``, ``low``, ``info``), a category, and one SQL
query giving its findings. The checks live in the query library because a check *is* a
query: the SQL for reading an archive stays in :mod:`nitpicker.query`. Running them and
storing what they find is the archive layer's (:mod:`nitpicker.archive.check_store`:
``nitpicker check FILE``, and the end of every crawl).

To add a check: write it in its family's module (a new family: a new module, listed in
:data:`FAMILIES`), with a fixture page that trips it and one that does not
(``tests/test_checks.py``).
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks import (
    canonical,
    content,
    crawl,
    descriptions,
    headings,
    hreflang,
    images,
    indexing,
    links,
    performance,
    redirects,
    security,
    sitemaps,
    status,
    structured_data,
    titles,
)
from nitpicker.query.checks.model import CATEGORIES, PRIORITIES, Check

__all__ = ["CATEGORIES", "CHECKS", "FAMILIES", "PRIORITIES", "Check", "check_by_id"]

FAMILIES: Final = (links, redirects, status, canonical, titles, descriptions, headings,
                   indexing, hreflang, sitemaps, images, performance, security, crawl,
                   structured_data, content)
"""The families' modules, each with its ``CHECKS``."""

CHECKS: Final[tuple[Check, ...]] = tuple(check for family in FAMILIES for check in family.CHECKS)
"""Every built-in check, family by family."""

_BY_ID: Final = {check.id: check for check in CHECKS}
assert len(_BY_ID) == len(CHECKS), "two checks share an id"


def check_by_id(check_id: str) -> Check | None:
    """The built-in check ``check_id`` (``None``: no such check)."""
    return _BY_ID.get(check_id)
