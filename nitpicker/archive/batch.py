"""The writer as its parts see it: one connection, one mutex, one open batch.

:class:`~nitpicker.archive.writer.ArchiveWriter` makes its parts — the frontier store, the run
log, the page recorder — and hands itself to each as a :class:`Batch`: they write through its
connection, under its mutex, into the batch it opens and commits. So the writer imports its
parts and no part imports the writer. A worker's writer of ``--workers N``
(:class:`~nitpicker.archive.shared_writer.SharedArchiveWriter`) opens its batches its own way;
its parts do not ask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import sqlite3
    from contextlib import AbstractContextManager

__all__ = ["Batch"]


class Batch(Protocol):
    """The connection, the mutex and the open batch that the writer's parts share."""

    dirty: int
    """Records written in the open batch (a page, a sitemap listing): the writer commits by it."""

    @property
    def conn(self) -> sqlite3.Connection:
        """The one connection that writes the archive."""

    @property
    def mutex(self) -> AbstractContextManager[object]:
        """One writer call at a time: held by every part's call (``connection.serialised``)."""

    def begin(self) -> None:
        """Open the batch unless one is open (callers hold the mutex)."""

    def commit(self) -> None:
        """Commit the open batch."""
