"""Console messages and uncaught exceptions of the rendered pages, each with its pages.

The rows of ``console_messages`` and ``page_console_messages`` (migration
``0010_console_messages``): a message many pages showed (a shared script's warning) is one
item, with the number of pages and a list of them. An archive written before that migration
has no such tables, and a read-only connection never creates them: it simply has no messages;
so has a crawl with ``--no-render`` (no browser, no console).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from nitpicker.query._common import (
    Paged,
    check_choice,
    check_paging,
    fetch_all,
    fetch_counted,
    find_page_id,
    has_tables,
    paged,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CONSOLE_LEVELS", "MAX_MESSAGE_PAGES", "ConsoleMessage", "list_console_messages"]

CONSOLE_LEVELS = ("error", "warning", "info", "log", "debug")
"""The levels, most severe first (DevTools' own, ``log`` between ``info`` and ``debug``)."""

MAX_MESSAGE_PAGES = 100
"""The most page URLs listed with one message (``page_count`` counts them all)."""


class ConsoleMessage(TypedDict):
    level: str
    """``error``, ``warning``, ``info``, ``log`` or ``debug``."""
    kind: str
    """``console`` (a ``console.*`` call) or ``exception`` (an uncaught error)."""
    text: str
    source_url: str | None
    """The script or page that wrote it (``None`` when the browser did not say)."""
    line: int | None
    """1-based (``None`` when unknown)."""
    column: int | None
    """1-based (``None`` when unknown)."""
    page_count: int
    """How many pages showed it."""
    occurrences: int
    """How many times, over all those pages."""
    pages: list[str]
    """The pages that showed it, by URL (at most ``MAX_MESSAGE_PAGES``)."""


_SEVERITY = "CASE m.level " + " ".join(
    f"WHEN '{level}' THEN {rank}" for rank, level in enumerate(CONSOLE_LEVELS)
) + f" ELSE {len(CONSOLE_LEVELS)} END"

_SHOWN = (
    "WITH shown AS (SELECT message_id, count(*) AS pages, sum(count) AS occurrences"
    " FROM page_console_messages GROUP BY message_id)"
)
_COLUMNS = (
    'm.id, m.level, m.kind, m.text, m.source_url, m.line, m."column", s.pages, s.occurrences'
)
_FILTER = "(:level IS NULL OR m.level = :level)"

_ALL_SQL = (
    f"{_SHOWN} SELECT {_COLUMNS}, count(*) OVER () FROM console_messages m"
    f" JOIN shown s ON s.message_id = m.id WHERE {_FILTER}"
    f" ORDER BY {_SEVERITY}, s.pages DESC, m.id LIMIT :limit OFFSET :offset"
)
_ALL_COUNT_SQL = (
    "SELECT count(*) FROM console_messages m WHERE m.id IN"
    f" (SELECT message_id FROM page_console_messages) AND {_FILTER}"
)
_PAGE_SQL = (
    f"{_SHOWN} SELECT {_COLUMNS}, count(*) OVER () FROM page_console_messages pm"
    " JOIN console_messages m ON m.id = pm.message_id JOIN shown s ON s.message_id = m.id"
    f" WHERE pm.page_id = :page_id AND {_FILTER} ORDER BY pm.position LIMIT :limit OFFSET :offset"
)
_PAGE_COUNT_SQL = (
    "SELECT count(*) FROM page_console_messages pm JOIN console_messages m"
    f" ON m.id = pm.message_id WHERE pm.page_id = :page_id AND {_FILTER}"
)
_PAGES_SQL = (
    "SELECT p.url FROM page_console_messages pm JOIN pages p ON p.id = pm.page_id"
    f" WHERE pm.message_id = ? ORDER BY p.url LIMIT {MAX_MESSAGE_PAGES}"
)


def list_console_messages(
    conn: sqlite3.Connection,
    *,
    level: str | None = None,
    url: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Paged[ConsoleMessage] | None:
    """Console messages and uncaught exceptions of the rendered pages, each once.

    Most severe first, then the most shared; with ``url``, the messages of that page in the
    order it showed them (``None`` when the archive has no such page). ``level`` is one of
    ``CONSOLE_LEVELS``.
    """
    check_paging(limit, offset)
    if level is not None:
        check_choice("level", level, CONSOLE_LEVELS)
    params: dict[str, Any] = {"level": level, "limit": limit, "offset": offset}
    sql, count_sql = _ALL_SQL, _ALL_COUNT_SQL
    if url is not None:
        found = find_page_id(conn, url)
        if found is None:
            return None
        params["page_id"] = found[0]
        sql, count_sql = _PAGE_SQL, _PAGE_COUNT_SQL
    if not has_tables(conn, "console_messages", "page_console_messages"):
        return paged([], 0, limit, offset)
    rows, total = fetch_counted(conn, sql, count_sql, params, offset)
    items: list[ConsoleMessage] = [
        {"level": level_, "kind": kind, "text": text, "source_url": source or None,
         "line": line or None, "column": column or None, "page_count": pages,
         "occurrences": occurrences,
         "pages": [r[0] for r in fetch_all(conn, _PAGES_SQL, (message_id,))]}
        for message_id, level_, kind, text, source, line, column, pages, occurrences in rows
    ]
    return paged(items, total, limit, offset)
