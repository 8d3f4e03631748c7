"""PageRecorder: what a crawl learns about each URL, written into the archive's page tables.

One call records one URL's result (:meth:`PageRecorder.record`): its ``pages`` row, its child
rows (response headers, anchors, images, resources and their referrers and headers, JSON-LD
blocks and their types, structured data items, ``--extract`` values, console messages — each
distinct message once, linked to every page that showed it —, hreflang alternates and the
snapshot), the rows of its redirect hops, the stub rows of the pages it links to, the frontier
rows of the links to follow and the acknowledgement of its own frontier row, all in the open
batch; the URLs a page's own resources answered (:meth:`PageRecorder.record_answered`) are
recorded alongside, without a request of their own. Sitemap listings (:meth:`PageRecorder.record_sitemap`) and, when a run closes, the URL
order (:meth:`PageRecorder.set_url_order`) are page facts too.

Page ids of recently seen URLs are cached (bounded): most links of a page are the site's
navigation, whose rows were found long ago.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from nitpicker.archive import page_audit, page_sql, snapshots
from nitpicker.archive.connection import json_rows, now, serialised, sorting_on_disk
from nitpicker.archive.content_signer import ContentSigner
from nitpicker.archive.page_data import record_page_data, store_signatures
from nitpicker.items import MAX_URL_LENGTH, FollowMode
from nitpicker.policy.urls import frontier_key, natural_order_key

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from nitpicker.archive.batch import Batch
    from nitpicker.archive.budget import SizeBudget
    from nitpicker.archive.frontier_port import FrontierPort
    from nitpicker.items import ConsoleRecord, LinkRecord, PageItem, ResourceRecord

__all__ = ["PageRecorder"]

_UNFETCHED = (FollowMode.STUB, FollowMode.EXCLUDED, FollowMode.CAPPED)
_ID_CACHE_SIZE = 50_000
_CHUNK = 400


class _PreparedPage(NamedTuple):
    """A fetched page's statement parameters (:meth:`PageRecorder._prepare`)."""

    values: tuple[object, ...]
    """:data:`~nitpicker.archive.page_sql.RECORD_PAGE`'s parameters."""
    headers: str | None
    """The response headers as JSON rows."""
    fresh: str | None
    """(url, is_external) of link targets whose ids are not cached, as JSON rows."""
    anchors: str | None
    """(target id or null, url, hash, text) of the links, as JSON rows."""
    images: list[tuple[object, ...]]
    images_json: str | None
    """:attr:`images` as JSON rows (``None``: none, or a width or height JSON cannot hold)."""
    snapshot: bytes | None
    """The HTML as stored (:func:`~nitpicker.archive.snapshots.compress`)."""


class PageRecorder:
    """Records pages, their child rows and sitemap listings; numbers pages in URL order."""

    def __init__(self, archive: Batch, frontier: FrontierPort, budget: SizeBudget) -> None:
        self._archive = archive
        self._conn = archive.conn
        self._mutex = archive.mutex
        self._begin = archive.begin
        self._frontier = frontier
        self._checks_leases = frontier.checks_leases
        self._budget = budget
        self._ids: OrderedDict[str, int] = OrderedDict()
        self.signer = ContentSigner()
        """Signs the main contents recorded in the open batch (:meth:`store_signatures`)."""

    def store_signatures(self) -> None:
        """Sign the open batch's main contents (the writer calls it before each commit)."""
        store_signatures(self._conn, self.signer)

    def use_frontier(self, frontier: FrontierPort) -> None:
        """Acknowledge and queue in ``frontier`` (:meth:`~nitpicker.archive.writer.ArchiveWriter.use_frontier`)."""
        self._frontier = frontier
        self._checks_leases = frontier.checks_leases

    def forget(self) -> None:
        """The open batch was rolled back: the ids of rows created in it may be gone, and
        its main contents' signatures have no row to go to."""
        self._ids.clear()
        self.signer.collect()

    def _cache_id(self, url: str, page_id: int) -> None:
        self._ids[url] = page_id
        if len(self._ids) > _ID_CACHE_SIZE:
            self._ids.popitem(last=False)

    @serialised
    def ids(self, urls: Mapping[str, tuple[bool, int | None]]) -> dict[str, int]:
        """Ids of page rows for ``{url: (is_external, depth)}``, creating stub rows as needed."""
        found: dict[str, int] = {}
        missing: list[str] = []
        for url in urls:
            page_id = self._ids.get(url)
            if page_id is None:
                missing.append(url)
            else:
                found[url] = page_id
        if missing:
            self._conn.executemany(
                "INSERT OR IGNORE INTO pages(url, is_external, depth) VALUES (?, ?, ?)",
                [(u, int(urls[u][0]), urls[u][1]) for u in missing],
            )
            for start in range(0, len(missing), _CHUNK):
                chunk = missing[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for page_id, url in self._conn.execute(
                    f"SELECT id, url FROM pages WHERE url IN ({marks})", chunk
                ):
                    found[url] = page_id
                    self._cache_id(url, page_id)
        return found

    def record(self, item: PageItem, new_links: list[tuple[str, str, int, int]]) -> int:
        """Record one URL's result, its links, and acknowledge its frontier row.

        The statements' parameters (the row's values, the links and headers as JSON, the
        compressed snapshot) are built first, before the writer's mutex and its transaction:
        with several workers (``--workers``) the transaction holds the archive's one write
        lock, which the other workers wait for.

        With several workers, a page whose row is no longer leased by this one (its lease
        expired and another worker took it) is dropped: 0, nothing written.
        """
        page = None if item.redirect_link is not None else self._prepare(item)
        with self._mutex:
            return self._record(item, new_links, page)

    def _record(self, item: PageItem, new_links: list[tuple[str, str, int, int]],
                page: _PreparedPage | None) -> int:
        self._begin()
        if (self._checks_leases and item.frontier_id is not None
                and not self._frontier.holds(item.frontier_id)):
            return 0
        budget = self._budget
        if budget.pages is not None:
            links = len(item.links)
            budget.cap_for_crawl(1 + links + len(item.redirects), links)
        if page is None:
            page_id = self._record_handed_over(item)
        else:
            page_id = self._record_page(item, page)
        frontier = self._frontier
        if item.frontier_id is not None:
            frontier.acknowledge(item.frontier_id)
        if new_links:
            frontier.add(new_links)
        self._archive.dirty += 1
        return page_id

    def _prepare(self, item: PageItem) -> _PreparedPage:
        """A fetched page's statement parameters, built without touching the archive.

        The links' JSON carries the ids of the targets this recorder knows already; the
        others' are looked up by URL in the statement (their stub rows are made first)."""
        meta = item.meta
        values = (
            item.url, item.is_target, item.is_external, item.depth, item.status,
            item.status_text, item.content_type, item.content_length, meta.lang, meta.title,
            meta.description, meta.keywords, meta.noindex, meta.nofollow, meta.noarchive,
            meta.canonical, meta.alternate, meta.og_type, meta.og_title, meta.og_site_name,
            meta.og_description, meta.og_url, meta.og_image, meta.twitter_card, item.is_skipped,
            item.skip_reason, now(), item.links_capped, item.response_time_ms, item.charset,
            meta.h1_count, meta.canonical_relative, item.untried)
        headers = json_rows(item.headers) if item.headers else None
        fresh = anchors = None
        if item.links:
            get = self._ids.get
            known: dict[str, bool] = {}
            rows = []
            for link in item.links:
                url = link.url
                page_id = get(url)
                if page_id is None:
                    known.setdefault(url, link.is_external)
                rows.append((page_id, url, link.hash, link.text))
            fresh = json_rows(list(known.items())) if known else None
            anchors = json_rows(rows)
        images: list[tuple[object, ...]] = [
            (i.src, i.current_src, i.alt, i.width, i.height, i.natural_width, i.natural_height,
             i.is_lazy, i.viewport_width, i.source_code, i.file_size)
            for i in item.images
        ]
        # JSON holds no NaN or infinity (a hostile page's sizes): those rows are bound instead
        images_json = json_rows(images) if images and all(
            math.isfinite(size) for i in item.images for size in (i.width, i.height)
            if size is not None) else None
        snapshot = None
        if item.snapshot is not None:
            snapshot = item.snapshot  # compressed where the page was read
        elif item.html is not None:
            snapshot = snapshots.compress(item.html)
        return _PreparedPage(values, headers, fresh, anchors, images, images_json, snapshot)

    def _record_page(self, item: PageItem, page: _PreparedPage) -> int:
        """The page's row and children; its redirect hops point at it."""
        conn = self._conn
        seen = conn.execute(page_sql.SCRAPED, (item.url,)).fetchone()
        row = conn.execute(page_sql.RECORD_PAGE, page.values).fetchone()
        page_id = int(row[0])
        self._cache_id(item.url, page_id)
        self._replace_children(page_id, item, page, fetched_before=bool(seen and seen[0]))
        if item.redirects:
            self._record_hops(item, page_id, page_id)
            self._frontier.mark_done(frontier_key(item.url))
        return page_id

    def _record_handed_over(self, item: PageItem) -> int:
        """A redirect handed over: its hops point at the target's row (a stub until the target's
        own row is fetched), or where the target leads when it is a redirect itself. The target
        row is not touched: whatever its own fetch records stays."""
        target = item.redirect_link
        assert target is not None
        conn = self._conn
        dest_id = self.ids({target.url: (target.is_external, item.depth)})[target.url]
        if target.mode in _UNFETCHED:
            self._record_unfetched(target)
        row = conn.execute("SELECT redirect_dest_id FROM pages WHERE id = ?", (dest_id,)).fetchone()
        final_id = dest_id if row is None or row[0] is None else int(row[0])
        self._record_hops(item, dest_id, final_id)
        return dest_id

    def _record_hops(self, item: PageItem, dest_id: int, final_id: int) -> None:
        """The rows of ``item``'s redirect hops, pointing at ``final_id``; sources that pointed
        at a hop point at ``final_id`` too (every source points at the page its redirects end
        at). ``dest_id`` is the URL the last hop led to (``final_id`` unless it redirects)."""
        conn = self._conn
        frontier = self._frontier
        at = now()
        following = [*(hop.url for hop in item.redirects[1:]), item.url]  # each hop's next
        for hop, next_url in zip(item.redirects, following, strict=True):
            if hop.url == item.url:
                continue  # a self-redirect (e.g. an auth challenge) is not a source
            external = item.is_external if hop.is_external is None else hop.is_external
            hop_id, was_page = conn.execute(
                page_sql.RECORD_HOP,
                (hop.url, external, item.depth, hop.status, final_id, hop.kind, next_url, at),
            ).fetchone()
            if was_page is not None:  # fetched again (a recrawl), it redirects now
                self._forget_page(hop_id)
            self._cache_id(hop.url, hop_id)
            frontier.mark_done(frontier_key(hop.url))
            if hop_id == final_id:
                # Two URLs redirecting to each other, each met by its own request: the hop
                # points at the URL it sends to, not at itself.
                conn.execute("UPDATE pages SET redirect_dest_id = ? WHERE id = ?",
                             (dest_id, hop_id))
                continue
            conn.execute(page_sql.REPOINT, (final_id, hop_id, final_id))

    def _forget_page(self, page_id: int) -> None:
        """A row recorded as a page: its page facts and child rows gone (it is a redirect)."""
        conn = self._conn
        conn.execute(page_sql.FORGET_JSON_LD_TYPES, (page_id,))
        for table in page_sql.FETCHED_CHILDREN:
            conn.execute(f"DELETE FROM {table} WHERE page_id = ?", (page_id,))
        conn.execute(page_sql.FORGET_PAGE_FACTS, (page_id,))

    @serialised
    def record_answered(self, items: list[PageItem]) -> int:
        """Record URLs a page's resources answered (no request of their own): each is a page
        row with its response's facts, its frontier row done (inserted done, or a pending one
        marked done). A URL whose frontier row is leased or done already keeps what its own
        request records. Returns how many were recorded."""
        self._begin()
        if self._budget.pages is not None:
            self._budget.cap_for_crawl(len(items))
        recorded = 0
        for item in items:
            row = self._conn.execute("SELECT scraped FROM pages WHERE url = ?",
                                     (item.url,)).fetchone()
            if row is not None and row[0]:
                continue  # recorded already (fetched, or a redirect's destination)
            mode = FollowMode.FULL if item.is_target else FollowMode.METADATA
            if self._frontier.settle(frontier_key(item.url), item.url, item.depth, int(mode)):
                self.record(item, [])
                recorded += 1
        return recorded

    @serialised
    def record_sitemap(self, entries: list[tuple[str, bool]], depth: int = 1) -> int:
        """Mark ``(url, is_external)`` pages as listed in a sitemap; queue the in-scope ones."""
        return self._record_listed(page_sql.MARK_SITEMAP, entries, depth)

    @serialised
    def record_inventory(self, entries: list[tuple[str, bool]], depth: int = 1,
                         excluded: Collection[str] = ()) -> int:
        """Mark ``(url, is_external)`` pages as listed in the inventory (``--inventory``);
        queue the in-scope ones, as sitemap URLs are, but those ``excluded`` (``--exclude``,
        ``--exclude-url``): they are skipped rows, as an excluded link is."""
        return self._record_listed(page_sql.MARK_INVENTORY, entries, depth, excluded)

    def _record_listed(self, mark: str, entries: list[tuple[str, bool]], depth: int,
                       excluded: Collection[str] = ()) -> int:
        self._begin()
        if self._budget.pages is not None:
            self._budget.cap_for_crawl(len(entries))
        ids = self.ids({url: (external, depth) for url, external in entries})
        self._conn.executemany(mark, [(ids[url],) for url, _ in entries])
        if excluded:
            self._conn.executemany(
                "UPDATE pages SET scraped = 1, is_skipped = 1, skip_reason = 'excluded'"
                " WHERE id = ? AND scraped = 0", [(ids[url],) for url in excluded])
        added = self._frontier.add(
            (frontier_key(url), url, depth, 0) for url, external in entries
            if not external and url not in excluded
        )
        self._archive.dirty += 1
        return added

    def _replace_children(self, page_id: int, item: PageItem, page: _PreparedPage, *,
                          fetched_before: bool) -> None:
        """The page's child rows; those of an earlier fetch go first (``fetched_before``:
        only a fetched row has children, so a stub's first fetch deletes nothing)."""
        conn = self._conn
        if fetched_before:
            conn.execute(page_sql.FORGET_JSON_LD_TYPES, (page_id,))
            for table in page_sql.REPLACED_CHILDREN:
                conn.execute(f"DELETE FROM {table} WHERE page_id = ?", (page_id,))
        if page.headers is not None:
            conn.execute(
                "INSERT INTO response_headers(page_id, name, value)"
                " SELECT ?, value ->> 0, value ->> 1 FROM json_each(?)",
                (page_id, page.headers),
            )
        if page.anchors is not None:
            self._insert_links(page_id, item.links, item.depth + 1, page)
        if page.images_json is not None:
            conn.execute(page_sql.RECORD_IMAGES, (page_id, page.images_json))
        elif page.images:
            conn.executemany(page_sql.RECORD_IMAGE, [(page_id, *image) for image in page.images])
        if item.resources:
            self._insert_resources(page_id, item.resources)
        if (item.json_ld or item.structured or item.structured_errors or item.extracted
                or item.content is not None):
            record_page_data(conn, page_id, item, self.signer)
        page_audit.record_page_audit(conn, page_id, item, fetched_before=fetched_before)
        if item.console:
            self._insert_console(page_id, item.console)
        if page.snapshot is not None:
            conn.execute(
                "INSERT OR REPLACE INTO snapshots(page_id, encoding, html) VALUES (?, ?, ?)",
                (page_id, snapshots.ENCODING, page.snapshot),
            )

    def _insert_console(self, page_id: int, records: list[ConsoleRecord]) -> None:
        # A message shown by many pages (a shared script's warning) is one row: inserted by
        # the first page, found by its digest for the others.
        conn = self._conn
        digests = [record.digest for record in records]
        conn.executemany(
            page_sql.RECORD_CONSOLE_MESSAGE,
            [(digest, r.kind, r.level, r.text, r.source_url, r.line, r.column)
             for digest, r in zip(digests, records, strict=True)],
        )
        conn.executemany(
            page_sql.LINK_CONSOLE_MESSAGE,
            [(page_id, position, r.count, digest)
             for position, (digest, r) in enumerate(zip(digests, records, strict=True))],
        )

    def _insert_links(self, page_id: int, links: list[LinkRecord], depth: int,
                      page: _PreparedPage) -> None:
        # A page's links go to SQLite as JSON arrays, a statement for all of them, so the GIL
        # stays free while SQLite works. Targets already known by id (most of them: the
        # site's navigation) skip the lookup; new ones get their stub row first.
        conn = self._conn
        if page.fresh is not None:
            for new_id, url in conn.execute(
                "INSERT OR IGNORE INTO pages(url, is_external, depth)"
                " SELECT value ->> 0, value ->> 1, ? FROM json_each(?) RETURNING id, url",
                (depth, page.fresh),
            ).fetchall():
                self._cache_id(url, new_id)
        conn.execute(
            "INSERT INTO anchors(page_id, href_id, hash, text)"
            " SELECT ?, coalesce(value ->> 0, (SELECT id FROM pages WHERE url = value ->> 1)),"
            " value ->> 2, value ->> 3 FROM json_each(?)",
            (page_id, page.anchors),
        )
        for link in links:
            if link.mode in _UNFETCHED:
                self._record_unfetched(link)
            elif link.mode is FollowMode.INVALID:
                conn.execute(
                    "UPDATE pages SET scraped = 1, status = -1, status_text = ?, is_skipped = 1,"
                    " skip_reason = 'url too long' WHERE url = ? AND scraped = 0",
                    (f"URL too long ({link.hash} characters, at most {MAX_URL_LENGTH})", link.url),
                )

    def _record_unfetched(self, link: LinkRecord) -> None:
        reasons = {FollowMode.EXCLUDED: "excluded", FollowMode.CAPPED: "dedupe cap"}
        reason = reasons.get(link.mode)
        self._conn.execute(
            "UPDATE pages SET scraped = 1, is_skipped = ?, skip_reason = ?"
            " WHERE url = ? AND scraped = 0",
            (int(reason is not None), reason, link.url),
        )

    def _insert_resources(self, page_id: int, resources: list[ResourceRecord]) -> None:
        # Two statements for all of a page's resources (JSON arrays, as its links): the
        # archive's thread takes the GIL back once a statement, not once a row.
        conn = self._conn
        conn.execute(page_sql.RECORD_RESOURCES, (json_rows([
            (r.url, r.kind, r.is_external, r.status, r.status_text, r.content_type,
             r.content_length, r.compress, r.cdn)
            for r in resources
        ]),))
        conn.execute(page_sql.REFER_RESOURCES, (page_id, json_rows([r.url for r in resources])))
        loaded = [r for r in resources if r.headers]
        if loaded:
            conn.executemany(
                "DELETE FROM resource_headers"
                " WHERE resource_id = (SELECT id FROM resources WHERE url = ?)",
                [(r.url,) for r in loaded],
            )
            conn.executemany(
                "INSERT INTO resource_headers(resource_id, name, value)"
                " SELECT id, ?, ? FROM resources WHERE url = ?",
                [(name, value, r.url) for r in loaded for name, value in r.headers],
            )

    @serialised
    def unfetch_now_in_scope(self, is_in_scope: Callable[[str], bool]) -> list[tuple[int, str]]:
        """Out-of-scope rows now in scope lose their fetched facts, their ids kept.

        Their child rows (anchors, images, headers, snapshot, resource referrers, console
        messages, JSON-LD blocks) are removed
        and their fetched columns reset (``--append``). Returns (id, url).
        """
        self._begin()
        rows = [
            (page_id, url)
            for page_id, url in self._conn.execute(
                "SELECT id, url FROM pages WHERE is_external = 1 AND redirect_dest_id IS NULL")
            if is_in_scope(url)
        ]
        ids = [(page_id,) for page_id, _ in rows]
        self._conn.executemany(page_sql.FORGET_JSON_LD_TYPES, ids)
        for table in page_sql.FETCHED_CHILDREN:
            self._conn.executemany(f"DELETE FROM {table} WHERE page_id = ?", ids)
        self._conn.executemany(
            "UPDATE pages SET scraped = 0, is_external = 0, is_target = 0, status = NULL,"
            " status_text = NULL, content_type = NULL, content_length = NULL, title = '',"
            " description = '', is_skipped = 0, skip_reason = NULL, fetched_at = NULL, charset = NULL"
            " WHERE id = ?",
            ids,
        )
        for _, url in rows:
            self._ids.pop(url, None)
        return rows

    @serialised
    def unreachable(self, urls: tuple[str, ...]) -> dict[str, str]:
        """Of ``urls``, those fetched with no HTTP answer (status -1, at the end of their
        redirects): url -> the fetch error. A URL not fetched yet is not among them."""
        found: dict[str, str] = {}
        for url in urls:
            row = self._conn.execute(
                "SELECT coalesce(d.status, p.status), coalesce(d.status_text, p.status_text)"
                " FROM pages p LEFT JOIN pages d ON d.id = p.redirect_dest_id WHERE p.url = ?",
                (url,),
            ).fetchone()
            if row is not None and row[0] == -1:
                found[url] = row[1] or ""
        return found

    @serialised
    def set_url_order(self) -> None:
        """Fill ``pages.order``: the natural URL order of internal pages, 1..N.

        SQLite sorts by the byte-encoded :func:`natural_order_key`, in temporary files: the
        URLs are never all in memory at once (300,000 of them would be ~350 MB as keys).
        """
        archive = self._archive
        archive.commit()
        conn = self._conn
        conn.create_function("natural_order_key", 1, natural_order_key, deterministic=True)
        with sorting_on_disk(conn):
            self._begin()
            conn.execute('UPDATE pages SET "order" = NULL WHERE "order" IS NOT NULL')
            conn.execute(
                'UPDATE pages SET "order" = ranked.n FROM ('
                " SELECT id, row_number() OVER (ORDER BY natural_order_key(url)) AS n"
                " FROM pages WHERE is_external = 0 AND redirect_dest_id IS NULL"
                ") AS ranked WHERE pages.id = ranked.id"
            )
            archive.commit()
