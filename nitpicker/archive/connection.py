"""Opening an archive, the one way: read-only and checked, or the writer's connection; how a
writer's calls are serialised, and what its parts share.

:func:`open_archive` is every reader's and writer's way into a ``.nitpicker`` file: the query
library, the MCP server, the viewer, ``diff``, the stores of ``analyze`` and ``check``, the
sources of ``merge``, ``concat`` and ``split`` read through its read-only variant (checked:
a file, SQLite, an archive this version reads, not held by a writer's exclusive lock), and a
writer checks the file with it (:func:`check_archive_file`) before it takes the lock and opens
the read-write variant (``write=True``). An archive attached to another connection is named by
:func:`read_only_uri`.

The archive writer (:mod:`nitpicker.archive.writer`) and its parts — the frontier store, the
run log, the page recorder — write through one SQLite connection, guarded by one re-entrant
lock: the archive worker's thread and the reactor's both call them, and a call of one part
may call another (a page's record acknowledges its frontier row).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from nitpicker.archive.schema import SchemaError, check_archive
from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager

__all__ = ["ArchiveError", "ArchiveOpenError", "check_archive_file", "json_rows", "now",
           "open_archive", "read_only_uri", "serialised", "sorting_on_disk"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


class ArchiveError(UserError):
    """The archive cannot be created, opened or written; the message says why."""


class ArchiveOpenError(ArchiveError):
    """The path is missing, not an archive, corrupt, held locked, or from a newer nitpicker."""


def open_archive(path: str | Path, *, write: bool = False) -> sqlite3.Connection:
    """A connection to the archive at ``path``.

    Read-only (the default): the file is checked — it exists, is a file, is SQLite, is not
    held by a writer's exclusive lock, and passes :func:`~nitpicker.archive.schema.check_archive`
    — and never modified, never migrated, never locked; :class:`ArchiveOpenError` says what is
    wrong. Usable from any thread (one at a time).

    ``write=True``: the writer's connection, created when the file is not there. The caller
    has checked an existing file first (:func:`check_archive_file`), holds the archive's lock,
    and migrates it.
    """
    file = Path(path)
    if write:
        return _writer_connection(file)
    if not file.exists():
        raise ArchiveOpenError(f"Archive not found: {file}")
    if not file.is_file():
        raise ArchiveOpenError(f"Not an archive file: {file}")
    with file.open("rb") as handle:
        if handle.read(16) != _SQLITE_MAGIC:
            raise ArchiveOpenError(f"Not a nitpicker archive: {file}")
    conn = sqlite3.connect(read_only_uri(file), uri=True, check_same_thread=False)
    try:
        _check_unlocked(conn, file)
        check_archive(conn)
    except SchemaError as exc:
        conn.close()
        raise ArchiveOpenError(f"{file}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ArchiveOpenError(f"{file}: corrupt archive ({exc})") from exc
    return conn


def check_archive_file(path: Path) -> None:
    """Raise :class:`ArchiveOpenError` unless ``path`` is an archive this version reads: the
    read-only opening's check, made before a writer takes the lock. Nothing is written."""
    open_archive(path).close()


def read_only_uri(path: Path) -> str:
    """The URI that opens or attaches ``path`` read-only (``ATTACH DATABASE ? AS s``)."""
    return f"{path.resolve().as_uri()}?mode=ro"


def _check_unlocked(conn: sqlite3.Connection, file: Path) -> None:
    """:class:`ArchiveOpenError` when another process holds the file locked past the busy
    timeout (a writer's exclusive transaction): said as such, not as "not an archive"."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            return  # not a lock: the archive check names what is wrong
        conn.close()
        raise ArchiveOpenError(f"{file}: locked by another process ({exc}): try again once it "
                               "has finished writing") from exc


def _writer_connection(path: Path) -> sqlite3.Connection:
    """The writer's connection: autocommit mode (it begins its own batches), WAL, big cache."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-32000")
    conn.execute("PRAGMA temp_store=MEMORY")
    # Checkpoint the WAL every ~40 MB instead of every 4 MB: fewer fsync-bound pauses on the
    # commit path; the WAL is folded back into the file at close anyway.
    conn.execute("PRAGMA wal_autocheckpoint=10000")
    return conn


def now() -> str:
    """The timestamp the archive stores (UTC, ISO 8601, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


json_rows = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
"""Rows as one JSON array, the parameter the ``json_each`` statements read."""


@contextlib.contextmanager
def sorting_on_disk(conn: sqlite3.Connection) -> Iterator[None]:
    """SQLite's sorts spill to temporary files, not memory (a whole-archive sort may not fit)."""
    conn.execute("PRAGMA temp_store=FILE")
    try:
        yield
    finally:
        conn.execute("PRAGMA temp_store=MEMORY")


class _Guarded(Protocol):
    @property
    def _mutex(self) -> AbstractContextManager[object]: ...


_G = TypeVar("_G", bound=_Guarded)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def serialised(method: Callable[Concatenate[_G, _P], _R]) -> Callable[Concatenate[_G, _P], _R]:
    """One writer call at a time, under the ``_mutex`` the writer and its parts share."""

    def locked(self: _G, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._mutex:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked
