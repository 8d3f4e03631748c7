"""Sampling by template against the full analysis, on a generated site of five templates.

Serves ``fixtures/templated.py`` (``--pages`` pages, default 2,000, five templates, each with
one accessibility defect in its skeleton and varied content), crawls it without a browser
(the template clusters are recorded at the end of the crawl: their cost is timed apart), then
runs the same plugin (``--plugin``, default axe) twice on copies of the archive:

(a) ``nitpicker analyze FILE --plugin axe``: every page;
(b) ``nitpicker analyze FILE --plugin axe --sample 5``: five pages of each template cluster.

For each: wall-clock time, the peak RSS of the command's whole process tree (the browser or the
Node process included), pages analysed. Then the check the sample is for: every finding the
full run finds in a template's skeleton (``query template-findings``: on every analysed page of
its cluster) is found by the sample too, in the same cluster, with the same rule and element.
Prints the figures; exits 1 when the sample analysed more than 30 pages or missed one.

Run from the repository root: ``.venv/bin/python bench/analyze_sampling.py [--pages 2000]``.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from measuring import nitpicker_command

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.templated import TemplatedSite
from nitpicker.archive.template_store import record_templates
from nitpicker.query.templates import list_template_findings

MOST_SAMPLED = 30
"""The issue's bound: ``--sample 5`` on five templates analyses at most this many pages."""


class TreePeak:
    """The peak RSS of a process and its descendants, sampled every 0.2 s."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            try:
                processes = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            total = 0
            for process in processes:
                try:
                    total += process.memory_info().rss
                except (psutil.NoSuchProcess, psutil.ZombieProcess):
                    continue
            self.peak = max(self.peak, total)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 2**20


def timed(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """Run ``argv``: seconds, peak tree RSS in MB, stderr. Exits when it fails."""
    started = time.monotonic()
    with (cwd / "stderr.log").open("w+") as log:
        process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log)
        peak = TreePeak(process.pid)
        code = process.wait()
        rss = peak.stop()
        log.seek(0)
        err = log.read()
    if code:
        raise SystemExit(f"{' '.join(argv)} failed ({code}):\n{err}")
    return time.monotonic() - started, rss, err


def skeleton_findings(archive: Path) -> set[tuple[int, str, str, str]]:
    """(template, rule, status, element) of the template-level findings (the element: its
    markup, else its selector)."""
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    try:
        found: set[tuple[int, str, str, str]] = set()
        offset = 0
        while True:
            page = list_template_findings(conn, limit=500, offset=offset)
            found |= {(i["template"], i["rule"], i["status"], i["code"] or i["selector"])
                      for i in page["items"]}
            offset += 500
            if offset >= page["total"]:
                return found
    finally:
        conn.close()


def grouped_findings(archive: Path) -> set[tuple[int, str, str, str]]:
    """(template, rule, status, element) of every finding with an element."""
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {(i["template"], i["rule"], i["status"], i["code"] or i["selector"])
                for i in list_template_findings(conn, everything=True, limit=100_000)["items"]}
    finally:
        conn.close()


def analysed(archive: Path, plugin: str) -> int:
    conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM analyzed_pages WHERE plugin = ?",
                                (plugin,)).fetchone()[0])
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the site (2000)")
    parser.add_argument("--plugin", default="axe", help="the plugin to run (axe)")
    parser.add_argument("--sample", type=int, default=5, help="pages a template (5)")
    args = parser.parse_args()
    nitpicker = nitpicker_command()
    workdir = Path(tempfile.mkdtemp(prefix="analyze-sampling-"))
    try:
        with TemplatedSite(pages=args.pages) as site:
            crawl_seconds, crawl_rss, _ = timed(
                [*nitpicker, "crawl", site.url("/"), "-o", "site", "--no-render", "--silent"],
                workdir)
        archive = workdir / "site.nitpicker"
        # the clusters' own cost: recorded again on a copy, in this process
        copy = workdir / "clusters.nitpicker"
        shutil.copyfile(archive, copy)
        conn = sqlite3.connect(copy, isolation_level=None)
        clusters = record_templates(conn)
        conn.close()
        print(f"site: {args.pages} pages + the index, crawled (--no-render) in "
              f"{crawl_seconds:.1f} s, peak RSS {crawl_rss:.0f} MB")
        print(f"template clusters: {clusters.clusters} for {clusters.pages} pages in "
              f"{clusters.seconds:.2f} s ({clusters.seconds / clusters.pages * 1000:.2f} ms a "
              f"page, {clusters.seconds / crawl_seconds * 100:.1f} % of the crawl)")
        runs: dict[str, tuple[float, float, int]] = {}
        for name, extra in (("full", []), ("sample", ["--sample", str(args.sample)])):
            target = workdir / f"{name}.nitpicker"
            shutil.copyfile(archive, target)
            seconds, rss, _ = timed([*nitpicker, "analyze", str(target), "--plugin",
                                     args.plugin, "--silent", *extra], workdir)
            runs[name] = (seconds, rss, analysed(target, args.plugin))
            print(f"({'a' if name == 'full' else 'b'}) {name:6} {runs[name][2]:5d} pages in "
                  f"{seconds:7.1f} s ({runs[name][2] / seconds:.2f} pages/s), peak RSS "
                  f"{rss:.0f} MB", flush=True)
        full = skeleton_findings(workdir / "full.nitpicker")
        sampled = grouped_findings(workdir / "sample.nitpicker")
        missed = sorted(full - sampled)
        print(f"template-level findings of the full run: {len(full)} "
              f"({len({(rule, status) for _, rule, status, _ in full})} rules); "
              f"found by the sample: {len(full) - len(missed)}; missed: {missed or 'none'}")
        print(f"time: sample / full = {runs['sample'][0] / runs['full'][0]:.3f}; "
              f"pages: {runs['sample'][2]} of {runs['full'][2]}")
        ok = not missed and runs["sample"][2] <= MOST_SAMPLED
        if runs["sample"][2] > MOST_SAMPLED:
            print(f"FAIL: the sample analysed {runs['sample'][2]} pages (> {MOST_SAMPLED})")
        return 0 if ok else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
