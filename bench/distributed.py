"""Distributed crawl on loopback: N workers through a Redis frontier versus one process.

    .venv/bin/python bench/distributed.py [--pages 3000] [--workers 3]

The generated site of ``bench/scale.py`` (``--pages`` pages, 30 links each) is served on
127.0.0.1; a ``redis-server`` (the Debian package) is started on a free port. Then, in one run:

1. one process: ``nitpicker crawl --no-render`` of the site;
2. ``--workers`` processes ``nitpicker crawl --frontier redis://…`` (each a shard), then
   ``nitpicker merge``.

Printed: pages/s of each, pages/s per worker, each worker's CPU seconds per page, Redis's CPU
seconds per page, and the frontier's share of a page's CPU: the client side of lease and
acknowledge measured on its own (the same calls a crawl of these pages makes — a chunk lease per
200 URLs, 30 links added and one acknowledgement per page, one flush per 100 pages — timed with
``time.process_time``) plus Redis's CPU, over the worker's CPU per page (issue 18's target:
≤ 5 %). On one loopback machine the workers share its cores with Redis and the site, so pages/s
measures the frontier's overhead, not a cluster. Not a test: it prints, it does not assert.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import pages_in, serve
from nitpicker.crawl.redis_frontier import (
    RedisFrontier,
    connect_frontier,
    parse_frontier_url,
)

LINKS_PER_PAGE = 30
COMMIT_EVERY = 100


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    redis = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1", "--port",
         str(port), "--dir", str(directory), "--appendonly", "yes", "--save", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return redis, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def crawl(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``nitpicker crawl`` process."""
    command = [sys.executable, "-m", "nitpicker.cli", "crawl", *args]
    started = time.monotonic()
    process = psutil.Popen(command, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})
    cpu = 0.0
    while process.poll() is None:
        try:
            times = process.cpu_times()
            cpu = times.user + times.system
        except psutil.NoSuchProcess:
            break
        time.sleep(0.2)
    return time.monotonic() - started, cpu


def frontier_cpu_per_page(url: str, pages: int) -> float:
    """Client CPU seconds per page of the calls a worker makes for ``pages`` pages."""
    settings = parse_frontier_url(url, "bench-calls")
    frontier = RedisFrontier(connect_frontier(settings), settings)
    frontier.add([(f"//b/{n}", f"http://b/{n}", 1, 0) for n in range(pages)])
    frontier.committed()
    started = time.process_time()
    done = 0
    while done < pages:
        rows = frontier.lease(32)
        if not rows:
            break
        for frontier_id, _url, _depth, _mode in rows:
            links = [(f"//b/{(frontier_id * 7 + k) % pages}", "http://b/x", 2, 0)
                     for k in range(LINKS_PER_PAGE)]
            frontier.add(links)
            frontier.acknowledge(frontier_id)
            done += 1
            if done % COMMIT_EVERY == 0:
                frontier.committed()
    frontier.committed()
    return (time.process_time() - started) / max(done, 1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-distributed-"))
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.pages)],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    redis, redis_port = start_redis(workdir)
    redis_proc = psutil.Process(redis.pid)
    url = f"redis://127.0.0.1:{redis_port}/0"
    root = f"http://127.0.0.1:{port}/"
    common = [root, "--no-render", "--no-sitemap", "--ignore-robots", "--silent", "-P", "10"]
    try:
        print(f"site: {args.pages} pages on 127.0.0.1:{port}; redis on {redis_port}; "
              f"{os.cpu_count()} cores")
        wall, cpu = crawl([*common, "-o", "single"], workdir)
        single = pages_in(workdir / "single.nitpicker")
        print(f"one process:  {single} pages in {wall:.1f} s = {single / wall:.1f} pages/s; "
              f"{cpu / single * 1000:.2f} ms CPU a page")

        redis_before = sum(redis_proc.cpu_times()[:2])
        started = time.monotonic()
        workers = [
            psutil.Popen([sys.executable, "-m", "nitpicker.cli", "crawl", *common,
                          "--frontier", url, "-o", f"shard{n}"],
                         cwd=workdir, env={**os.environ, "PYTHONPATH": str(ROOT)})
            for n in range(args.workers)]
        cpus = [0.0] * len(workers)
        while any(w.poll() is None for w in workers):
            for n, worker in enumerate(workers):
                try:
                    times = worker.cpu_times()
                    cpus[n] = times.user + times.system
                except psutil.NoSuchProcess:
                    pass
            time.sleep(0.2)
        wall = time.monotonic() - started
        redis_cpu = sum(redis_proc.cpu_times()[:2]) - redis_before
        shards = [workdir / f"shard{n}.nitpicker" for n in range(args.workers)]
        counts = [pages_in(shard) for shard in shards]
        total = sum(counts)
        print(f"{args.workers} workers: {total} pages in {wall:.1f} s = {total / wall:.1f} "
              f"pages/s, {total / wall / args.workers:.1f} pages/s per worker "
              f"(shards: {', '.join(map(str, counts))})")
        worker_cpu = sum(cpus) / max(total, 1)
        print(f"  worker CPU {worker_cpu * 1000:.2f} ms a page; Redis CPU "
              f"{redis_cpu / max(total, 1) * 1000:.3f} ms a page")
        merged = subprocess.run(
            [sys.executable, "-m", "nitpicker.cli", "merge", *map(str, shards), "-o", "merged"],
            cwd=workdir, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
            text=True, check=False)
        print(f"  merge: {merged.stderr.strip().splitlines()[-1] if merged.stderr else merged.returncode}")
        client = frontier_cpu_per_page(url, min(args.pages, 5000))
        share = (client + redis_cpu / max(total, 1)) / max(worker_cpu, 1e-9)
        print(f"frontier: client {client * 1000:.3f} ms + Redis "
              f"{redis_cpu / max(total, 1) * 1000:.3f} ms a page = {share:.1%} of a worker's "
              f"page CPU (target ≤ 5 %)")
    finally:
        server.terminate()
        redis.terminate()
        redis.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
