"""The site checks' cost: how long ``nitpicker check`` takes against the crawl it checks.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/checks_cost.py [--pages 5000] [--links 150] [--repeat 3]

One run:

1. serves the generated site of ``bench/crawl_throughput.py`` (``--pages`` pages, about
   ``--links`` links a page) from a process of its own on 127.0.0.1;
2. crawls it: ``nitpicker crawl URL --no-render --ignore-robots -o FILE --silent``, timed from
   the outside (the checks run at the end of it, inside that time);
3. times the checks on that archive ``--repeat`` times more (``record_checks`` on a copy,
   each check timed on its own), and reads what the crawl's own run of them took
   (``check_runs``);
4. prints the crawl's wall time, the checks' (the crawl's run and the median of the re-runs),
   their share of the crawl, the findings, and the five slowest checks.

Always exits 0 once the runs completed: the figures are reported, not asserted.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from crawl_throughput import start_server
from measuring import median, nitpicker_command

from nitpicker.archive.check_store import record_checks
from nitpicker.archive.connection import connect
from nitpicker.query.checks import CHECKS


def _seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _time_checks(archive: Path, workdir: Path, repeat: int) -> tuple[list[float],
                                                                      dict[str, float], int]:
    """Total seconds of each re-run, the median seconds of each check, the findings."""
    totals: list[float] = []
    per_check: dict[str, list[float]] = {check.id: [] for check in CHECKS}
    findings = 0
    for n in range(repeat):
        copy = workdir / f"copy-{n}.nitpicker"
        shutil.copyfile(archive, copy)
        conn = connect(copy)
        started = time.perf_counter()
        last = started

        def timed(check: object, count: int) -> None:
            nonlocal last
            now = time.perf_counter()
            per_check[getattr(check, "id", "")].append(now - last)
            last = now

        summary = record_checks(conn, on_check=timed)
        totals.append(time.perf_counter() - started)
        findings = summary.findings
        conn.close()
        copy.unlink()
    return totals, {name: median(values) for name, values in per_check.items()}, findings


def main(args: argparse.Namespace) -> int:
    server = start_server(args.pages, args.links, args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-checks-"))
    try:
        archive = workdir / "site.nitpicker"
        cmd = [*nitpicker_command(), "crawl", server.url, "--no-render", "--ignore-robots",
               "-o", str(archive), "--silent", "--max-pages", str(args.pages)]
        print(f"crawling {args.pages} pages: " + " ".join(cmd[1:]), flush=True)
        started = time.monotonic()
        subprocess.run(cmd, check=False)
        crawl_seconds = time.monotonic() - started
        conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
        pages = conn.execute("SELECT count(*) FROM pages WHERE scraped = 1").fetchone()[0]
        run = conn.execute("SELECT started_at, ended_at, checks, findings FROM check_runs"
                           " ORDER BY id DESC LIMIT 1").fetchone()
        conn.close()
        in_crawl = _seconds_between(run[0], run[1]) if run else float("nan")
        totals, per_check, findings = _time_checks(archive, workdir, args.repeat)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    again = median(totals)
    print(f"crawl: {pages} URLs recorded in {crawl_seconds:.1f} s (wall, process start to exit)")
    print(f"checks in the crawl: {in_crawl:.3f} s ({in_crawl / crawl_seconds:.1%} of the crawl)")
    print(f"checks re-run ({args.repeat}x, median): {again:.3f} s "
          f"({again / crawl_seconds:.1%} of the crawl), {len(CHECKS)} checks, "
          f"{findings} findings")
    print("slowest checks (median s):")
    for name, seconds in sorted(per_check.items(), key=lambda item: -item[1])[:5]:
        print(f"  {name:32} {seconds:.3f}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--links", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    sys.exit(main(parser.parse_args()))
