"""Click depth: each page's ``depth``, the fewest links from any root to it (issue 27, item 3).

While a crawl runs, a page's ``depth`` is the one it was queued at: one more than the page
where its link was found first (a redirect's target: its source's), a sitemap or inventory
URL 1, a predicted page one more than the page that predicted it. Which link is found first
depends on which page answered first, so those depths differ from run to run and are often
longer than the shortest path. When a crawl closes (and after ``merge``, ``concat``, ``split``:
whatever calls :meth:`~nitpicker.archive.writer.ArchiveWriter.finish` with ``order``), every
page's depth is computed again, breadth-first over the archive's real links:

- the roots (``info.roots``) are at depth 0;
- a page is one deeper than the shallowest page with an anchor to it (the ``anchors`` table:
  the links pages were found to carry, in scope or not);
- a redirect is not a click: a redirect source's destination (``redirect_dest_id``) is as deep
  as the source;
- a page no link reaches from a root — known from a sitemap or ``--inventory`` only, fetched
  because it was predicted, reached only through such a page — has ``depth`` NULL.

The result depends on the archive's rows only, so two crawls of an unchanged site agree. The
walk runs in SQLite, one statement a level (the ``anchors_page_id`` index), its pages in a
temporary table: memory does not grow with the archive.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3

__all__ = ["read_click_depths", "set_click_depths", "store_click_depths"]

_SEED: Final = ("INSERT OR IGNORE INTO temp.click_depth(page_id, depth)"
                " SELECT id, 0 FROM pages WHERE url IN (SELECT value FROM json_each(?))")
_REDIRECTED: Final = (
    "INSERT OR IGNORE INTO temp.click_depth(page_id, depth)"
    " SELECT p.redirect_dest_id, c.depth FROM temp.click_depth c JOIN pages p ON p.id = c.page_id"
    " WHERE c.depth = ? AND p.redirect_dest_id IS NOT NULL")
_LINKED: Final = (
    "INSERT OR IGNORE INTO temp.click_depth(page_id, depth)"
    " SELECT a.href_id, c.depth + 1 FROM temp.click_depth c JOIN anchors a ON a.page_id = c.page_id"
    " WHERE c.depth = ?")
_UNREACHED: Final = ("UPDATE pages SET depth = NULL WHERE depth IS NOT NULL"
                     " AND id NOT IN (SELECT page_id FROM temp.click_depth)")
_REACHED: Final = ("UPDATE pages SET depth = c.depth FROM temp.click_depth c"
                   " WHERE c.page_id = pages.id AND pages.depth IS NOT c.depth")
_UNREACHED_READ: Final = ("SELECT id, NULL FROM pages WHERE depth IS NOT NULL"
                          " AND id NOT IN (SELECT page_id FROM temp.click_depth)")
_REACHED_READ: Final = ("SELECT c.page_id, c.depth FROM temp.click_depth c"
                        " JOIN pages p ON p.id = c.page_id WHERE p.depth IS NOT c.depth")


def set_click_depths(conn: sqlite3.Connection) -> int:
    """Write every page's click depth (see the module's doc) in the open transaction; how many
    pages' depth changed."""
    _walk(conn)
    try:
        changed = max(conn.execute(_UNREACHED).rowcount, 0)
        changed += max(conn.execute(_REACHED).rowcount, 0)
    finally:
        conn.execute("DROP TABLE temp.click_depth")
    return changed


def read_click_depths(conn: sqlite3.Connection) -> list[tuple[int, int | None]]:
    """The ``(page id, click depth)`` of every page whose stored depth is not its click
    depth (``None``: no link reaches it), read without writing the archive: the same walk,
    in a temporary table, on any connection (a read-only one too: a crawl's close reads them
    in another process, :mod:`~nitpicker.archive.close_reader`, while it writes on)."""
    _walk(conn)
    try:
        return [*conn.execute(_UNREACHED_READ), *conn.execute(_REACHED_READ)]
    finally:
        conn.execute("DROP TABLE temp.click_depth")


def store_click_depths(conn: sqlite3.Connection, changes: list[tuple[int, int | None]]) -> int:
    """Write depths :func:`read_click_depths` read, in the open transaction; how many."""
    conn.executemany("UPDATE pages SET depth = ? WHERE id = ?",
                     [(depth, page_id) for page_id, depth in changes])
    return len(changes)


def _walk(conn: sqlite3.Connection) -> None:
    """``temp.click_depth``: each page a root's links reach and its click depth."""
    row = conn.execute("SELECT roots FROM info WHERE id = 1").fetchone()
    roots = json.loads(row[0]) if row is not None else []
    conn.execute("DROP TABLE IF EXISTS temp.click_depth")
    conn.execute("CREATE TEMP TABLE click_depth("
                 "page_id INTEGER PRIMARY KEY, depth INTEGER NOT NULL)")
    conn.execute("CREATE INDEX temp.click_depth_level ON click_depth(depth)")
    try:
        conn.execute(_SEED, (json.dumps(roots),))
        level = 0
        while True:
            while conn.execute(_REDIRECTED, (level,)).rowcount > 0:
                pass  # a chain of redirects: one hop a statement
            if conn.execute(_LINKED, (level,)).rowcount <= 0:
                break
            level += 1
    except BaseException:
        conn.execute("DROP TABLE temp.click_depth")
        raise
