"""Dead hosts: what 500 links to hosts that never answer cost a crawl, with the host breaker
and without (issue 27, item 2).

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/dead_hosts.py [--timeout 5] [--parallels 20] [--retry 0] [--keep DIR]

The site (:class:`fixtures.graph_site.GraphSite`, in this process) has ``--pages`` (50) pages:
the root links every page, every page links the next, and each page links ``--dead`` / pages
URLs, one on each of ``--ports`` (10) loopback ports that accept connections and never answer
a byte (:class:`fixtures.graph_site.SilentHost`): 500 dead URLs, interleaved by port as a
site's footer would list them. Each crawl is ``scrapy crawl site`` (the same code as
``nitpicker crawl``) with ``-s DOWNLOAD_TIMEOUT=--timeout`` (the command has no flag for it),
``render=false``, ``--parallels`` and ``--retry``; the end-of-run retry pass is off
(``NITPICKER_AUTO_RETRY_CONCURRENCY=0``), so that each run's time is its own. Three crawls, in
order:

- (a) the site without its dead links: the in-scope crawl time;
- (b) the site with them, the host breaker on (the default): its time, against the bound
  ``2 × timeout + (a)``, and whether every dead URL was recorded (``status`` -1), how many
  untried;
- (c) the same with ``host_breaker=false``: every dead URL waits out its timeout.

Times are the runs' own (the archive's ``runs`` row: start-up excluded). Prints the figures;
exits 0 once the runs completed (PASS/FAIL is reported, not asserted).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.graph_site import GraphSite, SilentHost


def site_pages(pages: int, dead: list[SilentHost], per_page: int) -> dict[str, list[str]]:
    """The graph: ``/`` links every page, each page the next and its dead links."""
    graph: dict[str, list[str]] = {"/": [f"/p{n}" for n in range(1, pages)]}
    for n in range(1, pages):
        hrefs = [f"/p{n + 1}"] if n + 1 < pages else ["/"]
        hrefs += [dead[k % len(dead)].url(f"/p{n}/d{k}") for k in range(per_page)]
        graph[f"/p{n}"] = hrefs
    graph["/"] += [dead[k % len(dead)].url(f"/root/d{k}") for k in range(per_page)]
    return graph


def crawl(root: str, archive: Path, args: argparse.Namespace, *, breaker: bool) -> float:
    """One ``scrapy crawl site``; the run's own seconds."""
    cmd = [str(Path(sys.executable).parent / "scrapy"), "crawl", "site",
           "-a", f"roots={root}", "-a", f"output={archive}", "-a", "render=false",
           "-a", f"parallels={args.parallels}", "-a", f"retry={args.retry}",
           "-a", f"host_breaker={'true' if breaker else 'false'}",
           "-s", f"DOWNLOAD_TIMEOUT={args.timeout}", "-s", "LOG_LEVEL=WARNING",
           "-s", "NITPICKER_AUTO_RETRY_CONCURRENCY=0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        started, ended = conn.execute("SELECT started_at, ended_at FROM runs").fetchone()
    finally:
        conn.close()
    return (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()


def dead_rows(archive: Path, ports: list[int]) -> tuple[int, int, int]:
    """(dead URLs recorded, of them with status -1, of them untried)."""
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        total = failed = untried = 0
        for port in ports:
            n, f, u = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = -1), coalesce(sum(untried), 0)"
                " FROM pages WHERE url LIKE ? AND url LIKE '%/d%'",
                (f"http://127.0.0.1:{port}/%",)).fetchone()
            total, failed, untried = total + n, failed + f, untried + u
        return total, failed, untried
    finally:
        conn.close()


def main(args: argparse.Namespace) -> int:
    per_page = args.dead // args.pages
    dead = SilentHost.many(args.ports)
    ports = [host.port for host in dead]
    load = os.getloadavg()[0]
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dead-hosts-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        with GraphSite(site_pages(args.pages, dead, 0)) as bare, \
                GraphSite(site_pages(args.pages, dead, per_page)) as site:
            print(f"site: {args.pages} pages on 127.0.0.1; {per_page * args.pages} dead URLs on "
                  f"{args.ports} ports that accept and never answer; --parallels "
                  f"{args.parallels}, --retry {args.retry}, DOWNLOAD_TIMEOUT {args.timeout} s; "
                  f"load average {load:.1f} on {os.cpu_count()} cores")
            in_scope = crawl(bare.url("/"), workdir / "a.nitpicker", args, breaker=True)
            print(f"(a) in-scope crawl alone:        {in_scope:8.2f} s")
            bound = 2 * args.timeout + in_scope
            print(f"    bound 2 × timeout + (a):     {bound:8.2f} s")
            on = crawl(site.url("/"), workdir / "b.nitpicker", args, breaker=True)
            total, failed, untried = dead_rows(workdir / "b.nitpicker", ports)
            every = total == failed == per_page * args.pages
            verdict = "PASS" if on <= bound and every else "FAIL"
            print(f"(b) host breaker on:             {on:8.2f} s  {verdict}: {failed} of "
                  f"{per_page * args.pages} dead URLs recorded (status -1), {untried} untried; "
                  f"connections accepted {sum(h.accepted for h in dead)}")
            before = sum(h.accepted for h in dead)
            off = crawl(site.url("/"), workdir / "c.nitpicker", args, breaker=False)
            total, failed, untried = dead_rows(workdir / "c.nitpicker", ports)
            print(f"(c) host breaker off:            {off:8.2f} s  {failed} dead URLs recorded "
                  f"(status -1), {untried} untried; connections accepted "
                  f"{sum(h.accepted for h in dead) - before}")
            print(f"    c/b {off / on:.1f}×")
    finally:
        for host in dead:
            host.stop()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--dead", type=int, default=500, help="dead URLs in all")
    parser.add_argument("--ports", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=5.0, help="DOWNLOAD_TIMEOUT, seconds")
    parser.add_argument("--parallels", type=int, default=20)
    parser.add_argument("--retry", type=int, default=0)
    parser.add_argument("--keep", help="write the archives here and keep them")
    sys.exit(main(parser.parse_args()))
