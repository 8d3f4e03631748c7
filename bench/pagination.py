"""Predictive pagination: the time to crawl a 200-page pager with and without prediction.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/pagination.py [--delay 0.1] [--parallels 10] [--repeat 1]

The fixture site's ``/pager/`` (``fixtures/site.py``: page N links the first, previous and next
pages; 200 pages; a 404 past the last) answers every page after ``--delay`` seconds, as a slow
CMS does. Followed link by link, the pager is a chain: one page in flight at a time. The script
crawls it with ``nitpicker crawl --no-render`` (robots.txt and sitemaps off, so only the pager
is fetched) twice per round, (a) ``--no-predict-pagination`` and (b) with prediction (the
default), alternating, and prints for each run the wall time of the command and of the run
itself (the archive's ``runs`` row: start-up excluded), the pages recorded and the requests
the server answered, then the medians and their ratios b/a. Both archives must hold the same 200 pages (checked, not timed). Exits 0 once the runs
completed: the figure is reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measuring import median, nitpicker_command

from fixtures.site import PAGER_MAX, FixtureSite


def pages_of(archive: Path) -> tuple[set[str], float]:
    """The pages an archive recorded, and its run's own seconds (start-up excluded)."""
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        pages = {url for (url,) in conn.execute(
            "SELECT url FROM pages WHERE status = 200 AND is_target = 1")}
        started, ended = conn.execute("SELECT started_at, ended_at FROM runs").fetchone()
        return pages, (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
    finally:
        conn.close()


def crawl(site: FixtureSite, out: Path, parallels: int,
          predict: bool) -> tuple[float, float, set[str], int]:
    """One crawl of the pager: wall seconds of the command and of the run, pages recorded,
    requests answered."""
    site.clear_log()
    args = [*nitpicker_command(), "crawl", site.url("/pager/"), "--no-render", "--silent",
            "--ignore-robots", "--no-sitemap", "-P", str(parallels), "-o", str(out)]
    if not predict:
        args.append("--no-predict-pagination")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    subprocess.run(args, check=True, env=env, cwd=out.parent)
    elapsed = time.monotonic() - started
    requests = sum(1 for method, _, target in site.request_log
                   if method == "GET" and target.startswith("/pager/"))
    pages, run = pages_of(out)
    return elapsed, run, pages, requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.1, help="seconds per pager response")
    parser.add_argument("--parallels", type=int, default=10, help="-P of the crawls")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (a then b)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"pager: {PAGER_MAX} pages, {args.delay * 1000:.0f} ms a response, -P {args.parallels}, "
          f"load average {load:.1f} on {os.cpu_count()} cores")
    times: dict[bool, list[float]] = {False: [], True: []}
    runs: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp, FixtureSite(pager_delay=args.delay) as site:
        for round_ in range(args.repeat):
            found: dict[bool, set[str]] = {}
            for predict in (False, True):
                label = "(b) prediction   " if predict else "(a) no prediction"
                out = Path(tmp) / f"pager-{round_}-{int(predict)}.nitpicker"
                elapsed, run, pages, requests = crawl(site, out, args.parallels, predict)
                times[predict].append(elapsed)
                runs[predict].append(run)
                found[predict] = pages
                print(f"{label}  command {elapsed:6.2f} s  run {run:6.2f} s  "
                      f"{len(pages)} pages recorded  {requests} requests")
            if found[False] != found[True] or len(found[True]) != PAGER_MAX:
                print("MISMATCH: the two crawls recorded different pages")
                return 1
    a, b = median(times[False]), median(times[True])
    print(f"median command wall: (a) {a:.2f} s, (b) {b:.2f} s; b/a {b / a:.2f}")
    a, b = median(runs[False]), median(runs[True])
    print(f"median run (start-up excluded): (a) {a:.2f} s, (b) {b:.2f} s; b/a {b / a:.2f} "
          f"({a / b:.1f}x faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
