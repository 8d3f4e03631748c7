"""Search the stored HTML snapshots: ``nitpicker query FILE grep PATTERN``, MCP ``search_html``.

The snapshots are read one at a time from one cursor, in the order the crawl stored them
(``snapshots`` is keyed by page id: a scan of the table, no sort), each decompressed, searched
and dropped: memory holds one snapshot and one page of results, however many the archive
has. Every match is counted (``total``, as every paged list of the library), so a search
reads every snapshot the URL pattern keeps, whatever ``limit`` and ``offset`` say.

A pattern is literal text, or a regular expression written ``/like this/`` (Python's
:mod:`re` syntax). ``scope`` ``html`` searches the markup as stored; ``text`` the text a
reader sees (:mod:`nitpicker.query.page_text`: no tags, comments, scripts or styles; entities
decoded; spaces collapsed). A literal, case-sensitive search of the markup is made on the
bytes, and a snapshot without the text is never decoded.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import check_choice, check_paging, fetch_one
from nitpicker.query.page_text import page_text
from nitpicker.query.snapshot_encoding import decode

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["GREP_SCOPES", "GrepMatch", "GrepResult", "compile_pattern", "count_snapshots",
           "grep_snapshots"]

GREP_SCOPES: Final = ("html", "text")
"""What a search reads: the snapshot's markup, or the text a reader sees."""

SNIPPET_CONTEXT: Final = 60
"""Characters of context either side of a match in its snippet."""

MATCH_SHOWN: Final = 200
"""Most characters of the matched text returned with a match."""

PROGRESS_EVERY: Final = 128
"""Snapshots between two calls of the progress callback."""

_FILTER: Final = "(:url_pattern IS NULL OR p.url LIKE :url_pattern)"

_SNAPSHOTS: Final = f"""SELECT p.url, s.encoding, s.html FROM snapshots s
JOIN pages p ON p.id = s.page_id WHERE {_FILTER} ORDER BY s.page_id"""

_COUNT: Final = f"""SELECT count(*) FROM snapshots s JOIN pages p ON p.id = s.page_id
WHERE {_FILTER}"""


class GrepMatch(TypedDict):
    """One match in one snapshot."""

    url: str
    """The page's URL."""
    line: int
    """1-based line of the snapshot where the match starts."""
    column: int
    """1-based column (characters) of that line; with ``scope=text``, near it."""
    match: str
    """The matched text (its first 200 characters)."""
    snippet: str
    """The match with up to 60 characters either side on its line, whitespace collapsed;
    ``…`` marks a cut."""


class GrepResult(TypedDict):
    """One page of matches, in page (crawl) order then position, with the counts of the
    whole search."""

    items: list[GrepMatch]
    total: int
    """Every match in every snapshot searched."""
    offset: int
    limit: int
    pages_searched: int
    """Snapshots searched (those the URL pattern keeps)."""
    pages_matched: int
    """Snapshots with at least one match."""


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """``pattern`` as a regular expression: ``/…/`` is one, anything else literal text.
    ``ValueError`` naming the pattern for an empty one, a bad expression, or one that matches
    the empty string (it would match everywhere)."""
    if not pattern:
        raise ValueError("Invalid pattern: ''. Give the text to find, or /a regular expression/")
    source = pattern[1:-1] if _is_regex(pattern) else re.escape(pattern)
    try:
        compiled = re.compile(source, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ValueError(f"Invalid regular expression {pattern!r}: {exc}") from exc
    if compiled.search("") is not None:
        raise ValueError(f"Invalid pattern {pattern!r}: it matches the empty string")
    return compiled


def count_snapshots(conn: sqlite3.Connection, url_pattern: str | None = None) -> int:
    """How many snapshots a search with ``url_pattern`` (SQL LIKE) reads."""
    row = fetch_one(conn, _COUNT, {"url_pattern": url_pattern})
    return int(row[0]) if row else 0


def grep_snapshots(
    conn: sqlite3.Connection,
    pattern: str,
    *,
    ignore_case: bool = False,
    scope: str = "html",
    url_pattern: str | None = None,
    limit: int = 100,
    offset: int = 0,
    on_progress: Callable[[int], None] | None = None,
) -> GrepResult:
    """The matches of ``pattern`` in the snapshots (those whose page URL matches
    ``url_pattern``, SQL LIKE, when given), one page of them.

    ``on_progress(searched)`` is called every 128 snapshots and once at the end. ``ValueError``
    for a bad pattern, scope, limit or offset.
    """
    check_choice("scope", scope, GREP_SCOPES)
    check_paging(limit, offset)
    regex = compile_pattern(pattern, ignore_case=ignore_case)
    literal = None
    if scope == "html" and not ignore_case and not _is_regex(pattern):
        literal = pattern.encode("utf-8")
    items: list[GrepMatch] = []
    total = searched = matched = 0
    end = offset + limit
    for url, document in _documents(conn, url_pattern):
        searched += 1
        if on_progress is not None and searched % PROGRESS_EVERY == 0:
            on_progress(searched)
        if literal is not None:
            count = document.count(literal)
            if not count:
                continue
            if total + count <= offset or total >= end:
                total += count
                matched += 1
                continue
        found = _search(url, document, regex, scope, skip=offset - total, room=end - total,
                        items=items)
        if found:
            total += found
            matched += 1
    if on_progress is not None:
        on_progress(searched)
    return {"items": items, "total": total, "offset": offset, "limit": limit,
            "pages_searched": searched, "pages_matched": matched}


def _is_regex(pattern: str) -> bool:
    return len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/")


def _documents(conn: sqlite3.Connection, url_pattern: str | None) -> Iterator[tuple[str, bytes]]:
    """Each snapshot's page URL and UTF-8 bytes, one at a time."""
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        for url, encoding, blob in cursor.execute(_SNAPSHOTS, {"url_pattern": url_pattern}):
            yield url, decode(encoding, blob)
    finally:
        cursor.close()


def _search(url: str, document: bytes, regex: re.Pattern[str], scope: str, *, skip: int,
            room: int, items: list[GrepMatch]) -> int:
    """Count the matches in one snapshot; those past ``skip`` and within ``room`` (the
    window, counted from this snapshot's first match) become items."""
    source = document.decode("utf-8", errors="replace")
    text = page_text(source) if scope == "text" else None
    haystack = text.text if text is not None else source
    count = 0
    for found in regex.finditer(haystack):
        if skip <= count < room:
            start = text.html_offset(found.start()) if text is not None else found.start()
            items.append(_match(url, source, haystack, found, start))
        count += 1
    return count


def _match(url: str, source: str, haystack: str, found: re.Match[str], start: int) -> GrepMatch:
    line_start = source.rfind("\n", 0, start) + 1
    return {
        "url": url,
        "line": source.count("\n", 0, start) + 1,
        "column": start - line_start + 1,
        "match": found.group()[:MATCH_SHOWN],
        "snippet": _snippet(haystack, found.start(), found.end()),
    }


def _snippet(haystack: str, start: int, end: int) -> str:
    """The match and its context on its line (up to ``SNIPPET_CONTEXT`` characters either
    side), whitespace collapsed."""
    line_start = haystack.rfind("\n", 0, start) + 1
    line_end = haystack.find("\n", end)
    line_end = len(haystack) if line_end < 0 else line_end
    left = max(line_start, start - SNIPPET_CONTEXT)
    right = min(line_end, end + SNIPPET_CONTEXT)
    snippet = " ".join(haystack[left:right].split())
    return f"{'…' if left > line_start else ''}{snippet}{'…' if right < line_end else ''}"
