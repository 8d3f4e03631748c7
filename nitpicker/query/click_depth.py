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
walk (:func:`walk_click_depths`) runs in SQLite, one statement a level (the ``anchors_page_id``
index), its pages in a temporary table: memory does not grow with the archive. It writes that
temporary table only, so it runs on a read-only connection too: :func:`read_click_depths` gives
the depths that differ from the stored ones (a crawl's close reads them in another process,
:mod:`~nitpicker.archive.close_reader`, while it writes on); the archive's writer stores them
(:mod:`nitpicker.archive.click_depth`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3

__all__ = ["WALK_TABLE", "drop_click_depth_walk", "read_click_depths", "walk_click_depths"]

_NAME: Final = "click_depth"
WALK_TABLE: Final = f"temp.{_NAME}"
"""The walk's pages: ``(page_id INTEGER PRIMARY KEY, depth INTEGER NOT NULL)``."""

_SEED: Final = (f"INSERT OR IGNORE INTO {WALK_TABLE}(page_id, depth)"
                " SELECT id, 0 FROM pages WHERE url IN (SELECT value FROM json_each(?))")
_REDIRECTED: Final = (
    f"INSERT OR IGNORE INTO {WALK_TABLE}(page_id, depth)"
    f" SELECT p.redirect_dest_id, c.depth FROM {WALK_TABLE} c JOIN pages p ON p.id = c.page_id"
    " WHERE c.depth = ? AND p.redirect_dest_id IS NOT NULL")
_LINKED: Final = (
    f"INSERT OR IGNORE INTO {WALK_TABLE}(page_id, depth)"
    f" SELECT a.href_id, c.depth + 1 FROM {WALK_TABLE} c JOIN anchors a ON a.page_id = c.page_id"
    " WHERE c.depth = ?")
_UNREACHED: Final = ("SELECT id, NULL FROM pages WHERE depth IS NOT NULL"
                     f" AND id NOT IN (SELECT page_id FROM {WALK_TABLE})")
_CHANGED: Final = (f"SELECT c.page_id, c.depth FROM {WALK_TABLE} c"
                   " JOIN pages p ON p.id = c.page_id WHERE p.depth IS NOT c.depth")


def walk_click_depths(conn: sqlite3.Connection) -> None:
    """Fill :data:`WALK_TABLE` with each page a root's links reach and its click depth (the
    caller drops it: :func:`drop_click_depth_walk`; on an error it is dropped here)."""
    row = conn.execute("SELECT roots FROM info WHERE id = 1").fetchone()
    roots = json.loads(row[0]) if row is not None else []
    conn.execute(f"DROP TABLE IF EXISTS {WALK_TABLE}")
    conn.execute(f"CREATE TEMP TABLE {_NAME}(page_id INTEGER PRIMARY KEY, depth INTEGER NOT NULL)")
    conn.execute(f"CREATE INDEX temp.{_NAME}_level ON {_NAME}(depth)")
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
        drop_click_depth_walk(conn)
        raise


def drop_click_depth_walk(conn: sqlite3.Connection) -> None:
    """Drop :data:`WALK_TABLE`."""
    conn.execute(f"DROP TABLE {WALK_TABLE}")


def read_click_depths(conn: sqlite3.Connection) -> list[tuple[int, int | None]]:
    """The ``(page id, click depth)`` of every page whose stored depth is not its click
    depth (``None``: no link reaches it), on any connection (a read-only one too)."""
    walk_click_depths(conn)
    try:
        return [*conn.execute(_UNREACHED), *conn.execute(_CHANGED)]
    finally:
        drop_click_depth_walk(conn)
