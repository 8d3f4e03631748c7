"""Click depth stored: each page's ``depth`` set to its shortest click depth from a root
(issue 27, item 3; what it is, why the depth a page was queued at is not it, and how it is
walked: :mod:`nitpicker.query.click_depth`).

When a crawl closes (and after ``merge``, ``concat``, ``split``: whatever calls
:meth:`~nitpicker.archive.writer.ArchiveWriter.finish` with ``order``), every page's depth is set
to its click depth: :func:`set_click_depths` walks and writes on the writer's connection, or
:func:`store_click_depths` writes what a read-only process read
(:func:`~nitpicker.query.click_depth.read_click_depths`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.query.click_depth import WALK_TABLE, drop_click_depth_walk, walk_click_depths

if TYPE_CHECKING:
    import sqlite3

__all__ = ["set_click_depths", "store_click_depths"]

_UNREACHED: Final = ("UPDATE pages SET depth = NULL WHERE depth IS NOT NULL"
                     f" AND id NOT IN (SELECT page_id FROM {WALK_TABLE})")
_REACHED: Final = (f"UPDATE pages SET depth = c.depth FROM {WALK_TABLE} c"
                   " WHERE c.page_id = pages.id AND pages.depth IS NOT c.depth")


def set_click_depths(conn: sqlite3.Connection) -> int:
    """Write every page's click depth in the open transaction; how many pages' depth
    changed."""
    walk_click_depths(conn)
    try:
        changed = max(conn.execute(_UNREACHED).rowcount, 0)
        changed += max(conn.execute(_REACHED).rowcount, 0)
    finally:
        drop_click_depth_walk(conn)
    return changed


def store_click_depths(conn: sqlite3.Connection, changes: list[tuple[int, int | None]]) -> int:
    """Write the depths :func:`~nitpicker.query.click_depth.read_click_depths` read, in the
    open transaction; how many."""
    conn.executemany("UPDATE pages SET depth = ? WHERE id = ?",
                     [(depth, page_id) for page_id, depth in changes])
    return len(changes)
