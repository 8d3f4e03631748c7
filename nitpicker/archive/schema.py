"""The archive schema: the one archive check, and applying the named migrations.

A ``.nitpicker`` file is a SQLite database. ``migrations`` records which named steps
(:data:`~nitpicker.archive.migrations.MIGRATIONS`, their SQL in
:mod:`nitpicker.archive.migrations`) were applied; applying them again is a no-op. Readers
never migrate: an archive whose newest migration is unknown to this version is refused as
"written by a newer nitpicker".
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Final

from nitpicker.archive.migrations import MIGRATIONS
from nitpicker.errors import UserError

__all__ = [
    "MIGRATIONS",
    "SchemaError",
    "applied_migrations",
    "check_archive",
    "check_complete",
    "check_readable",
    "migrate",
]


class SchemaError(UserError):
    """The file is not a nitpicker archive, or was written by a newer version."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the applied migrations; raises ``SchemaError`` for a non-archive."""
    try:
        rows = conn.execute("SELECT name FROM migrations ORDER BY name").fetchall()
    except sqlite3.DatabaseError as exc:
        raise SchemaError("not a nitpicker archive") from exc
    return [r[0] for r in rows]


def check_readable(conn: sqlite3.Connection) -> None:
    """Raise ``SchemaError`` unless this version understands every applied migration."""
    known = {name for name, _ in MIGRATIONS}
    unknown = [n for n in applied_migrations(conn) if n not in known]
    if unknown:
        raise SchemaError(f"written by a newer nitpicker (schema {unknown[-1]})")


_NO_CRAWL_INFO: Final = "not a nitpicker archive (it has no crawl information)"


def check_archive(conn: sqlite3.Connection) -> None:
    """Raise ``SchemaError`` unless ``conn`` holds an archive this version can open.

    The one check every opener shares (``query``, the MCP server, ``--resume``, ``--append``):
    the migrations are all known (:func:`check_readable`) and the crawl information row an
    archive is created with is there. A SQLite file with a ``migrations`` table and nothing
    else is not an archive.
    """
    check_readable(conn)
    try:
        row = conn.execute("SELECT count(*) FROM info WHERE id = 1").fetchone()
    except sqlite3.OperationalError as exc:  # no such table (a corrupt file raises on)
        raise SchemaError(_NO_CRAWL_INFO) from exc
    if not row[0]:
        raise SchemaError(_NO_CRAWL_INFO)


def check_complete(conn: sqlite3.Connection) -> None:
    """Raise ``SchemaError`` unless the archive has every migration of this version: what
    copies rows table by table (``merge``, ``concat``, ``split``) needs its whole schema."""
    applied = set(applied_migrations(conn))
    missing = [name for name, _ in MIGRATIONS if name not in applied]
    if missing:
        raise SchemaError(f"written by an older nitpicker (schema lacks {missing[0]})")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet applied, each in its own transaction. Idempotent."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    check_readable(conn)
    done = set(applied_migrations(conn))
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN")
        try:
            for statement in sql.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO migrations(name, applied_at) VALUES (?, ?)", (name, _now()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(name)
    return applied
