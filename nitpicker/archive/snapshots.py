"""The HTML snapshot as the archive stores it: UTF-8, Zstandard-compressed at level 1
(``snapshots.encoding`` is ``'zstd'``; :mod:`nitpicker.query.snapshot_encoding` reads it back,
and the ``'zlib'`` of archives written before migration ``0044_snapshot_zstd``).

A crawl compresses each page's snapshot where the page is read: in the page reader's child
process when there is one (``nitpicker/spiders/page_reader.py``), so that neither the
compression nor its hand-back of the GIL falls on the crawl's process; in the archive's
thread otherwise. On ``bench/crawl_throughput.py``'s pages (23 KB of HTML) level 1 takes
54 µs a page against zlib level 1's 185 µs, for a slightly smaller blob (9.7 against 9.8 KB),
and decompresses in 23 µs against 41.
"""

from __future__ import annotations

from nitpicker.query.snapshot_encoding import ZSTD, zstd

__all__ = ["ENCODING", "LEVEL", "compress"]

ENCODING = ZSTD
"""``snapshots.encoding`` of what :func:`compress` gives."""

LEVEL = 1
"""Zstandard's fastest level above its negative ("fast") ones, which trade size for little
more speed (level -1: 44 µs, 14 KB)."""


def compress(html: str) -> bytes:
    """``html`` as the archive's ``snapshots.html`` stores it."""
    data: bytes = zstd.compress(html.encode("utf-8"), LEVEL)
    return data
