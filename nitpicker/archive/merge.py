"""Merging the shard archives of a distributed crawl into one archive (``nitpicker merge``).

Each worker of a distributed crawl (:mod:`nitpicker.crawl.redis_frontier`) records the pages
it fetched into a shard of its own; a page links to pages other shards recorded, so every
shard also holds stub rows of pages it did not fetch. The merge builds one archive keyed by
URL, entirely in SQL: each shard is attached read-only and copied with ``INSERT … SELECT``,
its page ids mapped to the merged ids through a temporary ``(old, new)`` table joined on the
URL, the ids of rows nothing else names by URL (anchors, images, runs, JSON-LD blocks, …)
shifted past the merged table's largest id. No row passes through Python.

Which shard's row a URL keeps: a *recorded* row (fetched, or a redirect source) wins over a
*marked* one (excluded, capped, not followed: scraped without a fetch), which wins over a stub;
the recorded page brings its children (anchors, images, headers, snapshot, resources' links,
console messages, JSON-LD, analysis). A URL recorded in two shards is a **duplicate** (the
shared frontier hands a URL out again when the worker that had it died between its commit and
its acknowledgement): the merge refuses, naming them, unless told to keep the first shard's
copy. Redirect sources are then pointed at the end of their chain, as one crawl does.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from nitpicker.archive.check_store import record_checks
from nitpicker.archive.connection import connect
from nitpicker.archive.lock import ArchiveLock
from nitpicker.archive.schema import SchemaError, check_complete, migrate
from nitpicker.archive.template_store import record_templates
from nitpicker.errors import UserError
from nitpicker.query.connection import ArchiveOpenError, open_archive, read_only_uri

__all__ = ["MERGED_TABLES", "MergeError", "MergeResult", "merge_shards", "unknown_table"]

logger = logging.getLogger(__name__)


class MergeError(UserError):
    """The shards cannot be merged; the message (one line) names them."""


@dataclass
class MergeResult:
    pages: int = 0
    """Rows of the merged ``pages`` table."""
    recorded: int = 0
    """Pages recorded (fetched, or redirect sources)."""
    duplicates: list[tuple[str, str, str]] = field(default_factory=list)
    """(url, shard kept, shard dropped) of the URLs recorded in two shards (``keep_first``)."""


_RUNTIME_KEYS: Final = frozenset({
    "output", "resume", "parallels", "interval", "retry", "max_pages", "max_duration",
    "max_archive_mb", "strict", "append", "retry_failed", "recrawl",
})
"""Config keys a shard may differ in: how its worker ran, not what the crawl is."""

_RANK: Final = (
    "CASE WHEN {t}.scraped = 1 AND ({t}.fetched_at IS NOT NULL OR {t}.redirect_dest_id IS NOT NULL)"
    " THEN 2 WHEN {t}.scraped = 1 THEN 1 ELSE 0 END"
)
"""2 recorded, 1 marked (scraped without a fetch), 0 stub."""

_ORIGIN_FLAGS: Final = ('"in_sitemap"', '"in_inventory"')
"""Where a page's URL came from besides links: set when any shard set it."""

MERGED_TABLES: Final = frozenset({
    "migrations", "info", "pages", "response_headers", "anchors", "images", "resources",
    "resource_referrers", "resource_headers", "snapshots", "runs", "frontier", "trap_events",
    "console_messages", "page_console_messages", "json_ld_blocks", "json_ld_types",
    "analysis_runs", "analyzed_pages", "page_values", "violations", "plugin_errors", "outages",
    "inventory_runs", "check_runs", "check_findings", "templates", "page_templates",
    "hreflang_links", "sitemaps", "sitemap_urls", "tls_certificates",
    "structured_items", "structured_data_errors", "extracted_values",
    "technology_runs", "technologies", "technology_categories", "page_technologies",
    "page_content", "page_fragment_ids", "content_clusters", "soft404_probes",
    "given_up_hosts",
})
"""Every table the merge carries over (``migrations`` and ``info`` are made afresh; the site
checks' two and the near-duplicate clusters are made afresh too: the checks run over the merged
archive; the template clusters, ``templates`` and ``page_templates``, are derived: computed
afresh over the merged snapshots, :func:`~nitpicker.archive.template_store.record_templates`; the technologies' four are left
empty: ``nitpicker technologies`` detects them over the merged archive; ``given_up_hosts`` is
left empty: it guides the workers of a crawl while it runs). A table added to the
schema and not here makes the merge refuse: it would be dropped silently."""

_REPOINT_ROUNDS: Final = 32


def merge_shards(shards: list[Path], output: Path, *, keep_first: bool = False) -> MergeResult:
    """Merge ``shards`` into a new archive at ``output`` (never overwritten).

    Raises :class:`MergeError` (nothing written) for a missing or foreign file, shards of
    different crawls, an output that exists, or duplicates without ``keep_first``.
    """
    if len(shards) < 1:
        raise MergeError("no shard given")
    if output.exists():
        raise MergeError(f"Output file already exists: {output} (choose another -o)")
    seen: dict[Path, Path] = {}
    for shard in shards:
        resolved = shard.resolve()
        if resolved in seen:
            raise MergeError(f"shard given twice: {shard}")
        seen[resolved] = shard
    infos = [_shard_info(shard) for shard in shards]
    first_roots, first_config = infos[0]
    for shard, (roots, config) in zip(shards[1:], infos[1:], strict=True):
        # A shard's roots may have grown (a redirecting root's destination joins them in the
        # worker that fetched it): the crawl is its first root and its options.
        if roots[:1] != first_roots[:1] or config != first_config:
            what = "roots" if roots[:1] != first_roots[:1] else "options"
            raise MergeError(
                f"shards of different crawls ({what} differ): {shards[0]} (roots "
                f"{', '.join(first_roots)}) and {shard} (roots {', '.join(roots)})")
    roots = list(dict.fromkeys(root for shard_roots, _ in infos for root in shard_roots))
    partial = output.with_name(f".{output.name}.{os.getpid()}.merging")
    try:
        result = _build(shards, partial, roots, keep_first=keep_first)
        _finish(partial)
        try:
            os.link(partial, output)  # fails if output appeared meanwhile: never overwritten
        except FileExistsError as exc:
            raise MergeError(f"Output file already exists: {output} (choose another -o)") from exc
    finally:
        for leftover in (partial, partial.with_name(partial.name + "-wal"),
                         partial.with_name(partial.name + "-shm"),
                         partial.with_name(partial.name + ".lock")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    return result


def _shard_info(shard: Path) -> tuple[list[str], dict[str, object]]:
    """(roots, the crawl's options but the runtime ones) of a shard; ``MergeError`` unless
    it is an archive of this version's full schema."""
    if not shard.is_file():
        raise MergeError(f"Shard not found: {shard}")
    holder = ArchiveLock(shard).live_holder()
    if holder is not None:
        raise MergeError(f"{shard}: still being written (PID {holder}): merge it once its "
                         "worker has ended")
    try:
        conn = open_archive(shard)
    except ArchiveOpenError as exc:
        raise MergeError(str(exc)) from exc
    try:
        check_complete(conn)
        roots, config = conn.execute("SELECT roots, config FROM info WHERE id = 1").fetchone()
    except SchemaError as exc:
        raise MergeError(f"{shard}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        raise MergeError(f"{shard}: not a nitpicker archive ({exc})") from exc
    finally:
        conn.close()
    try:  # written by a crawl; a file edited or damaged since holds anything
        stored, root_list = json.loads(config), json.loads(roots)
    except (TypeError, ValueError, RecursionError) as exc:
        raise MergeError(f"{shard}: its stored crawl information is not JSON ({exc})") from exc
    if not isinstance(stored, dict) or not isinstance(root_list, list):
        raise MergeError(f"{shard}: its stored crawl information is not a crawl's (the config "
                         "must be a JSON object, the roots a JSON array)")
    options = {k: v for k, v in stored.items() if k not in _RUNTIME_KEYS and k != "roots"}
    return [str(root) for root in root_list], options


def unknown_table(conn: sqlite3.Connection) -> str | None:
    """The first table of ``conn``'s schema that the row copying does not know (a migration
    added it and :data:`MERGED_TABLES` was not told), or ``None``."""
    tables = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    unknown = sorted(tables - MERGED_TABLES)
    return unknown[0] if unknown else None


def _columns(conn: sqlite3.Connection, table: str, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The merged archive's columns of ``table`` (identifiers from this version's schema)."""
    return [f'"{row[1]}"' for row in conn.execute(f"PRAGMA main.table_info({table})")
            if row[1] not in skip]


def _build(shards: list[Path], path: Path, roots: list[str], *,
           keep_first: bool) -> MergeResult:
    conn = connect(path)
    result = MergeResult()
    try:
        migrate(conn)
        unknown = unknown_table(conn)
        if unknown is not None:
            raise MergeError(f"the merge does not know the table {unknown!r} of this schema")
        conn.execute("ATTACH DATABASE ? AS s", (read_only_uri(shards[0]),))
        conn.execute("INSERT INTO main.info SELECT * FROM s.info")
        conn.execute("UPDATE main.info SET roots = ?, config = json_set(config, '$.roots', json(?))",
                     (json.dumps(roots), json.dumps(roots)))
        conn.execute("DETACH DATABASE s")
        conn.execute("CREATE TEMP TABLE origin(url TEXT PRIMARY KEY, shard TEXT NOT NULL)")
        for shard in shards:
            _merge_one(conn, shard, result, keep_first=keep_first)
        if result.duplicates and not keep_first:
            shown = "; ".join(f"{url} ({a}, {b})" for url, a, b in result.duplicates[:5])
            more = len(result.duplicates) - 5
            raise MergeError(
                f"{len(result.duplicates)} page(s) recorded in two shards: {shown}"
                + (f" and {more} more" if more > 0 else "")
                + " (--keep-first keeps the first shard's copy)")
        _repoint_redirects(conn)
        record_checks(conn)  # a shard's findings judged its part of the site only
        record_templates(conn)  # derived from the snapshots: the shards' ids are gone
        result.pages = int(conn.execute("SELECT count(*) FROM pages").fetchone()[0])
        result.recorded = int(conn.execute(
            f"SELECT count(*) FROM pages WHERE {_RANK.format(t='pages')} = 2").fetchone()[0])
    finally:
        conn.close()
    return result


def _merge_one(conn: sqlite3.Connection, shard: Path, result: MergeResult, *,
               keep_first: bool) -> None:
    """Copy one shard into the merged archive (one transaction)."""
    conn.execute("ATTACH DATABASE ? AS s", (read_only_uri(shard),))
    try:
        conn.execute("BEGIN")
        _merge_pages(conn, shard, result)
        _merge_children(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        for table in ("incoming", "taken", "idmap", "resource_had_headers"):
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
        conn.execute("DETACH DATABASE s")


def _merge_pages(conn: sqlite3.Connection, shard: Path, result: MergeResult) -> None:
    main_rank = _RANK.format(t="m")
    conn.execute(f"CREATE TEMP TABLE incoming AS SELECT id AS old, url, {_RANK.format(t='p')}"
                 " AS rank FROM s.pages AS p")
    duplicates = conn.execute(
        "SELECT i.url, o.shard FROM temp.incoming AS i JOIN temp.origin AS o ON o.url = i.url"
        " WHERE i.rank = 2 ORDER BY i.old").fetchall()
    result.duplicates.extend((url, kept, str(shard)) for url, kept in duplicates)
    conn.execute(
        "CREATE TEMP TABLE taken AS SELECT i.old, i.url, i.rank FROM temp.incoming AS i"
        " LEFT JOIN main.pages AS m ON m.url = i.url"
        f" WHERE m.id IS NULL OR i.rank > {main_rank}")
    columns = _columns(conn, "pages", skip=("id", "url", "redirect_dest_id", "order"))
    listed = ", ".join(columns)
    conn.execute(
        f"INSERT INTO main.pages(url, {listed}) SELECT p.url, {', '.join('p.' + c for c in columns)}"
        " FROM s.pages AS p JOIN temp.taken AS t ON t.old = p.id"
        " WHERE NOT EXISTS (SELECT 1 FROM main.pages AS m WHERE m.url = p.url) ORDER BY p.id")
    # a page's origins add up: listed in a sitemap (or an inventory) by the shard it came
    # from or by one merged before, whichever recorded it
    taken = ", ".join(f"max(p.{c}, pages.{c})" if c in _ORIGIN_FLAGS else f"p.{c}"
                      for c in columns)
    conn.execute(
        f"UPDATE main.pages SET ({listed}) = (SELECT {taken}"
        " FROM s.pages AS p WHERE p.url = pages.url)"
        " WHERE url IN (SELECT url FROM temp.taken)")
    for flag in _ORIGIN_FLAGS:
        conn.execute(f"UPDATE main.pages SET {flag} = 1 WHERE {flag} = 0 AND url IN"
                     f" (SELECT url FROM s.pages WHERE {flag} = 1)")
    conn.execute("CREATE TEMP TABLE idmap(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    conn.execute("INSERT INTO temp.idmap SELECT p.id, m.id FROM s.pages AS p"
                 " JOIN main.pages AS m ON m.url = p.url")
    conn.execute(
        "UPDATE main.pages SET redirect_dest_id = (SELECT d.new FROM s.pages AS p"
        " JOIN temp.idmap AS d ON d.old = p.redirect_dest_id WHERE p.url = pages.url)"
        " WHERE url IN (SELECT url FROM temp.taken)")
    # Only the recorded pages taken from this shard bring their children.
    conn.execute("DELETE FROM temp.taken WHERE rank < 2")
    conn.execute("INSERT INTO temp.origin(url, shard) SELECT url, ? FROM temp.taken",
                 (str(shard),))


def _offset(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT coalesce(max(id), 0) FROM main.{table}").fetchone()[0])


def _copy_shifted(conn: sqlite3.Connection, table: str, where: str = "",
                  remap: dict[str, str] | None = None) -> int:
    """Copy ``s.table`` with its ids shifted past ``main.table``'s largest; ``remap``: column
    -> the SQL expression of its merged value (over the row ``r``). Returns the shift."""
    offset = _offset(conn, table)
    remap = remap or {}
    columns = _columns(conn, table, skip=("id",))
    values = ", ".join(remap.get(c.strip('"'), f"r.{c}") for c in columns)
    conn.execute(
        f"INSERT INTO main.{table}(id, {', '.join(columns)}) SELECT r.id + ?, {values}"
        f" FROM s.{table} AS r {where} ORDER BY r.id", (offset,))
    return offset


_PAGE_OF = "(SELECT new FROM temp.idmap WHERE old = r.{column})"
_OWNED = "WHERE r.page_id IN (SELECT old FROM temp.taken)"


def _merge_children(conn: sqlite3.Connection) -> None:
    page = _PAGE_OF.format(column="page_id")
    conn.execute(
        "INSERT INTO main.response_headers(page_id, name, value)"
        f" SELECT {page}, r.name, r.value FROM s.response_headers AS r {_OWNED} ORDER BY r.rowid")
    _copy_shifted(conn, "anchors", _OWNED,
                  {"page_id": page, "href_id": _PAGE_OF.format(column="href_id")})
    _copy_shifted(conn, "images", _OWNED, {"page_id": page})
    conn.execute(f"INSERT INTO main.snapshots(page_id, encoding, html)"
                 f" SELECT {page}, r.encoding, r.html FROM s.snapshots AS r {_OWNED}")
    # Resources are keyed by URL: a shared stylesheet is one row, its facts from whichever
    # shard's browser loaded it; its headers from the first shard that has them.
    conn.execute("CREATE TEMP TABLE resource_had_headers AS"
                 " SELECT DISTINCT resource_id AS id FROM main.resource_headers")
    columns = _columns(conn, "resources", skip=("id", "url"))
    conn.execute(
        f"INSERT INTO main.resources(url, {', '.join(columns)})"
        f" SELECT r.url, {', '.join('r.' + c for c in columns)} FROM s.resources AS r WHERE true"
        " ON CONFLICT(url) DO UPDATE SET "
        + ", ".join(f"{c} = coalesce(resources.{c}, excluded.{c})" for c in columns
                    if c not in ('"kind"', '"is_external"')))
    conn.execute(
        "INSERT INTO main.resource_headers(resource_id, name, value)"
        " SELECT m.id, h.name, h.value FROM s.resource_headers AS h"
        " JOIN s.resources AS r ON r.id = h.resource_id JOIN main.resources AS m ON m.url = r.url"
        " WHERE m.id NOT IN (SELECT id FROM temp.resource_had_headers) ORDER BY h.rowid")
    conn.execute(
        "INSERT OR IGNORE INTO main.resource_referrers(resource_id, page_id)"
        f" SELECT m.id, {page} FROM s.resource_referrers AS r"
        " JOIN s.resources AS sr ON sr.id = r.resource_id JOIN main.resources AS m ON m.url = sr.url"
        " WHERE r.page_id IN (SELECT old FROM temp.taken)")
    # Console messages are keyed by their digest.
    columns = _columns(conn, "console_messages", skip=("id",))
    conn.execute(
        f"INSERT OR IGNORE INTO main.console_messages({', '.join(columns)})"
        f" SELECT {', '.join('r.' + c for c in columns)} FROM s.console_messages AS r ORDER BY r.id")
    conn.execute(
        "INSERT OR IGNORE INTO main.page_console_messages(page_id, message_id, position, count)"
        f" SELECT {page}, m.id, r.position, r.count FROM s.page_console_messages AS r"
        " JOIN s.console_messages AS c ON c.id = r.message_id"
        " JOIN main.console_messages AS m ON m.digest = c.digest"
        f" {_OWNED}")
    blocks = _copy_shifted(conn, "json_ld_blocks", _OWNED, {"page_id": page})
    conn.execute(
        "INSERT INTO main.json_ld_types(block_id, type) SELECT r.block_id + ?, r.type"
        " FROM s.json_ld_types AS r WHERE r.block_id IN"
        " (SELECT id FROM s.json_ld_blocks WHERE page_id IN (SELECT old FROM temp.taken))",
        (blocks,))
    _merge_site_audit(conn, page)
    _copy_shifted(conn, "structured_items", _OWNED, {"page_id": page})
    _copy_shifted(conn, "structured_data_errors", _OWNED, {"page_id": page})
    conn.execute("INSERT INTO main.extracted_values(page_id, name, position, value)"
                 f" SELECT {page}, r.name, r.position, r.value FROM s.extracted_values AS r {_OWNED}")
    _merge_content(conn, page)
    runs = _copy_shifted(conn, "runs")
    _copy_shifted(conn, "trap_events", "", {"run_id": f"r.run_id + {runs}"})
    _copy_shifted(conn, "outages", "", {"run_id": f"r.run_id + {runs}"})
    _copy_shifted(conn, "inventory_runs", "", {"run_id": f"r.run_id + {runs}"})
    conn.execute(
        "INSERT INTO main.frontier(key, url, depth, mode, state)"
        " SELECT key, url, depth, mode, state FROM s.frontier WHERE true"
        " ON CONFLICT(key) DO UPDATE SET state = max(frontier.state, excluded.state)")
    _merge_analysis(conn, page)


def _merge_content(conn: sqlite3.Connection, page: str) -> None:
    """A shard's pages' content facts and fragment targets (of the pages it brings), and its
    soft-404 probes."""
    columns = _columns(conn, "page_content", skip=("page_id",))
    conn.execute(
        f"INSERT INTO main.page_content(page_id, {', '.join(columns)})"
        f" SELECT {page}, {', '.join('r.' + c for c in columns)} FROM s.page_content AS r"
        f" {_OWNED}")
    conn.execute("INSERT INTO main.page_fragment_ids(page_id, name)"
                 f" SELECT {page}, r.name FROM s.page_fragment_ids AS r {_OWNED}")
    columns = _columns(conn, "soft404_probes")  # keyed by directory: the first shard's
    conn.execute(f"INSERT OR IGNORE INTO main.soft404_probes({', '.join(columns)})"
                 f" SELECT {', '.join('r.' + c for c in columns)} FROM s.soft404_probes AS r")


def _merge_site_audit(conn: sqlite3.Connection, page: str) -> None:
    """A shard's hreflang alternates (of the pages it brings), sitemap documents (keyed by
    URL: the first shard's row of one), the URLs each lists (every URL the new archive has),
    and certificates (keyed by origin)."""
    conn.execute(
        "INSERT INTO main.hreflang_links(page_id, lang, url)"
        f" SELECT {page}, r.lang, r.url FROM s.hreflang_links AS r {_OWNED} ORDER BY r.rowid")
    columns = _columns(conn, "sitemaps", skip=("id",))
    conn.execute(
        f"INSERT OR IGNORE INTO main.sitemaps({', '.join(columns)})"
        f" SELECT {', '.join('r.' + c for c in columns)} FROM s.sitemaps AS r ORDER BY r.id")
    conn.execute(  # a listing is the URL's, recorded in full or not (an out-of-scope stub)
        "INSERT OR IGNORE INTO main.sitemap_urls(sitemap_id, page_id)"
        f" SELECT m.id, {page} FROM s.sitemap_urls AS r"
        " JOIN s.sitemaps AS d ON d.id = r.sitemap_id JOIN main.sitemaps AS m ON m.url = d.url"
        " WHERE r.page_id IN (SELECT old FROM temp.idmap)")
    conn.execute(
        "INSERT OR IGNORE INTO main.tls_certificates(origin, checked_at, not_after, issuer, error)"
        " SELECT origin, checked_at, not_after, issuer, error FROM s.tls_certificates")


def _merge_analysis(conn: sqlite3.Connection, page: str) -> None:
    """What ``nitpicker analyze`` recorded in a shard, for its recorded pages."""
    analysis = _copy_shifted(conn, "analysis_runs")
    conn.execute(
        "INSERT OR IGNORE INTO main.analyzed_pages(plugin, phase, page_id, run_id, version,"
        " settings_hash, ok)"
        f" SELECT r.plugin, r.phase, {page}, r.run_id + ?, r.version, r.settings_hash, r.ok"
        f" FROM s.analyzed_pages AS r {_OWNED}", (analysis,))
    conn.execute(
        "INSERT OR IGNORE INTO main.page_values(plugin, page_id, key, phase, value, note)"
        f" SELECT r.plugin, {page}, r.key, r.phase, r.value, r.note FROM s.page_values AS r"
        f" {_OWNED}")
    _copy_shifted(conn, "violations", _OWNED, {"page_id": page})
    _copy_shifted(conn, "plugin_errors", "", {
        "run_id": f"r.run_id + {analysis}", "page_id": _PAGE_OF.format(column="page_id")})


def _repoint_redirects(conn: sqlite3.Connection) -> None:
    """A source pointing at a URL another shard found to redirect points where it leads (as one
    crawl points every source at the page its redirects end at). A loop stays as recorded."""
    conn.execute("BEGIN")
    for _ in range(_REPOINT_ROUNDS):
        changed = conn.execute(
            "UPDATE pages SET redirect_dest_id = d.redirect_dest_id FROM pages AS d"
            " WHERE d.id = pages.redirect_dest_id AND d.redirect_dest_id IS NOT NULL"
            " AND d.redirect_dest_id != pages.id AND d.redirect_dest_id != d.id").rowcount
        if not changed:
            break
    conn.execute("COMMIT")


def _finish(path: Path) -> None:
    """What closing a crawl does: runs of dead workers marked lost, the URL order, the
    inbound-link index, statistics, the WAL folded back into one file."""
    from nitpicker.archive.writer import ArchiveWriter

    writer = ArchiveWriter.reopen(path)
    try:
        writer.finish(order=True)
    except BaseException:
        writer.abandon()
        raise
    writer.close()
