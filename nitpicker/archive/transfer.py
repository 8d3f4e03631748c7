"""What ``nitpicker concat`` and ``nitpicker split`` share: reading a source archive, writing
the new one, and the row copying of ``nitpicker merge``.

Both build a new archive from existing ones entirely in SQLite, the way the shard merge does
(:mod:`nitpicker.archive.merge`), and copy the child rows with its code: a source is attached
read-only as ``s``; ``temp.idmap`` (old, new) maps the ids of its pages that the new archive
has, ``temp.taken`` (old) lists those that bring their child rows (anchors, images, headers,
snapshot, resources' links, console messages, JSON-LD, analysis); :func:`copy_children` then
copies them, the runs, trap events, frontier rows, resources and analysis runs too. What each
command chooses — which pages, which source's row of a URL — is its own module's.

The new archive is built under a hidden name beside the output (``.NAME.PID.partial``),
closed as a crawl is (URL order, inbound-link index, statistics, one file) and linked into
place only if the name is still free: an existing file is never overwritten, and a failure
leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker import __version__
from nitpicker.archive import merge
from nitpicker.archive.connection import connect, now
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.schema import SchemaError, check_complete, migrate
from nitpicker.archive.template_store import record_templates
from nitpicker.errors import UserError
from nitpicker.policy.scope import Scope
from nitpicker.policy.urls import parse_url
from nitpicker.query import ArchiveOpenError, crawl_info, latest_run, open_archive
from nitpicker.query.connection import read_only_uri

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

__all__ = [
    "ScopeTest",
    "Source",
    "TransferError",
    "attached",
    "copy_children",
    "page_columns",
    "read_source",
    "write_archive",
    "write_info",
]

_TEMP_TABLES = ("incoming", "taken", "idmap", "resource_had_headers")
"""The temporary tables of one source's pass (``resource_had_headers`` is the merge's)."""


class TransferError(UserError):
    """The archives cannot be combined or split; the message (one line) says why."""


@dataclass(frozen=True)
class Source:
    """A source archive, as the new one needs to know it."""

    path: Path
    roots: list[str]
    config: dict[str, Any]
    from_list: bool
    crawled_at: str
    """When its newest run started (its creation when it has none): how recent it is."""


def read_source(path: Path) -> Source:
    """The crawl information of the archive at ``path``; :class:`TransferError` unless it is
    an archive of this version's whole schema that no crawl is writing."""
    holder = ArchiveLock(path).live_holder()
    if holder is not None:
        raise TransferError(f"{path}: still being written (PID {holder}): wait for its crawl "
                            "to end")
    try:
        conn = open_archive(path)
    except ArchiveOpenError as exc:
        raise TransferError(str(exc)) from exc
    try:
        check_complete(conn)
        info = crawl_info(conn)
        run = latest_run(conn)
    except SchemaError as exc:
        raise TransferError(f"{path}: {exc}") from exc
    except (sqlite3.DatabaseError, LookupError) as exc:
        raise TransferError(f"{path}: not a nitpicker archive ({exc})") from exc
    finally:
        conn.close()
    return Source(path, list(info.roots), info.config, info.from_list,
                  run["started_at"] if run else info.created_at)


class ScopeTest:
    """Whether a stored URL lies under roots, by the crawl's scope rules
    (:mod:`nitpicker.policy.scope`); called with a URL it answers 1 or 0, for SQLite
    (``create_function``)."""

    def __init__(self, roots: Iterable[str], *, disable_queries: bool) -> None:
        self._scope = Scope(roots)
        self._disable_queries = disable_queries

    def root_of(self, url: str) -> str | None:
        """The root ``url`` lies under (the deepest), or ``None``."""
        parsed = parse_url(url, disable_queries=self._disable_queries)
        if parsed is None or not parsed.is_http:
            return None
        entry = self._scope.find(parsed)
        return entry.url if entry is not None else None

    def __call__(self, url: str) -> int:
        return int(self.root_of(url) is not None)


def write_archive(output: Path, build: Callable[[sqlite3.Connection], None]) -> None:
    """Create the archive ``output`` (never overwritten): ``build`` fills it on a fresh
    schema's connection; it is then closed as a crawl is and linked into place.

    :class:`TransferError` for an output that exists or whose directory does not, and for
    what SQLite refuses (a full disk); nothing is left behind.
    """
    if output.exists():
        raise TransferError(f"Output file already exists: {output} (choose another -o)")
    if not output.parent.is_dir():
        raise TransferError(f"Output directory not found: {output.parent}")
    partial = output.with_name(f".{output.name}.{os.getpid()}.partial")
    try:
        conn = connect(partial)
        try:
            migrate(conn)
            _check_tables(conn)
            build(conn)
            record_templates(conn)  # derived from the snapshots copied: computed afresh
        finally:
            conn.close()
        merge._finish(partial)
        try:
            os.link(partial, output)  # fails if output appeared meanwhile: never overwritten
        except FileExistsError as exc:
            raise TransferError(
                f"Output file already exists: {output} (choose another -o)") from exc
    except sqlite3.OperationalError as exc:  # a full disk, a read-only directory, …
        raise TransferError(f"cannot write {output}: {exc}") from exc
    finally:
        for leftover in (partial, *(partial.with_name(partial.name + suffix)
                                    for suffix in ("-wal", "-shm", ".lock"))):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _check_tables(conn: sqlite3.Connection) -> None:
    unknown = merge.unknown_table(conn)
    if unknown is not None:
        raise TransferError(f"the copy does not know the table {unknown!r} of this schema")


def write_info(conn: sqlite3.Connection, output: Path, roots: list[str],
               config: dict[str, Any], *, from_list: bool) -> None:
    """The new archive's crawl information: its name, ``roots`` and options."""
    config = {**config, "roots": roots, "output": str(output.resolve())}
    conn.execute(
        "INSERT INTO info(id, version, name, base_url, roots, from_list, config, created_at)"
        " VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
        (__version__, output.name.removesuffix(".nitpicker"), roots[0], json.dumps(roots),
         int(from_list), json.dumps(config, ensure_ascii=False), now()))


@contextlib.contextmanager
def attached(conn: sqlite3.Connection, source: Path) -> Iterator[None]:
    """``source`` attached read-only as ``s`` for one pass in one transaction; the pass's
    temporary tables dropped after it, committed or not."""
    conn.execute("ATTACH DATABASE ? AS s", (read_only_uri(source),))
    try:
        conn.execute("BEGIN")
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        for table in _TEMP_TABLES:
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
        conn.execute("DETACH DATABASE s")


def page_columns(conn: sqlite3.Connection) -> list[str]:
    """The quoted columns of ``pages`` a copied row carries (all but its id, URL, redirect
    and URL order, which the new archive sets)."""
    return merge._columns(conn, "pages", skip=("id", "url", "redirect_dest_id", "order"))


def copy_children(conn: sqlite3.Connection) -> None:
    """The merge's copy of the attached source's rows (``temp.idmap``, ``temp.taken``)."""
    merge._merge_children(conn)
