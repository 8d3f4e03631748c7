"""Opening an archive to read it, the one way: read-only, checked, never migrated, never locked.

:func:`open_archive` is every reader's way into a ``.nitpicker`` file: the query library's
callers (the CLI, the MCP server, the viewer, ``diff``, the reports), and in the archive layer
the readers of ``analyze``'s snapshots and of ``merge``'s, ``concat``'s and ``split``'s
sources, and the check a writer makes before it takes the lock
(:func:`nitpicker.archive.connection.check_archive_file`). A file attached read-only to
another connection is named by :func:`read_only_uri`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from nitpicker.archive.schema import SchemaError, check_archive
from nitpicker.errors import UserError

__all__ = ["ArchiveOpenError", "open_archive", "read_only_uri"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


class ArchiveOpenError(UserError):
    """The path is missing, not an archive, corrupt, held locked, or from a newer nitpicker."""


def open_archive(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the archive at ``path``; the file is never modified.

    The file is checked first — it exists, is a file, is SQLite, is not held by a writer's
    exclusive lock, and passes :func:`~nitpicker.archive.schema.check_archive` —
    :class:`ArchiveOpenError` says what is wrong. Usable from any thread (one at a time).
    """
    file = Path(path)
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
