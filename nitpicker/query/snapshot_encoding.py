"""The encodings of a stored HTML snapshot (``snapshots.encoding``) and the one way to read
one back: :func:`decode`.

- ``'zstd'``: Zstandard-compressed UTF-8, what a crawl writes since migration
  ``0044_snapshot_zstd`` (:mod:`nitpicker.archive.snapshots`): about a quarter of the time of
  zlib's fastest level on a crawl's pages, a little smaller, and read back faster;
- ``'zlib'``: zlib-compressed UTF-8, what earlier crawls wrote (an archive holds both once an
  older one is resumed or appended to);
- anything else: the UTF-8 bytes as they are.

Zstandard is Python's own from 3.14 (``compression.zstd``) and the ``backports.zstd`` package
before (a dependency of Scrapy's, and of nitpicker's).
"""

from __future__ import annotations

import zlib
from typing import Final

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # Python < 3.14
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

__all__ = ["ZLIB", "ZSTD", "DecodeError", "decode", "zstd"]

ZSTD: Final = "zstd"
ZLIB: Final = "zlib"

DecodeError: Final = (zlib.error, zstd.ZstdError)
"""What :func:`decode` raises for a corrupt blob."""


def decode(encoding: str, blob: bytes) -> bytes:
    """The UTF-8 bytes of a snapshot stored as ``blob`` in ``encoding``; raises one of
    :data:`DecodeError` when the blob is corrupt."""
    if encoding == ZSTD:
        data: bytes = zstd.decompress(blob)
        return data
    if encoding == ZLIB:
        return zlib.decompress(blob)
    return bytes(blob)
