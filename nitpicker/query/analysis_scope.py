"""Which pages an analysis covers: ``nitpicker analyze --sample N --pages PATTERN``, and whether
the analysis of an archive was sampled (for the report and the viewer's overview).

**The selection** (:func:`select_pages`): the analysable pages (internal HTML with a
snapshot), those whose URL matches one of ``patterns`` (a glob over the whole URL, ``*`` any
text, ``?`` one character, SQLite's ``GLOB``: case-sensitive) when any are given; then, with
``sample``, ``sample`` pages of each template cluster (the cluster's representative first,
the rest spread evenly over its pages by id) plus every page that no cluster covers (a page
with no skeleton, or none recorded yet). Deterministic: the same archive gives the same pages.

**The scope of a run** is recorded with it (``analysis_runs.scope``, migration
``0022_page_templates``): :func:`analysis_scopes` gives the latest run of each plugin with
it, ``None`` when that run covered every page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from typing_extensions import TypedDict

from nitpicker.query._common import fetch_all, fetch_one, has_migration, has_tables

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = ["PageSelection", "RunScope", "analysable_count", "analysis_scopes", "has_templates",
           "matching_count", "select_pages"]

_ANALYSABLE: Final = (
    "p.scraped = 1 AND p.is_external = 0 AND p.content_type = 'text/html'"
    " AND p.redirect_dest_id IS NULL"
)

_COUNT: Final = f"SELECT count(*) FROM pages p JOIN snapshots s ON s.page_id = p.id WHERE {_ANALYSABLE}"

def has_templates(conn: sqlite3.Connection) -> bool:
    """Whether the archive has the template tables (migration ``0022_page_templates``)."""
    return has_migration(conn, "0022_page_templates")


def _matching(patterns: Sequence[str]) -> tuple[str, list[str]]:
    if not patterns:
        return "", []
    return " AND (" + " OR ".join("p.url GLOB ?" for _ in patterns) + ")", list(patterns)


def analysable_count(conn: sqlite3.Connection) -> int:
    """The pages an analysis without ``--sample`` or ``--pages`` covers."""
    row = fetch_one(conn, _COUNT)
    return int(row[0]) if row else 0


def matching_count(conn: sqlite3.Connection, patterns: Sequence[str]) -> int:
    """The analysable pages whose URL matches one of ``patterns`` (all without any)."""
    condition, params = _matching(patterns)
    row = fetch_one(conn, _COUNT + condition, params)
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class PageSelection:
    """The pages an analysis covers, and how they were chosen."""

    page_ids: list[int]
    of: int
    """The analysable pages of the archive."""
    matching: int
    """Those matching ``--pages`` (``of`` without it)."""
    sample: int | None = None
    templates: int = 0
    """Template clusters sampled."""
    uncovered: int = 0
    """Pages taken because no cluster covers them."""
    patterns: tuple[str, ...] = field(default=())

    def scope(self) -> dict[str, Any]:
        """What ``analysis_runs.scope`` records (JSON)."""
        return {"sample": self.sample, "pages": list(self.patterns),
                "selected": len(self.page_ids), "matching": self.matching, "of": self.of,
                "templates": self.templates, "uncovered": self.uncovered}


def select_pages(conn: sqlite3.Connection, *, sample: int | None,
                 patterns: Sequence[str] = ()) -> PageSelection:
    """The pages to analyse (see the module's docstring)."""
    if sample is not None and sample < 1:
        raise ValueError(f"Invalid sample: {sample}. Must be a whole number ≥ 1")
    of = analysable_count(conn)
    condition, params = _matching(patterns)
    if sample is None or not has_templates(conn):
        ids = [row[0] for row in fetch_all(
            conn, f"SELECT p.id FROM pages p JOIN snapshots s ON s.page_id = p.id"
                  f" WHERE {_ANALYSABLE}{condition} ORDER BY p.id", params)]
        return PageSelection(ids, of, len(ids), sample, 0, len(ids) if sample else 0,
                             tuple(patterns))
    rows = fetch_all(
        conn,
        "SELECT p.id, pt.template_id, t.example_page_id FROM pages p"
        " JOIN snapshots s ON s.page_id = p.id"
        " LEFT JOIN page_templates pt ON pt.page_id = p.id"
        " LEFT JOIN templates t ON t.id = pt.template_id"
        f" WHERE {_ANALYSABLE}{condition} ORDER BY pt.template_id, p.id", params)
    chosen: list[int] = []
    uncovered = 0
    groups: dict[int, tuple[int, list[int]]] = {}
    for page_id, template, example in rows:
        if template is None:
            chosen.append(page_id)
            uncovered += 1
        else:
            groups.setdefault(template, (example, []))[1].append(page_id)
    for example, members in groups.values():
        chosen.extend(_spread(members, example, sample))
    return PageSelection(sorted(chosen), of, len(rows), sample, len(groups), uncovered,
                         tuple(patterns))


def _spread(members: list[int], example: int, count: int) -> list[int]:
    """``count`` of ``members`` (sorted ids): ``example`` first when it is one of them, the
    rest evenly spaced from the first to the last."""
    if len(members) <= count:
        return members
    step = (len(members) - 1) / (count - 1) if count > 1 else 0.0
    spread = [members[round(step * i)] for i in range(count)]
    picked = list(dict.fromkeys([example, *spread] if example in members else spread))[:count]
    for member in members:  # the example took one of the spread's places
        if len(picked) >= count:
            break
        if member not in picked:
            picked.append(member)
    return picked


class RunScope(TypedDict):
    plugin: str
    ended_at: str | None
    scope: dict[str, Any] | None
    """What the run covered (``sample``, ``pages``, ``selected``, ``of`` …); ``None``: every
    page."""


_LATEST_RUNS: Final = """SELECT r.plugin, r.ended_at, r.scope FROM analysis_runs r
    WHERE r.id = (SELECT max(id) FROM analysis_runs x WHERE x.plugin = r.plugin
                  AND x.outcome IN ('finished', 'interrupted'))
    ORDER BY r.plugin"""


def analysis_scopes(conn: sqlite3.Connection) -> list[RunScope]:
    """The latest finished (or interrupted) run of each plugin, with the pages it covered."""
    if not has_templates(conn):  # no scope column yet: every run covered every page
        if not has_tables(conn, "analysis_runs"):
            return []
        return [{"plugin": plugin, "ended_at": ended, "scope": None} for plugin, ended in
                fetch_all(conn, "SELECT plugin, max(ended_at) FROM analysis_runs"
                                " WHERE outcome IN ('finished', 'interrupted') GROUP BY plugin"
                                " ORDER BY plugin")]
    return [{"plugin": plugin, "ended_at": ended,
             "scope": json.loads(scope) if scope else None}
            for plugin, ended, scope in fetch_all(conn, _LATEST_RUNS)]
