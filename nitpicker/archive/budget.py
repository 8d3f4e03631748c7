"""SizeBudget: ``--max-archive-mb``, the archive's size cap, with a reserve for closing it.

SQLite refuses to grow a file past ``PRAGMA max_page_count``: a write past it fails with
``database or disk is full`` (the run then fails with ``disk_full``). While crawling, the cap
is the budget minus what closing the archive will write (the deferred inbound-link index, the
URL order, statistics), re-estimated before each page is written; the close gets the whole
budget. So a crawl that fills its share still closes within the budget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SizeBudget"]

# What closing an archive writes, reserved out of a --max-archive-mb budget while crawling
# (measured on a 1,500-page crawl with 3,000 page rows and 217,500 anchors: 13.6 bytes an
# anchor for the inbound-link index, 16 bytes a page row for the URL order and its index; the
# figures below leave room for bigger ids and page splits).
CLOSE_BYTES_PER_ANCHOR = 20
"""The inbound-link index built at close, per anchor (only while the index is deferred)."""
CLOSE_BYTES_PER_PAGE = 48
"""``pages.order`` and its index, filled at close, per page row."""
CLOSE_BYTES = 16 * 1024
"""The rest: planner statistics, the run's row, the order update's own pages."""


class SizeBudget:
    """The archive's size cap, in database pages; ``pages`` is ``None`` without a budget."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.pages: int | None = None
        """``--max-archive-mb`` in database pages; the crawl may use it minus the close reserve."""
        self._page_size = 4096
        self.inbound_deferred = False
        """The inbound-link index is absent: closing builds it, so the reserve counts it."""

    def set(self, max_bytes: int) -> None:
        """Cap the archive at ``max_bytes``, the crawl at that minus the close reserve."""
        self._page_size = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
        self.pages = max(1, max_bytes // self._page_size)
        self.cap_for_crawl()

    def cap_for_close(self) -> None:
        """The whole budget (closing, or work that belongs to it)."""
        self._cap(self.pages)

    def cap_for_crawl(self, new_pages: int = 0, new_anchors: int = 0) -> None:
        """The crawl's share of the budget, counting ``new_pages`` and ``new_anchors`` about to
        be written."""
        if self.pages is None:
            return
        pages, anchors = self._conn.execute(
            "SELECT (SELECT max(id) FROM pages), (SELECT max(id) FROM anchors)").fetchone()
        reserve = CLOSE_BYTES + ((pages or 0) + new_pages) * CLOSE_BYTES_PER_PAGE
        if self.inbound_deferred:
            reserve += ((anchors or 0) + new_anchors) * CLOSE_BYTES_PER_ANCHOR
        self._cap(self.pages - math.ceil(reserve / self._page_size))

    def _cap(self, pages: int | None) -> None:
        if pages is not None:
            # SQLite keeps the cap at the current size when asked for less: no page is lost,
            # only growth is refused. An int, never input: formatted into the pragma.
            self._conn.execute(f"PRAGMA max_page_count = {max(1, pages)}")
