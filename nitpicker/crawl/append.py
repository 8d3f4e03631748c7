"""Append: add roots to an existing archive and crawl on, with a backup restored on failure.

``nitpicker crawl --append FILE URL…`` (SPEC §3.15.2): the archive's roots become the old
ones plus the new ones; rows recorded out of scope that the new roots cover are re-promoted
(page ids kept) and crawled; the crawl goes on from the frontier. ``FILE.bak`` is a copy of
the archive taken first: a failed run restores it (the archive is then byte for byte as
before) and a finished or stopped run deletes it. The archive's lock is held from before the
copy to after the restore: a backup is never taken of, nor restored over, an archive another
process is writing. A list-mode archive refuses append. The append run's config is built by
:func:`nitpicker.crawl.config_builder.append_config`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from nitpicker.crawl.config import ConfigError
from nitpicker.errors import UserError
from nitpicker.query import ArchiveOpenError, CrawlInfo, crawl_info, open_archive

if TYPE_CHECKING:
    from nitpicker.archive.lock import ArchiveLock

__all__ = ["LIST_MODE_REFUSAL", "LIST_MODE_RETRY_REFUSAL", "AppendError", "ArchiveBackup", "stored_crawl_info"]

LIST_MODE_REFUSAL = (
    "Cannot append to a list-mode archive: this archive was created with --list/--list-file "
    "and contains metadata-only pages. Create a fresh archive instead."
)
LIST_MODE_RETRY_REFUSAL = (
    "Cannot retry the failed URLs of a list-mode archive: this archive was created with "
    "--list/--list-file and contains metadata-only pages. Crawl the list into a fresh archive "
    "instead."
)


class AppendError(UserError):
    """Appending failed; the message says whether the archive was restored."""


def stored_crawl_info(path: Path) -> CrawlInfo:
    """The crawl information of an existing archive; ``ConfigError`` when it cannot be read."""
    try:
        conn = open_archive(path)
    except ArchiveOpenError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        return crawl_info(conn)
    except LookupError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    finally:
        conn.close()


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


class ArchiveBackup:
    """``FILE.bak``: taken before an append, restored on failure, removed on success.

    Only under ``lock``, the archive's lock held by this process: without it neither the
    copy nor the restore touches a file. An archive left in WAL mode (a killed crawl) keeps
    committed pages in ``FILE-wal``: it is copied to ``FILE.bak-wal`` and restored with it.
    """

    def __init__(self, path: Path, lock: ArchiveLock) -> None:
        self.path = path
        self.lock = lock
        self.backup = _sidecar(path, ".bak")

    def _check_lock(self, doing: str) -> None:
        if not self.lock.held:
            raise AppendError(f"will not {doing} {self.path}: this process does not hold its "
                              f"lock ({self.lock.path})")

    def take(self) -> None:
        self._check_lock("back up")
        try:
            shutil.copy2(self.path, self.backup)
            wal = _sidecar(self.path, "-wal")
            if wal.exists():
                shutil.copy2(wal, _sidecar(self.backup, "-wal"))
        except OSError as exc:
            self.discard()
            raise AppendError(f"cannot back up the archive before appending: {exc}") from exc

    def discard(self) -> None:
        self.backup.unlink(missing_ok=True)
        _sidecar(self.backup, "-wal").unlink(missing_ok=True)

    def restore(self, cause: str) -> None:
        """Put the backup back; ``AppendError`` naming both problems if that fails too."""
        try:
            self._check_lock("restore")
        except AppendError as exc:
            raise AppendError(f"append failed: {cause}; {exc}. The backup is kept at "
                              f"{self.backup}") from exc
        try:
            for suffix in ("-wal", "-shm"):
                _sidecar(self.path, suffix).unlink(missing_ok=True)
            shutil.copy2(self.backup, self.path)
            wal = _sidecar(self.backup, "-wal")
            if wal.exists():
                shutil.copy2(wal, _sidecar(self.path, "-wal"))
            self.discard()
        except OSError as exc:
            raise AppendError(
                f"append failed AND restore from backup failed: {cause}; restore: {exc}. "
                f"The backup is kept at {self.backup}"
            ) from exc
