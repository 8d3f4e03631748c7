"""The ``.nitpicker`` archive: schema and migrations, the crawl-time writer, the lock."""

from __future__ import annotations

from nitpicker.archive.lock import ArchiveLock, ArchiveLockError
from nitpicker.archive.schema import MIGRATIONS, SchemaError
from nitpicker.archive.writer import ArchiveError, ArchiveWriter, check_archive_file

__all__ = [
    "MIGRATIONS",
    "ArchiveError",
    "ArchiveLock",
    "ArchiveLockError",
    "ArchiveWriter",
    "SchemaError",
    "check_archive_file",
]
