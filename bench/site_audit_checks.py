"""The site checks on a synthetic 100,000-page archive with hreflang, sitemaps, redirect chains,
cookies and HSTS on every page: how long each check takes (issue 30: the post-crawl checks in
at most 60 s on 100,000 pages).

    .venv/bin/python bench/site_audit_checks.py [--pages 100000]

The archive is written in SQL (no crawl): ``--pages`` pages in sets of ten languages, each page
naming its set's ten URLs in hreflang tags (one return link missing in every hundred pages), all
in one sitemap but every fiftieth, 5,000 redirect chains of three hops, and a cookie without
attributes and a short HSTS on every page. Prints the checks' total and the twelve slowest.
Figures are reported, not asserted.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from nitpicker.archive.check_store import record_checks
from nitpicker.archive.schema import migrate
from nitpicker.query.checks import CHECKS, Check

BASE = "https://site.test"
LANGS = ("en", "de", "fr", "es", "it", "nl", "sv", "pt", "ja", "x-default")


def build(path: Path, pages: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
                 " VALUES (1, 'bench', 'bench', ?, ?, '{}', 'now')", (BASE + "/", f'["{BASE}/"]'))
    conn.executemany(
        "INSERT INTO pages(url, scraped, is_target, status, content_type, in_sitemap, h1_count)"
        " VALUES (?, 1, 1, 200, 'text/html', 1, 1)",
        ((f"{BASE}/{LANGS[n % 10]}/p{n // 10}",) for n in range(pages)))
    conn.execute("UPDATE pages SET canonical = url")
    conn.execute("INSERT INTO sitemaps(url, status, kind, entries, size)"
                 " VALUES (?, 200, 'urlset', ?, 1000)", (BASE + "/sitemap.xml", pages))
    conn.execute("INSERT INTO sitemap_urls SELECT 1, id FROM pages WHERE id % 50 != 0")
    conn.execute("UPDATE pages SET in_sitemap = 0 WHERE id % 50 = 0")
    urls = dict(conn.execute("SELECT id, url FROM pages"))
    ids = sorted(urls)
    rows = []
    for start in range(0, len(ids), 10):
        group = ids[start:start + 10]
        for page in group:
            rows += [(page, LANGS[n], urls[other]) for n, other in enumerate(group)
                     if not (page % 100 == 1 and n == 1)]
    conn.executemany("INSERT INTO hreflang_links(page_id, lang, url) VALUES (?, ?, ?)", rows)
    for k in range(5000):
        a, b, c = (f"{BASE}/old/{k}/{hop}" for hop in range(3))
        conn.execute("INSERT INTO pages(url, scraped, status, redirect_dest_id, redirect_next)"
                     " VALUES (?, 1, 301, 1, ?), (?, 1, 301, 1, ?), (?, 1, 301, 1, ?)",
                     (a, b, b, c, c, f"{BASE}/en/p{k}"))
    conn.execute("INSERT INTO response_headers(page_id, name, value)"
                 " SELECT id, 'set-cookie', 'sid=1; Path=/' FROM pages")
    conn.execute("INSERT INTO response_headers(page_id, name, value)"
                 " SELECT id, 'strict-transport-security', 'max-age=600' FROM pages")
    conn.execute("COMMIT")
    return conn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        conn = build(Path(directory) / "bench.nitpicker", args.pages)
        (pages,) = conn.execute("SELECT count(*) FROM pages").fetchone()
        (hreflang,) = conn.execute("SELECT count(*) FROM hreflang_links").fetchone()
        timings: dict[str, tuple[float, int]] = {}
        last = [time.monotonic()]

        def on_check(check: Check, found: int) -> None:
            now = time.monotonic()
            timings[check.id] = (now - last[0], found)
            last[0] = now

        summary = record_checks(conn, CHECKS, on_check=on_check)
        conn.close()
    print(f"{pages:,} page rows, {hreflang:,} hreflang tags")
    print(f"all {summary.checks} checks: {summary.elapsed:.1f} s, {summary.findings:,} findings")
    for check_id, (seconds, found) in sorted(timings.items(), key=lambda item: -item[1][0])[:12]:
        print(f"  {check_id}: {seconds:.2f} s, {found:,} findings")


if __name__ == "__main__":
    main()
