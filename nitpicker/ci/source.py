"""The findings an export lists: an archive's, each with its suppression and, when it is
compared with an earlier archive (``nitpicker diff … --format sarif``), whether it is new.

:func:`open_source` opens the archive (and the earlier one) read-only and gives an
:class:`ExportSource`; its :meth:`~ExportSource.entries` are read from the archive again on
each call, in the order a writer wants; :meth:`~ExportSource.summary` counts them once::

    with open_source(Path("today.nitpicker"), suppressions) as source:
        source.summary().by_priority["high"]
        for entry in source.entries("priority"):
            entry.finding["url"], entry.suppression, entry.state, entry.failing
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from nitpicker.errors import UserError
from nitpicker.query.checks import PRIORITIES
from nitpicker.query.connection import open_archive
from nitpicker.query.findings import (
    finding_rules,
    findings_checked,
    iter_findings,
    recomputed_fingerprint,
)
from nitpicker.query.info import crawl_info

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

    from nitpicker.ci.suppressions import Suppression, Suppressions
    from nitpicker.query.diff import UrlMap
    from nitpicker.query.findings import Finding, RuleInfo

__all__ = ["Entry", "ExportSource", "Summary", "UncheckedArchiveError", "open_source",
           "unchecked"]


class UncheckedArchiveError(UserError):
    """The archive has no findings to read: the site checks never ran on it."""


def unchecked(path: object) -> UncheckedArchiveError:
    """The error for the archive at ``path``, naming the command that gives it findings."""
    return UncheckedArchiveError(
        f"{path}: the site checks never ran on it, so it has no findings yet "
        f"(nitpicker check {path})")


@dataclass(frozen=True)
class Entry:
    """One finding as an export lists it."""

    finding: Finding
    suppression: Suppression | None
    """The suppression that accepts it (``None``: none, or an expired one)."""
    expired: Suppression | None
    """An expired suppression of it: it counts again."""
    state: str | None
    """``new`` or ``unchanged`` against the earlier archive; ``None``: no comparison."""

    @property
    def failing(self) -> bool:
        """What a CI tool shows as a failure: not accepted, and new when compared."""
        return self.suppression is None and self.state != "unchanged"


@dataclass
class Summary:
    findings: int = 0
    by_priority: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PRIORITIES, 0))
    """The findings not suppressed, by priority."""
    failing: int = 0
    suppressed: int = 0
    expired: int = 0
    new: int = 0
    unchanged: int = 0
    fixed: int = 0
    """Compared: the earlier archive's findings no longer found."""


class ExportSource:
    """An archive's findings for an export (see the module's docstring)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *,
                 suppressions: Suppressions | None = None,
                 old_fingerprints: set[str] | None = None, old_path: Path | None = None,
                 today: date | None = None) -> None:
        self.conn = conn
        self.path = path
        self.old_path = old_path
        self.suppressions = suppressions
        self.today = today or date.today()
        self._old = old_fingerprints
        try:
            self.base_url = crawl_info(conn).base_url
        except LookupError:  # an archive whose crawl never started
            self.base_url = ""
        self.rules: list[RuleInfo] = finding_rules(conn)
        self._summary: Summary | None = None

    @property
    def compared(self) -> bool:
        return self._old is not None

    def entries(self, order: str = "priority") -> Iterator[Entry]:
        """Every finding of the archive in ``order`` (``priority`` or ``category``)."""
        for finding in iter_findings(self.conn, order=order):
            if not finding["fingerprint"]:
                finding["fingerprint"] = recomputed_fingerprint(finding)
            accepted = (self.suppressions.get(finding["fingerprint"])
                        if self.suppressions is not None else None)
            expired = accepted if accepted is not None and accepted.expired(self.today) else None
            state = None
            if self._old is not None:
                state = "unchanged" if finding["fingerprint"] in self._old else "new"
            yield Entry(finding, None if expired else accepted, expired, state)

    def summary(self) -> Summary:
        """The counts, from one pass over the findings (made once)."""
        if self._summary is not None:
            return self._summary
        summary = Summary()
        seen: set[str] = set()
        for entry in self.entries():
            summary.findings += 1
            seen.add(entry.finding["fingerprint"])
            if entry.suppression is not None:
                summary.suppressed += 1
            else:
                summary.by_priority[entry.finding["priority"]] += 1
            summary.expired += entry.expired is not None
            summary.failing += entry.failing
            summary.new += entry.state == "new"
            summary.unchanged += entry.state == "unchanged"
        if self._old is not None:
            summary.fixed = len(self._old - seen)
        self._summary = summary
        return summary


def _fingerprints(conn: sqlite3.Connection, url_map: UrlMap | None) -> set[str]:
    def url_of(url: str) -> str:
        if url_map is not None and url.startswith(url_map.old_prefix):
            return url_map.new_prefix + url[len(url_map.old_prefix):]
        return url

    return {recomputed_fingerprint(finding, url_of) for finding in iter_findings(conn)}


@contextlib.contextmanager
def open_source(path: Path, suppressions: Suppressions | None = None, *,
                old: Path | None = None, url_map: UrlMap | None = None,
                today: date | None = None) -> Iterator[ExportSource]:
    """The findings of the archive at ``path`` (compared with ``old``'s, through
    ``url_map``, when given). Raises :class:`~nitpicker.query.ArchiveOpenError` for a file
    that is not an archive this version reads, :class:`UncheckedArchiveError` for one the
    site checks never ran on."""
    conn = open_archive(path)
    try:
        if not findings_checked(conn):
            raise unchecked(path)
        old_fingerprints = None
        if old is not None:
            old_conn = open_archive(old)
            try:
                if not findings_checked(old_conn):
                    raise unchecked(old)
                old_fingerprints = _fingerprints(old_conn, url_map)
            finally:
                old_conn.close()
        yield ExportSource(conn, path, suppressions=suppressions,
                           old_fingerprints=old_fingerprints, old_path=old, today=today)
    finally:
        conn.close()
