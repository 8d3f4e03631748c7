"""Query latency: every ``nitpicker query`` sub-command against the bare SQL it runs.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/query_latency.py [--pages 100000] [--anchors-per-page 50]
                                            [--keep FILE] [--repeat 5]

One run:

1. builds a synthetic archive (>= 100,000 pages, >= 5,000,000 anchors by default) in a temporary
   directory: the schema comes from ``nitpicker.archive.schema.migrate()`` (every migration,
   indexes included), the rows from ``executemany``. Sections of pages with navigation links,
   external links, 404s, fetch errors, redirects, duplicate titles and descriptions, canonical
   and Open Graph mismatches, a path trap and a query trap with one template, images, resources,
   response headers and snapshots. ``--keep FILE`` builds it there once and reuses it later;
2. opens it read-only with ``nitpicker.query.open_archive`` and, for every sub-command (some
   with several flag sets), times the library call, records the SQL statements it ran
   (``set_trace_callback``: the statements with their parameters bound), and times those
   statements run bare on the same connection (``execute().fetchall()``, nothing else);
   each is warmed up once, then the best of ``--repeat`` alternating runs is kept (the run
   least disturbed by other processes);
3. prints, per sub-command: library ms, bare SQL ms, the ratio (target <= 1.5), and the
   ``EXPLAIN QUERY PLAN`` of every statement of the page-scoped queries, checking that none
   of them scans the anchors table.

Always exits 0 once the runs completed: targets are reported, not asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nitpicker.archive.schema import migrate
from nitpicker.query import (
    check_headers,
    find_duplicates,
    find_mismatches,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_resource_referrers,
    get_summary,
    get_violations,
    list_crawl_runs,
    list_images,
    list_links,
    list_pages,
    list_resources,
    open_archive,
)
from nitpicker.query._common import register_functions

BASE = "https://bench.example"
SECTIONS = 100
NAV = 30
EXTERNAL_URLS = 2_000
TRAP_PAGES = 3_000
QUERY_TRAP_PAGES = 1_000
SNAPSHOTS = 2_000
RESOURCES = 200
SEED = 20240607


# -- the synthetic archive -----------------------------------------------------------------------


class Site:
    """Page ids and URLs of the synthetic site, decided before any row is written."""

    def __init__(self, pages: int) -> None:
        self.rng = random.Random(SEED)
        self.rows: list[tuple[Any, ...]] = []
        self.internal_html: list[int] = []
        self.external: list[int] = []
        self.broken: list[int] = []
        self.redirect_sources: list[int] = []
        regular = pages - EXTERNAL_URLS - TRAP_PAGES - QUERY_TRAP_PAGES - 3_500
        self._add_regular(regular)
        self._add_traps()
        self._add_special()
        self.nav = [self.internal_html[i] for i in range(NAV)]

    def _page(self, url: str, **facts: Any) -> int:
        page_id = len(self.rows) + 1
        row = {
            "url": url, "redirect_dest_id": None, "scraped": 1, "is_target": 1, "is_external": 0,
            "depth": 2, "status": 200, "status_text": "OK", "content_type": "text/html",
            "content_length": 20_000, "title": "", "description": "", "keywords": "",
            "canonical": "", "og_title": "", "og_description": "", "og_url": "", "og_type": "",
            "noindex": 0,
        }
        row.update(facts)
        self.rows.append(tuple(row.values()))
        return page_id

    def _add_regular(self, count: int) -> None:
        for n in range(count):
            section = n % SECTIONS
            url = f"{BASE}/s{section}/page-{n}" if n >= SECTIONS else f"{BASE}/s{section}/"
            title = f"Page {n} | Bench" if n % 50 else f"Shared title {n % 400} | Bench"
            description = f"About page {n}." if n % 40 else f"Shared description {n % 300}."
            canonical = url if n % 25 else (f"/s{section}/page-{n + 1}" if n % 2 else "")
            og_title = title if n % 30 else f"OG {title}"
            page_id = self._page(
                url, title=title, description=description, canonical=canonical,
                og_title=og_title if n % 3 else "", og_url=url if n % 3 else "",
                og_type="article" if n % 3 else "", keywords="bench" if n % 7 else "",
                og_description=description if n % 11 else f"OG {description}",
                noindex=int(n % 97 == 0), depth=1 + n % 6,
            )
            self.internal_html.append(page_id)

    def _add_traps(self) -> None:
        for n in range(TRAP_PAGES):
            self.internal_html.append(self._page(
                f"{BASE}/list/date/{1_000_000_000 + n}/", title="Archive | Bench",
                description="Every post, by date.", og_title="Archive | Bench",
                og_url=f"{BASE}/list/", og_type="website"))
        for n in range(QUERY_TRAP_PAGES):
            self.internal_html.append(self._page(
                f"{BASE}/search?page={n}&session={self.rng.getrandbits(48):x}",
                title="Search | Bench", description="Search the site.", og_title="Search",
                og_url=f"{BASE}/search", og_type="website"))

    def _add_special(self) -> None:
        for n in range(EXTERNAL_URLS):
            status = -1 if n % 20 == 0 else (404 if n % 20 == 1 else 200)
            self.external.append(self._page(
                f"https://ext{n % 50}.example/path/{n}", is_external=1, is_target=0,
                status=status, status_text="Connection refused" if status == -1 else "OK",
                title=f"External {n}", content_length=None))
        for n in range(1_500):
            page_id = self._page(f"{BASE}/gone/{n}", status=404, status_text="Not Found",
                                 title="Not Found")
            self.broken.append(page_id)
        for n in range(500):
            self._page(f"{BASE}/files/doc-{n}.pdf", content_type="application/pdf",
                       content_length=100_000)
        for n in range(1_000):
            dest = self.internal_html[self.rng.randrange(len(self.internal_html))]
            if n % 10 == 0:
                dest = self.broken[n % len(self.broken)]
            self.redirect_sources.append(self._page(
                f"{BASE}/old/{n}", status=301, status_text="Moved Permanently",
                content_type=None, redirect_dest_id=dest, is_target=0))
        for n in range(500):
            self._page(f"{BASE}/blocked/{n}", status=None, status_text=None, content_type=None,
                       is_target=0)


def _anchor_rows(site: Site, per_page: int) -> Iterator[tuple[int, int, str]]:
    rng = random.Random(SEED + 1)
    internal = site.internal_html
    others = site.external + site.broken + site.redirect_sources
    for page_id in internal:
        for target in site.nav:
            yield page_id, target, "Nav"
        for _ in range(per_page - NAV - 2):
            yield page_id, internal[rng.randrange(len(internal))], "Read more"
        for _ in range(2):
            yield page_id, others[rng.randrange(len(others))], "Elsewhere"


def _child_rows(site: Site) -> dict[str, Iterator[tuple[Any, ...]]]:
    rng = random.Random(SEED + 2)

    def headers() -> Iterator[tuple[Any, ...]]:
        for page_id in site.internal_html:
            yield page_id, "content-type", "text/html; charset=utf-8"
            yield page_id, "server", "bench"
            yield page_id, "date", "Fri, 07 Jun 2024 00:00:00 GMT"
            yield page_id, "cache-control", "max-age=600"
            if page_id % 4:
                yield page_id, "content-security-policy", "default-src 'self'"
                yield page_id, "x-frame-options", "DENY"
                yield page_id, "x-content-type-options", "nosniff"
                yield page_id, "strict-transport-security", "max-age=31536000"

    def images() -> Iterator[tuple[Any, ...]]:
        for page_id in site.internal_html:
            for k in range(3):
                alt = None if (page_id + k) % 17 == 0 else ("" if (page_id + k) % 19 == 0 else "x")
                width = None if (page_id + k) % 23 == 0 else 640.0
                natural = 4000 if (page_id + k) % 29 == 0 else 1280
                yield page_id, f"{BASE}/img/{(page_id * 3 + k) % 5000}.jpg", alt, width, 480.0, \
                    natural, natural // 2

    def referrers() -> Iterator[tuple[int, int]]:
        for page_id in site.internal_html:
            yield 1, page_id
            for resource_id in rng.sample(range(2, RESOURCES + 1), 4):
                yield resource_id, page_id

    def snapshots() -> Iterator[tuple[Any, ...]]:
        for page_id in site.internal_html[:SNAPSHOTS]:
            html = f"<!doctype html><title>{page_id}</title>" + "<p>text</p>" * 2_000
            yield page_id, "zlib", zlib.compress(html.encode(), 6)

    return {"headers": headers(), "images": images(), "referrers": referrers(),
            "snapshots": snapshots()}


def build_archive(path: Path, pages: int, per_page: int) -> None:
    """Write the synthetic archive at ``path`` (schema by ``migrate()``, rows by executemany)."""
    started = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-500000",
                   "temp_store=MEMORY"):
        conn.execute(f"PRAGMA {pragma}")
    migrate(conn)
    site = Site(pages)
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
        " VALUES (1, 'bench', 'bench', ?, ?, '{}', '2024-06-07T00:00:00+00:00')",
        (f"{BASE}/", json.dumps([f"{BASE}/"])),
    )
    conn.executemany(
        "INSERT INTO pages(url, redirect_dest_id, scraped, is_target, is_external, depth, status,"
        " status_text, content_type, content_length, title, description, keywords, canonical,"
        " og_title, og_description, og_url, og_type, noindex)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        site.rows,
    )
    _progress("pages", len(site.rows), started)
    conn.executemany("INSERT INTO anchors(page_id, href_id, text) VALUES (?, ?, ?)",
                     _anchor_rows(site, per_page))
    _progress("anchors", conn.execute("SELECT max(id) FROM anchors").fetchone()[0], started)
    _insert_children(conn, site)
    conn.execute("COMMIT")
    conn.close()
    _progress("done", len(site.rows), started)


def _insert_children(conn: sqlite3.Connection, site: Site) -> None:
    children = _child_rows(site)
    conn.executemany("INSERT INTO response_headers(page_id, name, value) VALUES (?, ?, ?)",
                     children["headers"])
    conn.executemany(
        "INSERT INTO images(page_id, src, alt, width, height, natural_width, natural_height)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)", children["images"])
    conn.executemany(
        "INSERT INTO resources(id, url, kind, is_external, status, content_type) VALUES (?, ?, ?, ?, ?, ?)",
        [(n, f"{BASE}/assets/{n}.{'css' if n % 2 else 'js'}", "stylesheet" if n % 2 else "script",
          int(n % 10 == 0), 200, "text/css" if n % 2 else "text/javascript")
         for n in range(1, RESOURCES + 1)])
    conn.executemany("INSERT INTO resource_referrers(resource_id, page_id) VALUES (?, ?)",
                     children["referrers"])
    conn.executemany("INSERT INTO snapshots(page_id, encoding, html) VALUES (?, ?, ?)",
                     children["snapshots"])
    conn.executemany(
        "INSERT INTO runs(kind, pid, started_at, ended_at, status, stop_reason, pages_done, errors,"
        " error_code) VALUES (?, 1, '2024-06-07T00:00:00', '2024-06-07T01:00:00', ?, ?, ?, ?, ?)",
        [("crawl", "stopped", "max_pages", 50_000, 12, "page_limit"),
         ("resume", "finished", "finished", 50_000, 3, None)],
    )


def _progress(what: str, n: int, started: float) -> None:
    print(f"  {what:<8} {n:>10,}  {time.perf_counter() - started:6.1f} s", file=sys.stderr)


# -- measuring -----------------------------------------------------------------------------------


def _elapsed_ms(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


class _RecordingCursor(sqlite3.Cursor):
    """A cursor that notes every (statement, parameters) it executes."""

    log: list[tuple[str, Any]]

    def execute(self, sql: str, parameters: Any = (), /) -> _RecordingCursor:
        self.log.append((sql, parameters))
        super().execute(sql, parameters)
        return self


class _RecordingConnection:
    """Stands in for the connection while a library call's statements are recorded."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.log: list[tuple[str, Any]] = []

    def cursor(self) -> _RecordingCursor:
        cursor = self._conn.cursor(_RecordingCursor)
        cursor.log = self.log
        return cursor

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor().execute(sql, parameters)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _recorded(conn: sqlite3.Connection, call: Callable[[Any], object]) -> list[tuple[str, Any]]:
    """The statements (with their parameters) that ``call`` runs."""
    recorder = _RecordingConnection(conn)
    call(recorder)
    return recorder.log


def _bare(conn: sqlite3.Connection, statements: list[tuple[str, Any]]) -> Callable[[], None]:
    def run() -> None:
        for sql, parameters in statements:
            conn.execute(sql, parameters).fetchall()
    return run


def _plan(conn: sqlite3.Connection, sql: str, parameters: Any) -> list[str]:
    rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters).fetchall()
    return [row[3] for row in rows]


def _scans_anchors(plan: list[str]) -> bool:
    return any(line.startswith("SCAN") and line.split()[1] in ("a", "anchors") for line in plan)


Call = Callable[[Any], object]


def cases(conn: sqlite3.Connection) -> list[tuple[str, bool, Call]]:
    """(label, page-scoped, library call on a connection) for every sub-command."""
    url = conn.execute("SELECT url FROM pages WHERE id = 5000").fetchone()[0]
    nav = conn.execute("SELECT url FROM pages WHERE id = 1").fetchone()[0]
    html = conn.execute("SELECT p.url FROM snapshots s JOIN pages p ON p.id = s.page_id"
                        " LIMIT 1").fetchone()[0]
    resource = f"{BASE}/assets/1.css"
    return [
        ("summary", False, get_summary),
        ("pages", False, list_pages),
        ("pages --sort-by title", False, lambda c: list_pages(c, sort_by="title")),
        ("pages --status-min 400", False, lambda c: list_pages(c, status_min=400)),
        ("pages --is-external --sort-by status", False,
         lambda c: list_pages(c, is_external=True, sort_by="status")),
        ("pages --directory /s7/ --missing-description", False,
         lambda c: list_pages(c, directory="/s7/", missing_description=True)),
        ("page-detail (a page)", True, lambda c: get_page_detail(c, url)),
        ("page-detail (nav target, 95k inbound)", True, lambda c: get_page_detail(c, nav)),
        ("html", True, lambda c: get_page_html(c, html)),
        ("links --type broken", True, lambda c: list_links(c, "broken")),
        ("links --type external", True, lambda c: list_links(c, "external")),
        ("links --type orphaned", True, lambda c: list_links(c, "orphaned")),
        ("resources --content-type text/css", False,
         lambda c: list_resources(c, content_type="text/css")),
        ("resource-referrers (on every page)", True,
         lambda c: get_resource_referrers(c, resource)),
        ("images", False, list_images),
        ("images --missing-alt", False, lambda c: list_images(c, missing_alt=True)),
        ("images --missing-dimensions", False, lambda c: list_images(c, missing_dimensions=True)),
        ("images --oversized-threshold 2000", False,
         lambda c: list_images(c, oversized_threshold=2000)),
        ("violations", False, get_violations),
        ("duplicates --field title", False, lambda c: find_duplicates(c, "title")),
        ("duplicates --field description", False, lambda c: find_duplicates(c, "description")),
        ("mismatches --type canonical", False, lambda c: find_mismatches(c, "canonical")),
        ("mismatches --type og:title", False, lambda c: find_mismatches(c, "og:title")),
        ("mismatches --type og:description", False,
         lambda c: find_mismatches(c, "og:description")),
        ("headers", False, check_headers),
        ("headers --missing-only", False, lambda c: check_headers(c, missing_only=True)),
        ("duplicate-clusters", False, get_duplicate_clusters),
        ("runs", False, list_crawl_runs),
    ]


def _alternating(library: Callable[[], object], bare: Callable[[], object], repeat: int
                 ) -> tuple[float, float]:
    """Best ms of each, run alternately after one warm-up of both (the best run is the least
    disturbed by other processes)."""
    library()
    bare()
    library_ms, bare_ms = [], []
    for _ in range(repeat):
        library_ms.append(_elapsed_ms(library))
        bare_ms.append(_elapsed_ms(bare))
    return min(library_ms), min(bare_ms)


def measure(path: Path, repeat: int, all_plans: bool) -> None:
    conn = open_archive(path)
    register_functions(conn)  # the bare statements call the same SQL functions
    pages, anchors = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                      for t in ("pages", "anchors"))
    print(f"archive: {pages:,} pages, {anchors:,} anchors, {path.stat().st_size / 1e6:,.0f} MB;"
          f" sqlite {sqlite3.sqlite_version}; best of {repeat} alternating runs\n")
    print(f"{'sub-command':<46} {'library ms':>10} {'bare SQL ms':>11} {'ratio':>6}  stmts")
    plans: list[tuple[str, str, list[str]]] = []
    worst = worst_slow = 0.0
    for label, page_scoped, call in cases(conn):
        statements = _recorded(conn, call)
        library_ms, bare_ms = _alternating(partial(call, conn), _bare(conn, statements), repeat)
        ratio = library_ms / bare_ms if bare_ms else 1.0
        worst = max(worst, ratio)
        if bare_ms >= 1.0:
            worst_slow = max(worst_slow, ratio)
        flag = "" if ratio <= 1.5 else "  > 1.5"
        print(f"{label:<46} {library_ms:>10.2f} {bare_ms:>11.2f} {ratio:>6.2f}  "
              f"{len(statements)}{flag}")
        if page_scoped or all_plans:
            plans += [(label, sql, _plan(conn, sql, params)) for sql, params in statements]
    print(f"\nworst ratio: {worst:.2f}; of the statements taking 1 ms or more: {worst_slow:.2f}"
          " (target <= 1.5)")
    _print_plans(plans)
    conn.close()


def _print_plans(plans: list[tuple[str, str, list[str]]]) -> None:
    print("\nEXPLAIN QUERY PLAN")
    scans = 0
    for label, sql, plan in plans:
        text = " ".join(sql.split())
        print(f"\n[{label}] {text[:110]}{'…' if len(text) > 110 else ''}")
        for line in plan:
            print(f"    {line}")
        scans += _scans_anchors(plan)
    verdict = "no statement scans the anchors table" if not scans else (
        f"{scans} statement(s) scan the anchors table")
    print(f"\nanchors: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000,
                        help="pages in the synthetic archive (default 100,000)")
    parser.add_argument("--anchors-per-page", type=int, default=53,
                        help="links on each internal page (default 53: 5,008,500 anchors)")
    parser.add_argument("--repeat", type=int, default=9,
                        help="alternating runs of each; the best is kept (default 9)")
    parser.add_argument("--keep", type=Path, help="build the archive here once, reuse it after")
    parser.add_argument("--all-plans", action="store_true",
                        help="print the plan of every statement, not only the page-scoped ones")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nitpicker-query-bench-") as tmp:
        path = args.keep or Path(tmp) / "bench.nitpicker"
        if not path.exists():
            print(f"building {path} …", file=sys.stderr)
            build_archive(path, args.pages, args.anchors_per_page)
        measure(path, args.repeat, args.all_plans)
    return 0


if __name__ == "__main__":
    sys.exit(main())
