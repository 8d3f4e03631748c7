"""The HTML snapshot as the archive stores it: UTF-8, zlib-compressed (``snapshots.encoding``
is ``'zlib'``).

A crawl compresses each page's snapshot where the page is read: in the page reader's child
process when there is one (``nitpicker/spiders/page_reader.py``), so that neither the
compression nor its hand-back of the GIL falls on the crawl's process; in the archive's
thread otherwise.
"""

from __future__ import annotations

import zlib

__all__ = ["ENCODING", "LEVEL", "compress"]

ENCODING = "zlib"
"""``snapshots.encoding`` of what :func:`compress` gives."""

LEVEL = 1
"""zlib's fastest level: about a quarter of the HTML's size, at a fifth of level 6's time."""


def compress(html: str) -> bytes:
    """``html`` as the archive's ``snapshots.html`` stores it."""
    return zlib.compress(html.encode("utf-8"), LEVEL)
