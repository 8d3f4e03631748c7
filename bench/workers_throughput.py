"""Crawl throughput with ``--workers 2``: (a) bare Scrapy, (b) ``nitpicker crawl``, (c) its
two worker processes, on one local site.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/workers_throughput.py [--pages 3000] [--links 150] [--workers 2]

It serves the same seeded site as ``crawl_throughput.py`` (whose runs it reuses for (a) and (b)),
then runs (c) ``nitpicker crawl URL --no-render --workers N --max-pages P -o FILE --silent
--ignore-robots -P 10``. For each: pages, wall seconds, pages/s, CPU ms a page (the crawler and
its reaped workers, from ``wait4``); the ratio c/a (target >= 1.5 on 2 cores) and c/b; and for
(c) each worker's RSS at every 1,000 archived pages and its growth per 10,000 pages. The machine
is shared: a run beside other load prints the load warning, and wall-clock ratios are then
disturbed (compare CPU ms/page). Targets are printed, not asserted; exits 0 once the runs ended.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import crawl_throughput as ct
from measuring import archive_page_count, nitpicker_command


def _workers_of(archive: Path) -> list[int]:
    """PIDs of the worker processes of the ``--workers`` crawl writing ``archive``."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "--workers" in cmdline and str(archive) in cmdline:
            return [c.pid for c in proc.children() if "spawn_main" in " ".join(c.cmdline())]
    return []


def _sample_workers(archive: Path, stop: threading.Event,
                    marks: dict[int, list[tuple[int, int]]]) -> None:
    """Each worker's RSS at every 1,000 pages of the archive."""
    import psutil

    next_mark = 1000
    while not stop.is_set():
        count = archive_page_count(archive)
        if count is not None and count >= next_mark:
            for pid in _workers_of(archive):
                try:
                    rss = int(psutil.Process(pid).memory_info().rss)
                except psutil.Error:
                    continue
                marks.setdefault(pid, []).append((count, rss))
            while count >= next_mark:
                next_mark += 1000
        stop.wait(0.1)


def run_workers(args: argparse.Namespace, server: ct.SiteServer, max_pages: int, workdir: Path,
                ) -> tuple[ct.RunResult, dict[int, list[tuple[int, int]]]]:
    """(c): ``nitpicker crawl --workers N``."""
    archive = workdir / "workers.nitpicker"
    exe = nitpicker_command()
    cmd = [*exe, "crawl", server.url, "--max-pages", str(max_pages), "-o", str(archive),
           "--silent", "--ignore-robots", "-P", str(args.parallel), "--workers",
           str(args.workers), *ct.crawl_options(exe, False)]
    print("running (c) nitpicker " + " ".join(cmd[len(exe):]) + " ...", flush=True)
    marks: dict[int, list[tuple[int, int]]] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_workers, args=(archive, stop, marks), daemon=True)
    sampler.start()
    c = ct.run_measured(f"(c) nitpicker --workers {args.workers}", cmd, server, archive=archive,
                        expected=min(max_pages, args.pages), log=workdir / "c.log")
    stop.set()
    sampler.join()
    c.pages = archive_page_count(archive) or 0
    c.detail = {"archive_bytes": archive.stat().st_size if archive.exists() else 0}
    if c.exit_code != 0:
        print(f"WARNING: nitpicker exited with {c.exit_code}:\n"
              + (workdir / "c.log").read_text()[-3000:])
    return c, marks


def main(args: argparse.Namespace) -> int:
    max_pages = args.max_pages if args.max_pages is not None else args.pages
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-bench-workers-"))
    print(f"workers throughput benchmark: {ct._versions()}")
    print(f"site: {args.pages} pages, ~{args.links} links a page, seed {args.seed}; crawl budget "
          f"{max_pages} pages, {args.parallel} concurrent requests in all; {args.workers} workers")
    server = ct.start_server(args.pages, args.links, args.seed)
    ct_args = argparse.Namespace(**{**vars(args), "render": False, "baseline_setting": None})
    try:
        a = ct.run_baseline(ct_args, server, max_pages, workdir, "")
        b = ct.run_nitpicker(ct_args, server, max_pages, workdir, "")
        c, marks = run_workers(args, server, max_pages, workdir)
    finally:
        server.stop()
    report(a, b, c, marks)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(a: ct.RunResult, b: ct.RunResult, c: ct.RunResult,
           marks: dict[int, list[tuple[int, int]]]) -> None:
    print()
    header = (f"{'run':<33} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'CPU ms/page':>12} "
              f"{'CPU/wall':>9} {'server ms/page':>15} {'peak RSS MB':>12} {'other load':>11}")
    print(header)
    print("-" * len(header))
    for r in (a, b, c):
        print(f"{r.name:<33} {r.pages:>6} {r.seconds:>8.2f} {r.rate:>8.1f} "
              f"{r.cpu_ms_per_page:>12.2f} {r.cpu_seconds / r.seconds * 100 if r.seconds else 0:>8.0f}% "
              f"{server_ms(r):>15.2f} {r.peak_rss / 1e6:>12.1f} {r.other_load:>11.2f}")
    print("(seconds: process start to exit, imports and the workers' start included; CPU: the "
          "crawler's user+sys with its workers, CPU/wall its share of one core; server ms/page: "
          "the site server's CPU a page; peak RSS: all its processes together)")
    if len({a.pages, b.pages, c.pages}) > 1:
        print("WARNING: the runs did not fetch the same number of pages")
    ca = c.rate / a.rate if a.rate else 0.0
    cb = c.rate / b.rate if b.rate else 0.0
    print(f"throughput c/a (pages/s): {ca:.2f}x (target >= 1.5 on 2 cores): "
          f"{'PASS' if ca >= 1.5 else 'BELOW TARGET'}; c/b {cb:.2f}x")
    print_ceiling(a, c)
    busiest = max(r.other_load for r in (a, b, c))
    if busiest > 0.25:
        print(f"WARNING: other processes kept up to {busiest:.2f} cores busy during a run "
              f"({os.cpu_count()} cores): wall-clock figures are disturbed; compare CPU ms/page")
    for n, (pid, points) in enumerate(sorted(marks.items()), 1):
        print(f"worker {n} (pid {pid}) RSS at each 1,000 pages: "
              + ", ".join(f"{count}: {rss / 1e6:.1f} MB" for count, rss in points))
        growth = ct.growth_per_10k([(count, rss, False) for count, rss in points])
        if growth is not None:
            print(f"  growth per 10,000 archive pages: {growth[0]:.1f} MB (linear fit)")
    if not marks:
        print("worker RSS: no samples (crawl at least 1,000 pages)")


def server_ms(r: ct.RunResult) -> float:
    """The site server's CPU milliseconds a page during run ``r``."""
    return r.server_cpu * 1000 / r.pages if r.pages else 0.0


def print_ceiling(a: ct.RunResult, c: ct.RunResult) -> None:
    """The c/a the machine's cores allow at most, from CPU time (not disturbed by other load
    as wall time is): (a) keeps one core busy (one Scrapy process, its CPU/wall ~100 % on a
    quiet machine), so it runs at 1000 / its CPU ms a page; (c) at best keeps every core busy
    with its own and the site server's CPU a page, with nothing lost to waiting."""
    cores = os.cpu_count() or 1
    per_page = c.cpu_ms_per_page + server_ms(c)
    if not per_page or not a.cpu_ms_per_page:
        return
    most_a = 1000 / a.cpu_ms_per_page
    most_c = cores * 1000 / per_page
    print(f"ceiling: (a) 1 core / {a.cpu_ms_per_page:.2f} CPU ms a page = {most_a:.1f} pages/s; "
          f"(c) {cores} cores / ({c.cpu_ms_per_page:.2f} + server {server_ms(c):.2f} CPU ms a "
          f"page) = {most_c:.1f} pages/s: c/a <= {most_c / most_a:.2f}x")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=3000, help="pages in the site (default 3000)")
    parser.add_argument("--links", type=int, default=150, help="links a page (default 150)")
    parser.add_argument("--max-pages", type=int, default=None,
                        help="crawl budget (default: every page)")
    parser.add_argument("--parallel", type=int, default=10,
                        help="concurrent requests in all (default 10)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="site seed (default 1)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    started = time.monotonic()
    code = main(parse_args())
    print(f"benchmark took {time.monotonic() - started:.0f} s")
    sys.exit(code)
