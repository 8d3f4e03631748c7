"""Concatenating the archives of different crawls into one (``nitpicker concat``).

Where ``nitpicker merge`` joins the shards of one crawl, this joins crawls: of other sections
(``/blog/`` and ``/docs/``), other sites, or the same site at other times. The new archive's
roots are the union of theirs (in the order given), its options the first archive's with the
excludes, exclude keywords, exclude URLs, header names and credential users of all. Each
archive is copied in SQL as the merge copies a shard (:mod:`nitpicker.archive.transfer`),
oldest first (by its newest run): the runs, trap events and analysis runs of every archive are
kept, in the order they ran.

One row per URL. When several archives have a URL, the row that says most wins: a page
recorded in full (in scope) over one recorded metadata-only (external), over one marked
without a fetch (excluded, capped), over a link target never fetched; between two of the same
kind, the newer observation (the page's ``fetched_at``; else the newer archive). The winning
row brings its child rows (anchors, images, headers, snapshot, resources' links, console
messages, JSON-LD, analysis). A resource's facts and headers are the newest archive's that
has them. Redirect sources point at the end of their chain, as in one crawl. Nothing is
fetched: a URL under the new roots that only some archive's crawl saw as external stays
external (:attr:`ConcatResult.outside` lists them; ``nitpicker crawl --append`` fetches them).

Refused: fewer than two archives, one given twice, a list-mode archive with a crawl, archives
crawled with and without ``--disable-queries`` (their URLs are not keyed alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from nitpicker.archive import merge
from nitpicker.archive.transfer import (
    ScopeTest,
    Source,
    TransferError,
    attached,
    copy_children,
    page_columns,
    read_source,
    write_archive,
    write_info,
)

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = ["ConcatResult", "concat_archives"]

_RANK: Final = (
    "CASE WHEN p.scraped = 1 AND (p.fetched_at IS NOT NULL OR p.redirect_dest_id IS NOT NULL)"
    " THEN 2 + (p.is_external = 0) WHEN p.scraped = 1 THEN 1 ELSE 0 END"
)
"""3 recorded in full, 2 recorded metadata-only (external), 1 marked (scraped without a
fetch), 0 a link target never fetched. A redirect source counts as recorded."""

_RECORDED: Final = 2

_BETTER: Final = "(excluded.rank, excluded.fetched) >= (winner.rank, winner.fetched)"
"""The attached archive's row of a URL wins over the best so far (a tie: the newer archive)."""

_UNITED_OPTIONS: Final = ("excludes", "exclude_keywords", "exclude_urls", "headers",
                          "credentials")
"""Options whose values are the union of the archives' (the others are the first's)."""

_FLAGS: Final = ('"in_sitemap"', '"in_inventory"')
"""Page columns that are true when any archive says so."""


@dataclass
class ConcatResult:
    pages: int = 0
    """Rows of the new ``pages`` table."""
    recorded: int = 0
    """Pages recorded (fetched, or redirect sources)."""
    newer_kept: int = 0
    """URLs recorded by more than one archive (the row that says most, or the newer, kept)."""
    outside: list[str] = field(default_factory=list)
    """URLs under the new roots recorded external (metadata-only) by every archive that saw
    them: a crawl of the new roots would fetch them in full."""
    roots: list[str] = field(default_factory=list)
    append_root: str = ""
    """The root the first of :attr:`outside` lies under: ``crawl --append`` it to fetch them."""


def concat_archives(paths: list[Path], output: Path) -> ConcatResult:
    """Concatenate the archives ``paths`` into a new archive at ``output`` (never
    overwritten). :class:`TransferError` (nothing written) when they cannot be combined."""
    if len(paths) < 2:
        raise TransferError(f"concat needs at least two archives, got {len(paths)}")
    seen: set[Path] = set()
    for path in paths:
        if path.resolve() in seen:
            raise TransferError(f"archive given twice: {path}")
        seen.add(path.resolve())
    sources = [read_source(path) for path in paths]
    _check_compatible(sources)
    roots = list(dict.fromkeys(root for source in sources for root in source.roots))
    oldest_first = sorted(sources, key=lambda source: source.crawled_at)  # stable: ties as given
    result = ConcatResult(roots=roots)

    def build(conn: sqlite3.Connection) -> None:
        write_info(conn, output, roots, _options(sources), from_list=sources[0].from_list)
        conn.execute("CREATE TEMP TABLE winner(url TEXT PRIMARY KEY, source INTEGER NOT NULL,"
                     " rank INTEGER NOT NULL, fetched TEXT NOT NULL, recorded INTEGER NOT NULL)")
        for position, source in enumerate(oldest_first):
            with attached(conn, source.path):
                _rank(conn, position)
        for position, source in enumerate(oldest_first):
            with attached(conn, source.path):
                _copy_pages(conn, position)
                copy_children(conn)
                _newer_resources(conn)
        merge._repoint_redirects(conn)
        _count(conn, result, disable_queries=bool(sources[0].config.get("disable_queries")))

    write_archive(output, build)
    return result


def _check_compatible(sources: list[Source]) -> None:
    first = sources[0]
    for other in sources[1:]:
        if other.from_list != first.from_list:
            listed, crawled = (first, other) if first.from_list else (other, first)
            raise TransferError(
                f"cannot concat a list-mode archive ({listed.path}: --list/--list-file) with a "
                f"crawl ({crawled.path})")
        if bool(other.config.get("disable_queries")) != bool(first.config.get("disable_queries")):
            on, off = ((first, other) if first.config.get("disable_queries")
                       else (other, first))
            raise TransferError(
                f"archives crawled with and without --disable-queries cannot be concatenated: "
                f"{on.path} (with) and {off.path} (without): their URLs are not keyed alike")


def _options(sources: list[Source]) -> dict[str, Any]:
    options = dict(sources[0].config)
    for name in _UNITED_OPTIONS:
        united: list[Any] = []
        for source in sources:
            for value in source.config.get(name) or ():
                if value not in united:
                    united.append(value)
        options[name] = united
    return options


def _rank(conn: sqlite3.Connection, position: int) -> None:
    """Enter the attached archive's rows in ``temp.winner``: each URL's best row so far (a
    tie goes to this archive, newer than those before it)."""
    conn.execute(
        "INSERT INTO temp.winner(url, source, rank, fetched, recorded)"
        f" SELECT p.url, :position, {_RANK}, coalesce(p.fetched_at, ''), {_RANK} >= :recorded"
        " FROM s.pages AS p WHERE true ON CONFLICT(url) DO UPDATE SET"
        " recorded = winner.recorded + excluded.recorded, "
        + ", ".join(f"{column} = CASE WHEN {_BETTER} THEN excluded.{column} ELSE winner.{column}"
                    " END" for column in ("source", "rank", "fetched")),
        {"position": position, "recorded": _RECORDED})


def _copy_pages(conn: sqlite3.Connection, position: int) -> None:
    """The attached archive's pages: a row for each URL not in yet, and the winning rows'
    columns; ``temp.idmap`` and ``temp.taken`` (its winning recorded pages) for the children."""
    columns = page_columns(conn)
    conn.execute(
        "CREATE TEMP TABLE taken AS SELECT p.id AS old, p.url, w.rank FROM s.pages AS p"
        " JOIN temp.winner AS w ON w.url = p.url WHERE w.source = ?", (position,))
    updated = [c for c in columns if c not in _FLAGS]
    conn.execute(  # before the insert below: only the rows earlier archives brought
        f"UPDATE main.pages SET ({', '.join(updated)}) = (SELECT"
        f" {', '.join('p.' + c for c in updated)} FROM s.pages AS p WHERE p.url = pages.url)"
        " WHERE url IN (SELECT url FROM temp.taken)")
    conn.execute(
        f"INSERT INTO main.pages(url, {', '.join(columns)})"
        f" SELECT p.url, {', '.join('p.' + c for c in columns)} FROM s.pages AS p"
        " WHERE NOT EXISTS (SELECT 1 FROM main.pages AS m WHERE m.url = p.url) ORDER BY p.id")
    for flag in _FLAGS:
        conn.execute(f"UPDATE main.pages SET {flag} = 1 WHERE {flag} = 0 AND url IN"
                     f" (SELECT url FROM s.pages WHERE {flag} = 1)")
    conn.execute("CREATE TEMP TABLE idmap(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    conn.execute("INSERT INTO temp.idmap SELECT p.id, m.id FROM s.pages AS p"
                 " JOIN main.pages AS m ON m.url = p.url")
    conn.execute(
        "UPDATE main.pages SET redirect_dest_id = (SELECT d.new FROM s.pages AS p"
        " JOIN temp.idmap AS d ON d.old = p.redirect_dest_id WHERE p.url = pages.url)"
        " WHERE url IN (SELECT url FROM temp.taken)")
    conn.execute("DELETE FROM temp.taken WHERE rank < ?", (_RECORDED,))


def _newer_resources(conn: sqlite3.Connection) -> None:
    """The attached archive is newer than those copied before it: the facts and headers it
    has of a resource replace theirs (the merge's copy kept the first it met)."""
    columns = merge._columns(conn, "resources", skip=("id", "url", "kind", "is_external"))
    conn.execute(
        f"UPDATE main.resources SET ({', '.join(columns)}) = (SELECT"
        f" {', '.join('r.' + c for c in columns)} FROM s.resources AS r"
        " WHERE r.url = resources.url)"
        " WHERE url IN (SELECT url FROM s.resources WHERE status IS NOT NULL)")
    conn.execute(
        "DELETE FROM main.resource_headers WHERE resource_id IN (SELECT m.id FROM"
        " main.resources AS m JOIN s.resources AS r ON r.url = m.url"
        " WHERE r.id IN (SELECT resource_id FROM s.resource_headers))")
    conn.execute(
        "INSERT INTO main.resource_headers(resource_id, name, value)"
        " SELECT m.id, h.name, h.value FROM s.resource_headers AS h"
        " JOIN s.resources AS r ON r.id = h.resource_id JOIN main.resources AS m ON m.url = r.url"
        " ORDER BY h.rowid")


def _count(conn: sqlite3.Connection, result: ConcatResult, *, disable_queries: bool) -> None:
    scope = ScopeTest(result.roots, disable_queries=disable_queries)
    conn.create_function("in_scope", 1, scope, deterministic=True)
    result.pages = int(conn.execute("SELECT count(*) FROM pages").fetchone()[0])
    result.recorded = int(conn.execute(
        "SELECT count(*) FROM pages WHERE scraped = 1"
        " AND (fetched_at IS NOT NULL OR redirect_dest_id IS NOT NULL)").fetchone()[0])
    result.newer_kept = int(conn.execute(
        "SELECT count(*) FROM temp.winner WHERE recorded > 1").fetchone()[0])
    result.outside = [row[0] for row in conn.execute(
        "SELECT url FROM pages WHERE is_external = 1 AND redirect_dest_id IS NULL"
        " AND in_scope(url) ORDER BY url")]
    if result.outside:
        result.append_root = scope.root_of(result.outside[0]) or result.roots[0]
