"""Viewer latency: each view's server time against the query-library calls it makes, and the
viewer's peak memory.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/viewer_latency.py [--pages 100000] [--anchors-per-page 53]
                                             [--keep FILE] [--repeat 5] [--cpu-runs 20]

One run:

1. builds the synthetic archive of ``bench/query_latency.py`` (100,000 pages and 5,000,000
   anchors by default; ``--keep FILE`` builds it there once and reuses it);
2. starts ``nitpicker view`` on it (a real server process on 127.0.0.1, a free port);
3. for each view — Summary, the first page of Pages, the page detail of the most-linked page
   (and its third page of links in), Links broken, Duplicate Clusters, Violations, the largest
   cluster's drill-down (after the Clusters view, as a user gets there) — times the HTTP request (the server's work plus a local
   round trip) and, in this process on a read-only connection of its own, the query-library
   calls the view makes; the best of ``--repeat`` alternating runs of each is kept;
4. measures the CPU time of each side too: the viewer's (``/proc/<pid>/stat``, user +
   system) over ``--cpu-runs`` requests, the library's (``time.process_time``) over as many
   runs. On a shared machine wall time is mostly waiting for a core; CPU time is the work;
5. prints, per view: wall ms (server, library, ratio) and CPU ms (server, library, ratio;
   target <= 1.5), and the viewer's peak RSS after every view was visited (``VmHWM``;
   target <= 200 MB). First, the cluster drill-down's library call both ways: signing every
   internal page, and through the cluster's title (what the viewer does once it knows it).

Always exits 0 once the runs completed: targets are reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from query_latency import build_archive  # bench/ is no package: found through sys.path

from nitpicker.query import (
    get_distributions,
    get_duplicate_clusters,
    get_page_detail,
    get_page_json_ld,
    get_summary,
    get_violations,
    list_cluster_pages,
    list_console_messages,
    list_crawl_runs,
    list_links,
    list_page_images,
    list_page_resources,
    list_pages,
    open_archive,
    summary,
)
from nitpicker.query.page_links import (
    has_page_snapshot,
    list_inbound_links,
    list_outbound_links,
)
from nitpicker.query.page_values import get_page_analysis
from nitpicker.query.violations import list_violation_rules

PAGE_SIZE = 50


def _ms(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def _fetch(url: str) -> Callable[[], bytes]:
    def get() -> bytes:
        with urllib.request.urlopen(url, timeout=600) as answer:
            return bytes(answer.read())
    return get


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used: ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _start_viewer(path: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "view", str(path), "--port", "0"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    return process, line.split(" at ", 1)[1].split(" ", 1)[0]


def measure(path: Path, repeat: int, cpu_runs: int) -> None:
    conn = open_archive(path)
    nav = conn.execute("SELECT url FROM pages WHERE id = 1").fetchone()[0]  # on every page

    def page_detail() -> None:
        get_page_detail(conn, nav, link_limit=PAGE_SIZE)
        list_page_images(conn, nav, limit=PAGE_SIZE)
        list_page_resources(conn, nav, limit=PAGE_SIZE)
        list_console_messages(conn, url=nav, limit=PAGE_SIZE)
        get_violations(conn, url=nav, limit=PAGE_SIZE)
        get_page_analysis(conn, nav)
        get_page_json_ld(conn, nav)
        has_page_snapshot(conn, nav)

    def links_in_page() -> None:
        get_page_detail(conn, nav, link_limit=0)
        list_outbound_links(conn, nav, limit=PAGE_SIZE, offset=0)
        list_inbound_links(conn, nav, limit=PAGE_SIZE, offset=2 * PAGE_SIZE)
        list_page_images(conn, nav, limit=PAGE_SIZE)
        list_page_resources(conn, nav, limit=PAGE_SIZE)
        list_console_messages(conn, url=nav, limit=PAGE_SIZE)
        get_violations(conn, url=nav, limit=PAGE_SIZE)
        get_page_analysis(conn, nav)
        get_page_json_ld(conn, nav)
        has_page_snapshot(conn, nav)

    biggest = get_duplicate_clusters(conn, min_count=10, sample=1, limit=1)["items"][0]
    largest, title = biggest["signature"], biggest["meta_signature_fields"]["title"]
    untitled = _ms(lambda: list_cluster_pages(conn, largest, limit=PAGE_SIZE))
    titled = min(_ms(lambda: list_cluster_pages(conn, largest, title=title, limit=PAGE_SIZE))
                 for _ in range(repeat))
    print(f"cluster drill-down ({biggest['count']} pages), library: signing every internal "
          f"page {untitled:.1f} ms, through the title index {titled:.1f} ms")

    def summary_view() -> None:
        get_summary(conn)
        summary(conn)
        list_crawl_runs(conn, limit=PAGE_SIZE, offset=0)
        get_distributions(conn)

    cases: list[tuple[str, str, Callable[[], object]]] = [
        ("Summary", "a/0/", summary_view),
        ("Pages (first page)", "a/0/pages", lambda: list_pages(conn, limit=PAGE_SIZE)),
        ("Page detail (most-linked page)", f"a/0/page?url={quote(nav, safe='')}", page_detail),
        ("Links broken", "a/0/links?type=broken",
         lambda: list_links(conn, "broken", limit=PAGE_SIZE)),
        ("Duplicate Clusters", "a/0/clusters",
         lambda: get_duplicate_clusters(conn, min_count=10, sample=5, limit=PAGE_SIZE)),
        ("Page detail, links in page 3", f"a/0/page?url={quote(nav, safe='')}&links_in=3",
         links_in_page),
        ("Violations (rules)", "a/0/violations",
         lambda: list_violation_rules(conn, limit=PAGE_SIZE)),
        ("Cluster drill-down (largest)", f"a/0/cluster?signature={largest}",
         lambda: list_cluster_pages(conn, largest, title=title, limit=PAGE_SIZE)),
    ]
    others = ["a/0/resources", "a/0/images", "a/0/duplicates", "a/0/mismatches",
              "a/0/headers", "a/0/traps", "a/0/links?type=orphaned", "a/0/links?type=external",
              f"a/0/cluster?signature={largest}&page=2"]
    process, base = _start_viewer(path)
    try:
        print(f"{'view':34} {'wall: server':>12} {'library':>8} {'ratio':>6}"
              f" {'CPU: server':>12} {'library':>8} {'ratio':>6}")
        for label, view, library in cases:
            server = _fetch(base + view)
            server()
            library()
            server_ms, library_ms = [], []
            for _ in range(repeat):
                server_ms.append(_ms(server))
                library_ms.append(_ms(library))
            best_server, best_library = min(server_ms), min(library_ms)
            ratio = best_server / best_library if best_library else float("inf")
            # CPU time: what each side computed, whatever else the machine runs (the server's
            # from /proc in clock ticks, so over cpu_runs requests; the library's the same)
            before = _cpu_seconds(process.pid)
            for _ in range(cpu_runs):
                server()
            server_cpu = (_cpu_seconds(process.pid) - before) * 1000 / cpu_runs
            started = time.process_time()
            for _ in range(cpu_runs):
                library()
            library_cpu = (time.process_time() - started) * 1000 / cpu_runs
            cpu_ratio = server_cpu / library_cpu if library_cpu else float("inf")
            flag = "" if min(ratio, cpu_ratio) <= 1.5 else "  (over 1.5)"
            print(f"{label:34} {best_server:12.1f} {best_library:8.1f} {ratio:6.2f}"
                  f" {server_cpu:12.1f} {library_cpu:8.1f} {cpu_ratio:6.2f}{flag}")
        for view in others:
            _fetch(base + view)()
        rss = _peak_rss_mb(process.pid)
        print(f"viewer peak RSS after every view: {rss:.0f} MB (target <= 200 MB)")
    finally:
        process.terminate()
        process.wait(timeout=30)
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000,
                        help="pages in the synthetic archive (default 100,000)")
    parser.add_argument("--anchors-per-page", type=int, default=53,
                        help="links on each internal page (default 53: 5,008,500 anchors)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="alternating runs of each; the best is kept (default 5)")
    parser.add_argument("--cpu-runs", type=int, default=20,
                        help="requests (and library runs) whose CPU time is averaged "
                             "(default 20)")
    parser.add_argument("--keep", type=Path, help="build the archive here once, reuse it after")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nitpicker-viewer-bench-") as tmp:
        path = args.keep or Path(tmp) / "bench.nitpicker"
        if not path.exists():
            print(f"building {path} …", file=sys.stderr)
            build_archive(path, args.pages, args.anchors_per_page)
        measure(path, args.repeat, args.cpu_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
