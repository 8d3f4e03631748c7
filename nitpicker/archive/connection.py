"""The writer's connection: how it is opened, one call at a time, what its parts share.

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
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path

__all__ = ["connect", "json_rows", "now", "serialised", "sorting_on_disk"]


def connect(path: Path) -> sqlite3.Connection:
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
