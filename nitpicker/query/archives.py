"""The archives a long-lived reader (the MCP server) has open, each known by an id.

A client opens an archive by path and gets an id (``archive_1``, ``archive_2``, …) to name it in
later calls. Opening the same file again (by real path: a symlink or another relative spelling
counts as the same file) issues a new id that shares the first one's read-only connection; the
connection is closed when the last id naming it is closed. At most :data:`MAX_OPEN_ARCHIVES`
distinct files are open at once, so a client cannot exhaust file handles::

    registry = ArchiveRegistry()
    archive_id = registry.open("site.nitpicker")
    with registry.use(archive_id) as conn:
        get_summary(conn)
    registry.close(archive_id)

The registry is thread-safe: queries on one archive are serialised (a connection is used by one
thread at a time), queries on different archives run in parallel.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nitpicker.errors import UserError
from nitpicker.query.connection import ArchiveOpenError, open_archive

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["ARCHIVE_SUFFIX", "MAX_OPEN_ARCHIVES", "ArchiveRegistry", "UnknownArchiveError"]

MAX_OPEN_ARCHIVES = 20
"""Most distinct archive files open at once."""

ARCHIVE_SUFFIX = ".nitpicker"


class UnknownArchiveError(UserError, LookupError):
    """No open archive has this id (never opened, or closed)."""

    def __init__(self, archive_id: str) -> None:
        super().__init__(f"Archive not found: {archive_id}. "
                         "Use open_archive to load a .nitpicker file first.")

    def __str__(self) -> str:  # LookupError would quote the message like a dict key
        return str(self.args[0])


@dataclass
class _OpenFile:
    """One archive file, its connection, and the ids that name it."""

    conn: sqlite3.Connection
    ids: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a query runs on ``conn``, and while it is closed."""


class ArchiveRegistry:
    """Archives opened by path, named by id, sharing one connection per real path."""

    def __init__(self, max_open: int = MAX_OPEN_ARCHIVES) -> None:
        self.max_open = max_open
        self._files: dict[Path, _OpenFile] = {}
        self._paths: dict[str, Path] = {}
        self._next_id = 1
        self._lock = threading.Lock()

    def open(self, path: str | os.PathLike[str]) -> str:
        """Open the archive at ``path`` read-only and return a new id naming it.

        Raises :class:`ArchiveOpenError` when ``path`` does not end with ``.nitpicker`` (nor
        does the file it resolves to), is not a readable file, is not an archive, or when
        :data:`MAX_OPEN_ARCHIVES` other files are already open.
        """
        if not os.fspath(path).endswith(ARCHIVE_SUFFIX):
            raise ArchiveOpenError(
                "Invalid file type. Only .nitpicker archive files are supported.")
        given = Path(path).expanduser()
        if not given.is_file() or not os.access(given, os.R_OK):
            raise ArchiveOpenError("Archive file not found or not readable.")
        real = given.resolve()
        if not real.name.endswith(ARCHIVE_SUFFIX):
            raise ArchiveOpenError(
                "Invalid file type. Only .nitpicker archive files are supported.")
        with self._lock:
            entry = self._files.get(real)
            if entry is None:
                if len(self._files) >= self.max_open:
                    raise ArchiveOpenError(
                        f"Too many open archives (max: {self.max_open}). "
                        "Close unused archives first.")
                try:
                    conn = open_archive(real)
                except ArchiveOpenError as exc:  # name the file, not where it lives
                    raise ArchiveOpenError(str(exc).replace(str(real), real.name)) from exc
                entry = _OpenFile(conn)
                self._files[real] = entry
            archive_id = f"archive_{self._next_id}"
            self._next_id += 1
            entry.ids.add(archive_id)
            self._paths[archive_id] = real
            return archive_id

    def connection(self, archive_id: str) -> sqlite3.Connection:
        """The connection ``archive_id`` names (shared with the other ids of its file)."""
        with self._lock:
            return self._entry(archive_id).conn

    def path(self, archive_id: str) -> Path:
        """The real path of the file ``archive_id`` names (to attach it: ``compare_archives``)."""
        with self._lock:
            self._entry(archive_id)
            return self._paths[archive_id]

    @contextmanager
    def use(self, archive_id: str) -> Iterator[sqlite3.Connection]:
        """The connection of ``archive_id``, held by this thread alone until the block ends."""
        with self._lock:
            entry = self._entry(archive_id)
        with entry.lock:
            yield entry.conn

    def close(self, archive_id: str) -> None:
        """Forget ``archive_id``; the connection closes with the last id of its file."""
        with self._lock:
            entry = self._entry(archive_id)
            real = self._paths.pop(archive_id)
            entry.ids.discard(archive_id)
            if entry.ids:
                return
            del self._files[real]
        with entry.lock:  # a query still running on it finishes first
            entry.conn.close()

    def close_all(self) -> None:
        """Close every archive."""
        for archive_id in list(self._paths):
            self.close(archive_id)

    def __contains__(self, archive_id: object) -> bool:
        return archive_id in self._paths

    @property
    def open_files(self) -> int:
        """How many distinct archive files are open."""
        return len(self._files)

    def _entry(self, archive_id: str) -> _OpenFile:
        real = self._paths.get(archive_id)
        if real is None:
            raise UnknownArchiveError(archive_id)
        return self._files[real]
