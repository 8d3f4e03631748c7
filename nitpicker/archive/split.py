"""The part of an archive within some scopes, as a new archive (``nitpicker split``).

A scope is a URL read as a crawl reads its roots (:mod:`nitpicker.policy.scope`): the same
host and port, the path and what lies under it (``/blog/`` covers ``/blog/…``, ``/blog/post``
covers itself and ``/blog/post/…``). The new archive is what a crawl of those roots would
have recorded, as far as the archive knows it:

- its roots are the scopes; its options the archive's;
- every page row under a scope is kept as it was, with its child rows (anchors, images,
  headers, snapshot, resources' links, console messages, JSON-LD, analysis), and so is the
  page a kept redirect source leads to, wherever it is (a crawl follows it);
- a page outside the scopes that a kept page links to (or that such a link redirects to) is
  kept as a crawl of the scopes records an out-of-scope link: an external row with its
  fetched facts and response headers (status, title, …), its own links, images, snapshot and
  analysis dropped; every other page outside is dropped (so are the middle hops of a redirect
  chain leaving the scopes: the archive knows where a chain ends, not its way there);
- resources and console messages are those of the kept pages; the frontier rows of the kept
  URLs and those under the scopes (a URL still pending stays pending, ``crawl --resume``
  fetches it; one outside the scopes is queued metadata-only); the runs and analysis runs are
  all kept, the trap events and plugin errors of the scopes only.

Nothing is fetched: a URL under the scopes that the archive recorded as external (a scope
wider than its roots) stays external (:attr:`SplitResult.outside`). Refused: a list-mode
archive (its roots are a list, not a scope), a scope that is not an http(s) URL, and a scope
under which the archive has no page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from nitpicker.archive.transfer import (
    ScopeTest,
    TransferError,
    attached,
    copy_children,
    page_columns,
    read_source,
    write_archive,
    write_info,
)
from nitpicker.policy.roots import InvalidRoot, root_url

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = ["SplitResult", "split_archive"]

_KEEP: Final = (
    "CREATE TEMP TABLE kept(old INTEGER PRIMARY KEY)",
    "INSERT INTO temp.kept SELECT id FROM s.pages WHERE in_scope(url)",
    # a kept redirect source's destination (sources point at the end of their chain)
    ("INSERT OR IGNORE INTO temp.kept SELECT redirect_dest_id FROM s.pages"
     " WHERE id IN (SELECT old FROM temp.kept) AND redirect_dest_id IS NOT NULL"),
    "CREATE TEMP TABLE outside(old INTEGER PRIMARY KEY)",
    ("INSERT OR IGNORE INTO temp.outside SELECT href_id FROM s.anchors"
     " WHERE page_id IN (SELECT old FROM temp.kept) AND href_id NOT IN (SELECT old FROM temp.kept)"),
    ("INSERT OR IGNORE INTO temp.outside SELECT redirect_dest_id FROM s.pages"
     " WHERE id IN (SELECT old FROM temp.outside) AND redirect_dest_id IS NOT NULL"
     " AND redirect_dest_id NOT IN (SELECT old FROM temp.kept)"),
)
"""``temp.kept``: the pages kept whole; ``temp.outside``: the out-of-scope link targets kept as
external rows."""

_PRUNE: Final = (
    ("DELETE FROM main.resource_headers WHERE resource_id NOT IN"
     " (SELECT resource_id FROM main.resource_referrers)"),
    "DELETE FROM main.resources WHERE id NOT IN (SELECT resource_id FROM main.resource_referrers)",
    ("DELETE FROM main.console_messages WHERE id NOT IN"
     " (SELECT message_id FROM main.page_console_messages)"),
    "DELETE FROM main.frontier WHERE NOT in_scope(url) AND url NOT IN (SELECT url FROM main.pages)",
    ("UPDATE main.frontier SET mode = 1 WHERE mode != 1 AND NOT in_scope(url)"
     " AND url NOT IN (SELECT url FROM main.pages WHERE is_external = 0)"),
    "DELETE FROM main.trap_events WHERE NOT in_scope(first_url) AND NOT in_scope(last_url)",
    "DELETE FROM main.soft404_probes WHERE NOT in_scope(directory)",
    ("DELETE FROM main.plugin_errors WHERE coalesce(page_id NOT IN (SELECT d.new FROM temp.idmap"
     " AS d JOIN temp.kept AS k ON k.old = d.old), NOT in_scope(url))"),
)
"""What the merge's copy brought of the whole archive and the new one has no use for."""


@dataclass
class SplitResult:
    roots: list[str] = field(default_factory=list)
    """The scopes, normalised: the new archive's roots."""
    kept: int = 0
    """Pages kept whole (under the scopes, and where their redirects lead)."""
    external: int = 0
    """Out-of-scope link targets kept as external rows."""
    outside: list[str] = field(default_factory=list)
    """URLs under the scopes the archive recorded as external: a crawl of the scopes would
    fetch them in full."""
    append_root: str = ""
    """The scope the first of :attr:`outside` lies under."""


def split_archive(path: Path, scopes: list[str], output: Path) -> SplitResult:
    """Write the part of the archive ``path`` within ``scopes`` to a new archive at
    ``output`` (never overwritten). :class:`TransferError` (nothing written) when it cannot."""
    source = read_source(path)
    if source.from_list:
        raise TransferError(f"{path}: a list-mode archive (--list/--list-file) has no scope to "
                            "split: its roots are a list of URLs")
    if not scopes:
        raise TransferError("split needs at least one scope URL")
    disable_queries = bool(source.config.get("disable_queries"))
    try:
        roots = list(dict.fromkeys(root_url(scope, disable_queries=disable_queries)
                                   for scope in scopes))
    except InvalidRoot as exc:
        raise TransferError(f"scope: {exc}") from exc
    scope = ScopeTest(roots, disable_queries=disable_queries)
    result = SplitResult(roots=roots)

    def build(conn: sqlite3.Connection) -> None:
        write_info(conn, output, roots, source.config, from_list=False)
        conn.create_function("in_scope", 1, scope, deterministic=True)
        conn.create_function("root_of", 1, scope.root_of, deterministic=True)
        with attached(conn, path):
            _check_matches(conn, source.path, source.roots, roots,
                           disable_queries=disable_queries)
            for statement in _KEEP:
                conn.execute(statement)
            _copy_pages(conn)
            copy_children(conn)
            conn.execute(
                "INSERT INTO main.response_headers(page_id, name, value)"
                " SELECT d.new, r.name, r.value FROM s.response_headers AS r"
                " JOIN temp.idmap AS d ON d.old = r.page_id"
                " WHERE r.page_id IN (SELECT old FROM temp.outside) ORDER BY r.rowid")
            for statement in _PRUNE:
                conn.execute(statement)
            _count(conn, result)
        for table in ("kept", "outside"):
            conn.execute(f"DROP TABLE temp.{table}")

    write_archive(output, build)
    if result.outside:
        result.append_root = scope.root_of(result.outside[0]) or roots[0]
    return result


def _check_matches(conn: sqlite3.Connection, path: Path, archive_roots: list[str],
                   roots: list[str], *, disable_queries: bool) -> None:
    """:class:`TransferError` naming the first scope under which the archive has no page
    recorded in scope (a scope covered by a deeper one is asked on its own)."""
    found = {row[0] for row in conn.execute(
        "SELECT DISTINCT root_of(url) FROM s.pages WHERE is_external = 0")}
    for root in roots:
        if root in found:
            continue
        alone = ScopeTest([root], disable_queries=disable_queries)
        conn.create_function("in_this_scope", 1, alone, deterministic=True)
        if conn.execute("SELECT 1 FROM s.pages WHERE is_external = 0 AND in_this_scope(url)"
                        " LIMIT 1").fetchone() is None:
            raise TransferError(f"no page of {path} lies under {root} (the archive's roots: "
                                f"{', '.join(archive_roots)})")


def _copy_pages(conn: sqlite3.Connection) -> None:
    """The kept pages as they were and the out-of-scope ones as external rows;
    ``temp.idmap`` and ``temp.taken`` (the kept) for the children."""
    columns = page_columns(conn)
    conn.execute(
        f"INSERT INTO main.pages(url, {', '.join(columns)})"
        f" SELECT p.url, {', '.join('p.' + c for c in columns)} FROM s.pages AS p"
        " WHERE p.id IN (SELECT old FROM temp.kept) OR p.id IN (SELECT old FROM temp.outside)"
        " ORDER BY p.id")
    conn.execute(
        "UPDATE main.pages SET is_external = 1, is_target = 0 WHERE url IN"
        " (SELECT url FROM s.pages WHERE id IN (SELECT old FROM temp.outside))")
    conn.execute("CREATE TEMP TABLE idmap(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    conn.execute("INSERT INTO temp.idmap SELECT p.id, m.id FROM s.pages AS p"
                 " JOIN main.pages AS m ON m.url = p.url")
    conn.execute(
        "UPDATE main.pages SET redirect_dest_id = (SELECT d.new FROM s.pages AS p"
        " JOIN temp.idmap AS d ON d.old = p.redirect_dest_id WHERE p.url = pages.url)")
    conn.execute("CREATE TEMP TABLE taken AS SELECT old FROM temp.kept")


def _count(conn: sqlite3.Connection, result: SplitResult) -> None:
    result.kept = int(conn.execute("SELECT count(*) FROM temp.kept").fetchone()[0])
    result.external = int(conn.execute("SELECT count(*) FROM temp.outside").fetchone()[0])
    result.outside = [row[0] for row in conn.execute(
        "SELECT url FROM main.pages WHERE is_external = 1 AND redirect_dest_id IS NULL"
        " AND in_scope(url) ORDER BY url")]
