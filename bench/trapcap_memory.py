"""Trap cap (``--dedupe-cap``): memory under 300,000 never-repeating signatures, crawl overhead.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/trapcap_memory.py [--signatures 300000] [--pages 5000] [--repeat 3]

1. **Memory** (seed 003 §4: "RSS must not grow linearly and must stay within
   ``--dedupe-map-cap``"). A pathological CMS never repeats a title: every page is a new
   signature. Each scenario runs in its own process (a clean peak RSS) and pushes
   ``--signatures`` pages, 1,000 parent paths round robin, through the same code path as a crawl
   (:meth:`nitpicker.policy.trapcap.TrapCap.observe` on a ``PageMeta``); RSS and the entries held are
   printed every 50,000 pages:

   - ``naive``: a plain ``dict`` signature -> count, the baseline the seed rejects;
   - ``lru only``: ``TrapCap`` with the defaults (cap 100, age window 5,000, map cap 100,000)
     in its worst case: no page discovers a new link (the age window never moves) and every
     parent path always has pending URLs (no bucket is ever dropped), so only the hard cap (d)
     holds it;
   - ``all layers``: the defaults as a crawl drives them: each page discovers two new links,
     and parent paths are crawled one after another (4,000 pages each, as a breadth-first crawl
     meets a section's pages together: longer than the age window of 2,500 pages), a parent
     path having pending URLs until its section is done.

2. **Crawl overhead**: the 5,000-page generated site of ``bench/crawl_throughput.py`` (its
   server, in its own process) crawled by ``nitpicker crawl URL --no-render --silent
   --ignore-robots -o FILE``, with and without ``--dedupe-cap 100``, alternated, ``--repeat``
   times each: pages/s and the crawler process's own CPU time per page (user + system, from
   ``wait4``: steadier than wall time on a shared machine), medians and ratios.

Prints its figures; exits 0 (targets are reported, not asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

SCENARIOS = ("naive", "lru only", "all layers")
STEP = 50_000
HOST = "https://cms.example"
PARENT_PATHS = 1000
SECTION_PAGES = 4000


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def _rss_bytes() -> int:
    return _status_bytes("VmRSS:")


def _peak_rss_bytes() -> int:
    """The process's peak RSS. ``VmHWM`` belongs to this address space: unlike ``ru_maxrss``
    it does not inherit the high-water mark of the parent this process was forked from."""
    return _status_bytes("VmHWM:")


# ------------------------------------------------------------------------------------------
# 1. memory, one scenario per process
# ------------------------------------------------------------------------------------------

def _memory(scenario: str, signatures: int) -> None:
    """(child process) Push the signatures, print one JSON line per checkpoint."""
    from nitpicker.policy.extract import PageMeta
    from nitpicker.policy.signature import page_signature
    from nitpicker.policy.trapcap import TrapCap

    naive: dict[str, int] = {}
    page_no = 0

    def pending_until_section_done(prefix: str) -> bool:  # prefix: //cms.example/s{k}/
        return int(prefix.rstrip("/").rsplit("/s", 1)[1]) >= page_no // SECTION_PAGES

    cap = TrapCap(100, age_window=5000, map_cap=100_000,
                  has_pending_under=(lambda prefix: True) if scenario == "lru only"
                  else pending_until_section_done)
    base = _rss_bytes()
    started = time.perf_counter()
    for page_no in range(1, signatures + 1):
        section = page_no % PARENT_PATHS if scenario != "all layers" else page_no // SECTION_PAGES
        url = f"{HOST}/s{section}/p{page_no}"
        meta = PageMeta(title=f"Post {page_no} | Example", description=f"About post {page_no}",
                        og_title=f"Post {page_no}", og_url=url, canonical=url)
        if scenario == "naive":
            signature = page_signature(url, meta)
            assert signature is not None
            naive[signature] = naive.get(signature, 0) + 1
            held = len(naive)
        else:
            if scenario == "all layers":
                cap.advance(2)
            cap.observe(url, meta)
            held = cap.entries
        if page_no % STEP == 0:
            print(json.dumps({
                "pages": page_no, "rss": _rss_bytes(), "base": base, "held": held,
                "peak": _peak_rss_bytes(), "seconds": time.perf_counter() - started,
                "evicted": [cap.evicted_age, cap.evicted_bucket, cap.evicted_lru],
                "peak_held": cap.peak_entries if scenario != "naive" else held,
            }), flush=True)


def run_memory(signatures: int) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {}
    for scenario in SCENARIOS:
        print(f"memory: {scenario} ...", flush=True)
        out = subprocess.run(
            [sys.executable, str(HERE), "--_memory", scenario, "--signatures", str(signatures)],
            capture_output=True, text=True, check=True,
        ).stdout
        results[scenario] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return results


def report_memory(results: dict[str, list[dict[str, float]]]) -> None:
    mb = 1024 * 1024
    print()
    print("RSS (MB, whole process) and signatures held, by signatures pushed:")
    header = f"{'pushed':>8}" + "".join(f" | {name:>21}" for name in SCENARIOS)
    print(header)
    print("-" * len(header))
    rows = zip(*(results[name] for name in SCENARIOS), strict=True)
    for marks in rows:
        cells = "".join(f" | {m['rss'] / mb:8.1f} MB {int(m['held']):>8,}" for m in marks)
        print(f"{int(marks[0]['pages']):>8,}{cells}")
    print()
    for name in SCENARIOS:
        marks = results[name]
        first, last = marks[0], marks[-1]
        growth = (last["rss"] - first["rss"]) / mb
        per_page = last["seconds"] / last["pages"] * 1e6
        evicted = last["evicted"] if name != "naive" else [0, 0, 0]
        print(f"{name:>10}: start {last['base'] / mb:.1f} MB, peak {last['peak'] / mb:.1f} MB, "
              f"RSS {first['pages'] / 1000:.0f}k->{last['pages'] / 1000:.0f}k pages "
              f"+{growth:.1f} MB, held {int(last['held']):,} (at most {int(last['peak_held']):,}), "
              f"{per_page:.1f} us/page"
              + (f", evicted age/bucket/lru {evicted[0]:,}/{evicted[1]:,}/{evicted[2]:,}"
                 if name != "naive" else ""))


# ------------------------------------------------------------------------------------------
# 2. crawl overhead
# ------------------------------------------------------------------------------------------

def _archive_counts(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        pages = conn.execute(
            "SELECT count(*) FROM pages WHERE scraped = 1 AND status IS NOT NULL").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM trap_events").fetchone()[0]
    finally:
        conn.close()
    return int(pages), int(events)


def run_overhead(pages: int, links: int, repeat: int, parallel: int) -> None:
    import crawl_throughput

    exe = crawl_throughput.nitpicker_command()
    server = crawl_throughput.start_server(pages, links, seed=1)
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-trapcap-"))
    print(f"\ncrawl overhead: {pages} pages, ~{links} links a page, {server.url}, "
          f"-P {parallel}, {repeat} run(s) each, alternated")
    rates: dict[str, list[float]] = {"without": [], "--dedupe-cap 100": []}
    cpu: dict[str, list[float]] = {name: [] for name in rates}
    try:
        names = list(rates)
        order = [name for i in range(repeat) for name in (names if i % 2 == 0 else names[::-1])]
        for n, name in enumerate(order):
            archive = workdir / f"run{n}.nitpicker"
            cmd = [*exe, "crawl", server.url, "--no-render", "--silent", "--ignore-robots",
                   "-P", str(parallel), "-o", str(archive)]
            if name != "without":
                cmd += ["--dedupe-cap", "100"]
            started = time.monotonic()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.monotonic() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            fetched, events = _archive_counts(archive)
            rate = fetched / seconds
            cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000 / fetched
            rates[name].append(rate)
            cpu[name].append(cpu_ms)
            print(f"  {name:>16}: {fetched} pages in {seconds:.1f} s = {rate:.1f} pages/s, "
                  f"crawler CPU {cpu_ms:.2f} ms/page (exit {proc.returncode}, {events} trap "
                  "events)", flush=True)
    finally:
        server.stop()
    base, capped = (statistics.median(rates[name]) for name in names)
    base_cpu, capped_cpu = (statistics.median(cpu[name]) for name in names)
    print(f"  median: {base:.1f} pages/s without, {capped:.1f} pages/s with --dedupe-cap 100: "
          f"ratio {capped / base:.3f}")
    print(f"  median crawler CPU: {base_cpu:.2f} ms/page without, {capped_cpu:.2f} ms/page with: "
          f"{(capped_cpu / base_cpu - 1) * 100:+.1f} %")


def main(args: argparse.Namespace) -> int:
    import scrapy

    import nitpicker

    print(f"trap cap benchmark: Python {platform.python_version()}, Scrapy {scrapy.__version__}, "
          f"nitpicker {nitpicker.__version__}, {os.cpu_count()} CPUs, {platform.platform(terse=True)}")
    if args.signatures:
        report_memory(run_memory(args.signatures))
    if args.pages:
        run_overhead(args.pages, args.links, args.repeat, args.parallel)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signatures", type=int, default=300_000,
                        help="unique signatures pushed per memory scenario (0: skip)")
    parser.add_argument("--pages", type=int, default=5000,
                        help="pages of the crawl-overhead site (0: skip)")
    parser.add_argument("--links", type=int, default=150, help="links a page (default 150)")
    parser.add_argument("--repeat", type=int, default=3, help="crawls per variant (default 3)")
    parser.add_argument("--parallel", type=int, default=10, help="-P of the crawls")
    parser.add_argument("--_memory", choices=SCENARIOS, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    ARGS = parse_args()
    if ARGS._memory:
        _memory(ARGS._memory, ARGS.signatures)
        sys.exit(0)
    sys.exit(main(ARGS))
