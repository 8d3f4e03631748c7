"""The Compare view: what ``nitpicker diff`` says changed between two archives of the viewer.

``/compare?old=<n>&new=<m>`` (two archives of the command line, by their index): every
category's count and its first rows; ``&category=<name>``: one category, a page of rows at a
time (``&page=``). The comparison is the query library's
(:func:`nitpicker.query.diff.compare_archives`): both archives attached read-only to a
connection of their own, for the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nitpicker.query.diff import (
    CATEGORIES,
    CATEGORY_NAMES,
    DiffInputError,
    compare_archives,
    summarise_diff,
)
from nitpicker.viewer.params import BadRequest, int_param
from nitpicker.viewer.views import page_number, window

if TYPE_CHECKING:
    from nitpicker.viewer.views import OpenArchive

__all__ = ["OVERVIEW_ROWS", "compare_view"]

OVERVIEW_ROWS = 10
"""Rows of each category on the overview (the category's own page has the rest)."""

DESCRIPTIONS = {category.name: category.description for category in CATEGORIES}

OLD_URL_FIELDS = frozenset({"old_url"})
"""Fields naming a URL of OLD (``pages_removed``: every URL is OLD's)."""
URL_FIELDS = frozenset({"url", "old_url", "source_url", "dest_url", "page_url", "first_url",
                        "last_url"})
"""Fields naming a page: linked to its page detail in the archive that has it."""


def _pair(archives: Sequence[OpenArchive], params: Mapping[str, str]) -> tuple[int, int]:
    last = len(archives) - 1
    if last < 1:
        raise BadRequest("Compare needs two archives: give nitpicker view two files or more")
    old = int_param(params, "old", 0, 0, last)
    new = int_param(params, "new", 1, 0, last)
    assert old is not None and new is not None  # defaults were given
    if old == new:
        raise BadRequest(f"Invalid new: {new}. OLD and NEW must be two different archives")
    return old, new


def compare_view(archives: Sequence[OpenArchive], params: Mapping[str, str]
                 ) -> tuple[str, dict[str, Any]]:
    """The diff of the archives ``old`` and ``new``: every category (its count and first
    rows), or one ``category``, paged."""
    old, new = _pair(archives, params)
    category = params.get("category", "").strip()
    if category and category not in CATEGORY_NAMES:
        raise BadRequest(f"Invalid category: {category[:80]!r}. "
                         f"Must be one of: {', '.join(CATEGORY_NAMES)}")
    number = page_number(params)
    limit, offset = window(number)
    context: dict[str, Any] = {"old": old, "new": new, "category": category, "page": number,
                               "descriptions": DESCRIPTIONS}
    try:
        diff = compare_archives(archives[old].path, archives[new].path)
    except DiffInputError as exc:
        raise BadRequest(str(exc)) from None
    with diff:
        if not category:
            result = summarise_diff(diff, limit=OVERVIEW_ROWS)
            return "compare.html", {**context, "diff": result}
        count = 0
        rows: list[dict[str, Any]] = []
        for item in diff.items(category):  # one pass: the page's rows kept, the rest counted
            if offset <= count < offset + limit:
                rows.append(item)
            count += 1
        sides = {"old": diff.old, "new": diff.new, "common_pages": diff.common_pages}
    items = {"items": rows, "total": count, "offset": offset, "limit": limit}
    return "compare.html", {**context, "diff": sides, "rows": items}

