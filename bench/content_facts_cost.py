"""The crawl-time cost of the content facts (issue 30, items 1 and 3): each page's fragment
targets (ids, ``<a name>``) and its main content's hash and MinHash signature, measured as
``bench/crawl_throughput.py`` measures a crawl.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/content_facts_cost.py [--pages 5000] [--links 150] [--repeat 3]

One run serves ``bench/crawl_throughput.py``'s generated site (``--pages`` pages, about
``--links`` links a page) from a process of its own on 127.0.0.1, then crawls it ``--repeat``
times with the facts off and on, alternately (``nitpicker crawl URL --no-render
--ignore-robots -P 10``; ``NITPICKER_CONTENT_FACTS=false`` / ``true``; the site checks off in
both, ``NITPICKER_SITE_CHECKS=false``: their post-crawl cost is ``bench/site_checks.py``'s),
each timed from the outside with its CPU time (``run_measured``). It prints each run, the
medians, and the cost: how much slower (pages/s) and how much more CPU a page the crawl is
with the facts on (target: at most 10 % slower). Always exits 0 once the runs completed: the
figures are reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from crawl_throughput import RunResult, _versions, run_measured, start_server
from measuring import archive_page_count, median, nitpicker_command

TARGET = 0.10
"""At most this much slower with the facts on."""


def _crawl(server_url: str, workdir: Path, name: str, facts: bool, args: argparse.Namespace,
           server: object) -> RunResult:
    archive = workdir / f"{name}.nitpicker"
    cmd = [*nitpicker_command(), "crawl", server_url, "--no-render", "--ignore-robots",
           "-P", str(args.parallel), "--max-pages", str(args.pages), "-o", str(archive),
           "--silent"]
    os.environ["NITPICKER_CONTENT_FACTS"] = "true" if facts else "false"
    os.environ["NITPICKER_SITE_CHECKS"] = "false"
    print(f"running {name} (content facts {'on' if facts else 'off'}) ...", flush=True)
    result = run_measured(name, cmd, server, archive=archive,  # type: ignore[arg-type]
                          expected=args.pages, log=workdir / f"{name}.log")
    result.pages = archive_page_count(archive) or 0
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    result.detail = {
        "signed": conn.execute("SELECT count(*) FROM page_content"
                               " WHERE minhash IS NOT NULL").fetchone()[0],
        "ids": conn.execute("SELECT count(*) FROM page_fragment_ids").fetchone()[0],
        "bytes": archive.stat().st_size}
    conn.close()
    archive.unlink()
    return result


def main(args: argparse.Namespace) -> int:
    print(f"content facts cost: {_versions()}")
    server = start_server(args.pages, args.links, args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-facts-"))
    off: list[RunResult] = []
    on: list[RunResult] = []
    try:
        print(f"site: {args.pages} pages, ~{args.links} links a page at {server.url}")
        for n in range(1, args.repeat + 1):
            off.append(_crawl(server.url, workdir, f"off-{n}", False, args, server))
            on.append(_crawl(server.url, workdir, f"on-{n}", True, args, server))
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    header = (f"{'run':<8} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'CPU ms/page':>12} "
              f"{'signed':>7} {'ids':>8} {'file MB':>8} {'other load':>11}")
    print(header)
    print("-" * len(header))
    for r in [*off, *on]:
        print(f"{r.name:<8} {r.pages:>6} {r.seconds:>8.2f} {r.rate:>8.1f} "
              f"{r.cpu_ms_per_page:>12.2f} {r.detail['signed']:>7} {r.detail['ids']:>8} "
              f"{int(r.detail['bytes']) / 1e6:>8.1f} {r.other_load:>11.2f}")  # type: ignore[call-overload]
    rate_off, rate_on = median([r.rate for r in off]), median([r.rate for r in on])
    cpu_off = median([r.cpu_ms_per_page for r in off])
    cpu_on = median([r.cpu_ms_per_page for r in on])
    slower = 1 - rate_on / rate_off if rate_off else 0.0
    print(f"median of {args.repeat}: off {rate_off:.1f} pages/s, {cpu_off:.2f} CPU ms/page; "
          f"on {rate_on:.1f} pages/s, {cpu_on:.2f} CPU ms/page")
    print(f"with the content facts on: {slower:+.1%} slower (pages/s; target <= "
          f"{TARGET:.0%}): {'PASS' if slower <= TARGET else 'ABOVE TARGET'}; "
          f"CPU a page {cpu_on / cpu_off - 1 if cpu_off else 0.0:+.1%}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--links", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    sys.exit(main(parser.parse_args()))
