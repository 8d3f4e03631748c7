"""Scale benchmark: one long HTTP crawl of a generated site, measured at steps.

    .venv/bin/python bench/scale.py [--pages 300000] [--steps 10000,50000,100000]

A site of ``--pages`` pages (each ~6 KB with 30 links: neighbours, a deterministic
scatter across the whole site, and a site-wide nav) is generated on the fly by a server in
a separate process on 127.0.0.1. ``nitpicker crawl --no-render`` crawls it with
``--max-pages`` set to the largest step; the script samples the crawler's RSS and the
archive's page count every second and prints, at each step: pages, elapsed seconds, pages/s
over the whole run and over the last window, RSS, and RSS growth per 10,000 pages since the
first step. Targets (issue 5): RSS growth ≤ 20 MB per 10,000 pages, no drop in pages/s as
the archive grows. Not a test: it prints, it does not assert.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent


def page_html(n: int, total: int) -> bytes:
    links = [f'<a href="/p/{(n + k) % total}">next {k}</a>' for k in range(1, 11)]
    for k in range(15):
        digest = hashlib.blake2b(f"{n}:{k}".encode(), digest_size=8).digest()
        links.append(f'<a href="/p/{int.from_bytes(digest, "big") % total}">see {k}</a>')
    nav = "".join(f'<li><a href="/p/{k}">Section {k}</a></li>' for k in range(5))
    body = " ".join(f"Paragraph {k} of page {n}, some words to make a realistic body." for k in range(40))
    return (
        f"<!doctype html><html lang='en'><head><title>Page {n}</title>"
        f"<meta name='description' content='Description of page {n}'>"
        f"<meta property='og:title' content='Page {n}'></head><body><nav><ul>{nav}</ul></nav>"
        f"<main><h1>Page {n}</h1><p>{body}</p>{' '.join(links)}</main></body></html>"
    ).encode()


def serve(total: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            path = self.path
            if path == "/":
                path = "/p/0"
            if path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < total:
                body = page_html(int(path[3:]), total)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
            else:
                body = b"not found"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


def pages_in(archive: Path) -> int:
    if not archive.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{archive.as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM pages WHERE status IS NOT NULL").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return -1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=300_000)
    parser.add_argument("--steps", default="10000,50000,100000")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    steps = [int(s) for s in args.steps.split(",")]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.pages)],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-scale-"))
    archive = workdir / "scale.nitpicker"
    command = [sys.executable, "-m", "nitpicker.cli", "crawl", f"http://127.0.0.1:{port}/",
               "--no-render", "--no-sitemap", "--ignore-robots", "--silent", "-P", "10",
               "--max-pages", str(max(steps)), "-o", str(archive)]
    print(f"site: {args.pages} pages on 127.0.0.1:{port}; crawling up to {max(steps)} URLs")
    print(f"{'pages':>8} {'seconds':>8} {'pages/s':>8} {'window p/s':>10} {'RSS MB':>8}")
    started = time.monotonic()
    crawler = subprocess.Popen(command, cwd=workdir, env={**os.environ, "PYTHONPATH": str(ROOT)})
    proc = psutil.Process(crawler.pid)
    pending = list(steps)
    last_pages, last_time = 0, started
    marks: list[tuple[int, float]] = []
    peak = 0.0
    try:
        while crawler.poll() is None and pending:
            time.sleep(1.0)
            try:
                rss = proc.memory_info().rss / 2**20
            except psutil.NoSuchProcess:
                break
            peak = max(peak, rss)
            done = pages_in(archive)
            if done >= pending[0]:
                now = time.monotonic()
                window = (done - last_pages) / max(now - last_time, 1e-9)
                print(f"{done:>8} {now - started:>8.1f} {done / (now - started):>8.1f} "
                      f"{window:>10.1f} {rss:>8.1f}", flush=True)
                marks.append((done, rss))
                last_pages, last_time = done, now
                pending.pop(0)
        crawler.wait()
    finally:
        server.terminate()
    if len(marks) >= 2:
        (p0, r0), (p1, r1) = marks[0], marks[-1]
        growth = (r1 - r0) / max(p1 - p0, 1) * 10_000
        print(f"RSS growth: {growth:.2f} MB per 10,000 pages between {p0} and {p1} pages "
              f"(target ≤ 20); peak RSS {peak:.1f} MB")
    print(f"archive: {archive} ({archive.stat().st_size / 2**20:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
