"""The ``.nitpicker`` archive: schema and migrations, the crawl-time writer and its parts
(frontier store, run log, page recorder), the lock."""

from __future__ import annotations

from nitpicker.archive.frontier_store import FrontierEntry, FrontierStore
from nitpicker.archive.lock import ArchiveLock, ArchiveLockError
from nitpicker.archive.page_recorder import PageRecorder
from nitpicker.archive.run_log import RunLog
from nitpicker.archive.schema import MIGRATIONS, SchemaError
from nitpicker.archive.writer import ArchiveError, ArchiveWriter, check_archive_file

__all__ = [
    "MIGRATIONS",
    "ArchiveError",
    "ArchiveLock",
    "ArchiveLockError",
    "ArchiveWriter",
    "FrontierEntry",
    "FrontierStore",
    "PageRecorder",
    "RunLog",
    "SchemaError",
    "check_archive_file",
]
