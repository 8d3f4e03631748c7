"""The ``.nitpicker`` archive: schema and migrations, the crawl-time writer and its parts
(frontier store, run log, page recorder), the lock."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
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

_HOMES: Final = {
    "FrontierEntry": "frontier_store", "FrontierStore": "frontier_store",
    "ArchiveLock": "lock", "ArchiveLockError": "lock",
    "PageRecorder": "page_recorder", "RunLog": "run_log",
    "MIGRATIONS": "schema", "SchemaError": "schema",
    "ArchiveError": "writer", "ArchiveWriter": "writer", "check_archive_file": "writer",
}
"""Where each name lives. The names are imported when first used (PEP 562): a reader that
needs only the schema or the lock (``nitpicker report``, the query library) does not import
the crawl-time writer and with it the crawler's item and URL code."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
