"""Telling a full disk from other failures to write an archive: the one line the analysis
(and any writer holding the archive lock) prints when SQLite or the system refuses a write."""

from __future__ import annotations

import errno
import os
import sqlite3
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["is_disk_full", "write_failure"]

_LOW_SPACE: Final = 1 << 20
"""Free bytes under which an I/O error is taken for a full disk: SQLite reports a -shm file it
could not grow as a "disk I/O error", not as "full"."""


def is_disk_full(path: Path, exc: BaseException) -> bool:
    """Whether ``exc``, raised writing the archive at ``path``, means its disk is full (or the
    error it was raised while handling did: a ROLLBACK after SQLite rolled back by itself)."""
    return _full_disk_error(path, exc) is not None


def _full_disk_error(path: Path, exc: BaseException) -> BaseException | None:
    """``exc`` or the first error of its chain that says the disk is full."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if _is_disk_full(path, cause):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _is_disk_full(path: Path, exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if not isinstance(exc, sqlite3.Error):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    if name == "SQLITE_FULL" or "disk is full" in str(exc):
        return True
    if not name.startswith("SQLITE_IOERR"):
        return False
    try:
        disk = os.statvfs(path.resolve().parent)
    except OSError:
        return False
    return disk.f_bavail * disk.f_frsize < _LOW_SPACE


def write_failure(path: Path, exc: BaseException) -> str:
    """One line for an archive the analysis could not write: what SQLite or the system said,
    and for a full disk, so in words with what to do."""
    full = _full_disk_error(path, exc)
    if full is not None:
        return (f"{path}: the disk is full ({full}): the page analyses committed before are "
                "kept; free some space and run the same command again")
    return f"{path}: {exc}"
