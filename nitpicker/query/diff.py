"""Two archives compared: what changed between an OLD crawl and a NEW one (issue 17).

Both archives are attached read-only (``mode=ro`` URIs) to one in-memory connection, as
``old`` and ``new``. A URL of OLD is matched with the same normalised URL of NEW (the archive
stores URLs normalised); with a :class:`UrlMap` an OLD URL starting with its old prefix is
matched with the NEW URL that has the new prefix instead (staging against production, a domain
move). The matched page ids go into one temporary table (two integers a page, inside SQLite);
every category is then one SQL statement over the two archives, read row by row: nothing holds
a whole table in Python::

    with compare_archives("last-week.nitpicker", "today.nitpicker") as diff:
        diff.common_pages                      # pages in both
        for item in diff.items("links_broken"):
            ...

The categories (:data:`CATEGORIES`, in output order) and their items:

- ``pages_added`` / ``pages_removed``: site pages (in scope, fetched, not skipped) of one
  archive only: ``url``, ``status``, ``title``.
- ``page_changes``: for site pages in both, one item per changed fact: ``url`` (NEW),
  ``old_url``, ``field`` (:data:`PAGE_FIELDS`), ``old``, ``new``. URLs in facts
  (``redirect_to``, ``canonical``, ``alternate``) are compared through the map.
- ``new_4xx`` / ``new_5xx``: site pages of NEW answering 4xx / 5xx that did not in OLD
  (``old_status`` ``None``: not in OLD): ``url``, ``old_status``, ``new_status``.
- ``links_added`` / ``links_removed``: link edges (linking page, URL named) on pages in both:
  ``source_url``, ``dest_url``. The links of an added or removed page come with the page.
- ``links_broken``: links in NEW whose target is broken (>= 400 or a fetch error, at the end
  of its redirects) that were not a broken link in OLD (``old_status`` ``None``: no such link
  in OLD); ``links_fixed``: links broken in OLD that are not in NEW (``new_status``
  ``None``: the link is gone) or no longer broken. ``source_url``, ``dest_url``,
  ``old_status``, ``new_status``.
- ``resources_failing``: sub-resources a browser loaded that fail in NEW (>= 400 or a fetch
  error) and did not in OLD: ``url``, ``kind``, ``old_status``, ``new_status``.
- ``images_lost_alt``: images of a page in both with an alt text in OLD and none (absent or
  empty) in NEW: ``page_url``, ``src``.
- ``trap_caps_new``: firings of the trap cap in NEW whose signature never fired in OLD:
  ``signature``, ``parent_path``, ``count``, ``first_url``, ``last_url``.

- ``violations_new`` / ``violations_fixed`` / ``violations_persisting``: analyzer findings
  of NEW with no match in OLD, of OLD with no match in NEW, and in both, matched by their
  fingerprint (:mod:`nitpicker.query.diff_findings`: validator, rule, page URL and where on
  the page: the element, else the code's markup without its text; not the line): ``url``, ``plugin``, ``validator``, ``severity``, ``rule``,
  ``message``, ``code``, ``location``, ``fingerprint`` (16 hex digits); persisting ones also
  ``old_severity`` and ``old_location``. Only the plugins run on both archives
  (:attr:`ArchiveDiff.compared_plugins`).
- ``values_changed``: plugin page values (cells) of pages in both that changed, appeared or
  went away: ``url``, ``plugin``, ``key``, ``change``, ``old``, ``new``, ``old_note``,
  ``new_note``.

A :class:`Category` is a name, its SQL and its item's field names
(:mod:`nitpicker.query.diff_categories`, re-exported here).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

from typing_extensions import TypedDict

from nitpicker.archive.lock import ArchiveLock
from nitpicker.errors import UserError
from nitpicker.query import diff_findings
from nitpicker.query._common import has_tables
from nitpicker.query.connection import ArchiveOpenError, open_archive, read_only_uri
from nitpicker.query.diff_categories import (
    _BY_NAME,
    _COMMON_SQL,
    _PAIRS_SQL,
    _TRAP_CAPS_SEEN,
    _URL_FIELDS,
    CATEGORIES,
    CATEGORY_NAMES,
    GATES,
    PAGE_FIELDS,
    Category,
    _to_new,
)
from nitpicker.query.diff_findings import SEVERITY_RANKS, severity_rank

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "GATES",
    "PAGE_FIELDS",
    "SEVERITY_RANKS",
    "ArchiveDiff",
    "Category",
    "CategorySummary",
    "DiffInputError",
    "DiffSummary",
    "UrlMap",
    "compare_archives",
    "severity_rank",
    "summarise_diff",
]


class DiffInputError(UserError):
    """The two archives cannot be compared: the same file twice, or one is being written."""


@dataclass(frozen=True)
class UrlMap:
    """OLD URLs starting with ``old_prefix`` compare as ``new_prefix`` + the rest."""

    old_prefix: str
    new_prefix: str

    @classmethod
    def parse(cls, text: str, label: str = "--map") -> UrlMap:
        """``OLD_PREFIX=NEW_PREFIX``; ``ValueError`` naming ``text`` (as ``label``) when it is
        not that."""
        old, sep, new = text.partition("=")
        if not sep or not old or not new:
            raise ValueError(f"Invalid {label}: {text!r}. Expected OLD_PREFIX=NEW_PREFIX, "
                             "two URL prefixes")
        return cls(old, new)

    def params(self) -> dict[str, Any]:
        return {"old_prefix": self.old_prefix, "old_len": len(self.old_prefix),
                "new_prefix": self.new_prefix, "new_len": len(self.new_prefix)}


_IDENTITY: Final = UrlMap("", "")
"""No map: ``substr(url, 1, 0) = ''`` holds for every URL, and ``'' || url`` is the URL."""

_PAGE_BOOLEANS: Final = frozenset({"noindex", "nofollow"})


class CategorySummary(TypedDict):
    count: int
    items: list[dict[str, Any]]
    """The first items (all of them when no limit was asked)."""


class ArchiveSide(TypedDict):
    path: str
    base_url: str
    created_at: str


class DiffSummary(TypedDict):
    old: ArchiveSide
    new: ArchiveSide
    url_map: dict[str, str] | None
    """``{"old_prefix", "new_prefix"}`` when ``--map`` was given."""
    common_pages: int
    """Site pages in both archives (0: the archives have no URL in common)."""
    compared_plugins: list[str]
    """The analyzer plugins run on both archives: the findings categories compare theirs."""
    categories: dict[str, CategorySummary]


class ArchiveDiff:
    """Two archives attached read-only to one in-memory connection, their pages matched."""

    def __init__(self, conn: sqlite3.Connection, old: ArchiveSide, new: ArchiveSide,
                 url_map: UrlMap | None) -> None:
        self._conn = conn
        self.old = old
        self.new = new
        self.url_map = url_map
        self._params = (url_map or _IDENTITY).params()
        self._conn.execute("CREATE TEMP TABLE pairs (old_id INTEGER PRIMARY KEY,"
                           " new_id INTEGER NOT NULL UNIQUE)")
        self._conn.execute(_PAIRS_SQL, self._params)
        self.common_pages = int(self._conn.execute(_COMMON_SQL).fetchone()[0])
        """Site pages in both archives."""
        self._findings_ready = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def _has_findings(self) -> bool:
        return all(has_tables(self._conn, "analysis_runs", "violations", "page_values", schema=db)
                   for db in ("old", "new"))

    def _prepare_findings(self) -> None:
        if not self._findings_ready:
            diff_findings.prepare(self._conn, self._params, _to_new("p.url"))
            self._findings_ready = True

    @property
    def compared_plugins(self) -> list[str]:
        """The analyzer plugins run on both archives (sorted): only their findings are
        compared. Empty when one archive was never analysed (or predates the analysis
        tables)."""
        if not self._has_findings():
            return []
        self._prepare_findings()
        return diff_findings.compared_plugins(self._conn)

    def analysed_plugins(self, side: str) -> list[str]:
        """The analyzer plugins run on the ``old`` or ``new`` archive (sorted)."""
        if side not in ("old", "new"):
            raise ValueError(f"Invalid side: {side!r}. Must be old or new")
        if not has_tables(self._conn, "analysis_runs", schema=side):
            return []
        return [row[0] for row in self._conn.execute(  # side: one of two constants
            f"SELECT DISTINCT plugin FROM {side}.analysis_runs ORDER BY plugin")]

    def _sql(self, category: Category) -> str | None:
        if not all(has_tables(self._conn, table, schema=schema)
                   for schema, table in category.needs):
            return None
        if category.findings:
            self._prepare_findings()
        if category.name == "trap_caps_new":
            seen = _TRAP_CAPS_SEEN if has_tables(self._conn, "trap_events", schema="old") else ""
            return category.sql.format(where=seen)
        return category.sql

    def items(self, name: str) -> Iterator[dict[str, Any]]:
        """The items of category ``name``, in a stable order, read row by row."""
        category = _BY_NAME.get(name)
        if category is None:
            raise ValueError(f"Invalid category: {name!r}. "
                             f"Must be one of: {', '.join(CATEGORY_NAMES)}")
        sql = self._sql(category)
        if sql is None:
            return
        cursor = self._conn.execute(sql, self._params)
        try:
            if name == "page_changes":
                for row in cursor:
                    yield from _page_change_items(row, self._params)
                return
            make_item = category.make_item
            if make_item is not None:
                for row in cursor:
                    yield make_item(category.fields, row)
                return
            for row in cursor:
                yield dict(zip(category.fields, row, strict=True))
        finally:
            cursor.close()

    def count(self, name: str) -> int:
        """How many items category ``name`` has (reads them all: use :func:`summarise_diff`
        to count and sample in one pass)."""
        return sum(1 for _ in self.items(name))


def _map_to_new(url: str | None, params: dict[str, Any]) -> str | None:
    """An OLD URL as NEW spells it (as :func:`_to_new` does in SQL)."""
    prefix: str = params["old_prefix"]
    new_prefix: str = params["new_prefix"]
    if url is None or not url.startswith(prefix):
        return url
    return new_prefix + url[len(prefix):]


def _page_change_items(row: tuple[Any, ...], params: dict[str, Any]
                       ) -> Iterator[dict[str, Any]]:
    old_url, new_url = row[0], row[1]
    for index, field in enumerate(PAGE_FIELDS):
        old, new = row[2 + 2 * index], row[3 + 2 * index]
        compared = _map_to_new(old, params) if field in _URL_FIELDS else old
        if compared == new:
            continue
        if field in _PAGE_BOOLEANS:
            old, new = bool(old), bool(new)
        yield {"url": new_url, "old_url": old_url, "field": field, "old": old, "new": new}


def summarise_diff(diff: ArchiveDiff, limit: int | None = None,
                   categories: tuple[str, ...] = CATEGORY_NAMES) -> DiffSummary:
    """Every category's count and its first ``limit`` items (all with ``None``), one pass
    over each category's rows."""
    result: dict[str, CategorySummary] = {}
    for name in categories:
        items: list[dict[str, Any]] = []
        count = 0
        for item in diff.items(name):
            count += 1
            if limit is None or len(items) < limit:
                items.append(item)
        result[name] = {"count": count, "items": items}
    url_map = ({"old_prefix": diff.url_map.old_prefix, "new_prefix": diff.url_map.new_prefix}
               if diff.url_map else None)
    return {"old": diff.old, "new": diff.new, "url_map": url_map,
            "common_pages": diff.common_pages, "compared_plugins": diff.compared_plugins,
            "categories": result}


def _side(path: Path) -> ArchiveSide:
    """Check the archive at ``path`` (the checks ``query`` makes) and read what names it."""
    holder = ArchiveLock(path).live_holder_info()
    if holder is not None:
        raise DiffInputError(f"{path} is being written by {holder.describe()}: "
                             "compare it once that has ended")
    conn = open_archive(path)
    try:
        base_url, created_at = conn.execute(
            "SELECT base_url, created_at FROM info WHERE id = 1").fetchone()
    finally:
        conn.close()
    return {"path": str(path), "base_url": base_url, "created_at": created_at}


def compare_archives(old: str | os.PathLike[str], new: str | os.PathLike[str], *,
                     url_map: UrlMap | None = None) -> ArchiveDiff:
    """Compare the archive ``old`` with ``new`` (both opened read-only, never changed).

    Raises :class:`ArchiveOpenError` for a path that is not an archive this version reads
    (missing, not an archive, corrupt, newer), :class:`DiffInputError` for the same file
    twice or an archive a live crawl holds (its lock: the comparison would see half a crawl).
    Archives of older schema versions compare: a category whose table one lacks is empty.
    """
    old_path, new_path = Path(old), Path(new)
    old_side, new_side = _side(old_path), _side(new_path)
    if old_path.resolve() == new_path.resolve() or os.path.samefile(old_path, new_path):
        raise DiffInputError(f"OLD and NEW are the same file: {old_path}")
    conn = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
    try:
        for schema, path in (("old", old_path), ("new", new_path)):
            conn.execute(f"ATTACH DATABASE ? AS {schema}",  # schema from this tuple only
                         (read_only_uri(path),))
        return ArchiveDiff(conn, old_side, new_side, url_map)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ArchiveOpenError(f"cannot compare {old_path} with {new_path}: {exc}") from exc
