"""``nitpicker query FILE grep`` over 100,000 snapshots: time and peak memory (issue 32).

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/grep_snapshots.py [--pages 100000] [--keep DIR] [--repeat 3]

An archive of ``--pages`` snapshots of about 20 KB each is generated
(``fixtures/snapshot_archive.py``: varied markup, compressed as the crawl stores them; one
page in 1,000 holds the marker; ``--keep DIR`` builds it there once and reuses it). Then, each
in its own process, as the user runs it (wall and CPU seconds, peak RSS from ``wait4``; best
of ``--repeat``):

(a) the baseline: a bare loop that reads every snapshot from one cursor and decompresses it
    (the least any search of the stored snapshots costs);
(b) ``grep MARKER``: a literal, case-sensitive search of the markup (the bytes fast path);
(c) ``grep /regex/ --ignore-case``: a regular expression, every snapshot decoded;
(d) ``grep MARKER --in text``: the text a reader sees, every snapshot turned into text.

The ratio is each run's wall time over the baseline's. Memory should not grow with the
archive: compare ``--pages 10000`` with ``--pages 100000``. Reported, not asserted: exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from measuring import nitpicker_command

from fixtures.snapshot_archive import MARKER, build_snapshot_archive

BASELINE = """
import sqlite3, sys
from nitpicker.query.snapshot_encoding import decode
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
total = 0
for encoding, blob in conn.execute("SELECT encoding, html FROM snapshots ORDER BY page_id"):
    total += len(decode(encoding, blob))
print(total)
"""


def _archive(folder: Path, pages: int) -> Path:
    path = folder / f"snapshots-{pages}.nitpicker"
    if not path.exists():
        started = time.perf_counter()
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_snapshot_archive(partial, pages)
        partial.rename(path)
        print(f"  built {path.name} ({path.stat().st_size / 1e6:.0f} MB) in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
    return path


def _measure(command: list[str], repeat: int) -> tuple[float, float, float, str]:
    runs = [_run(command) for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def _run(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MB) and stdout of ``command``, reaped by ``wait4``
    (its own CPU time and peak RSS)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        stderr = proc.stderr.read() if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} failed: {stderr}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the archive in DIR once and reuse it")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        archive = _archive(folder, args.pages)
        print(f"grep over {args.pages:,} snapshots ({archive.stat().st_size / 1e6:.0f} MB"
              f" archive), best of {args.repeat}:")
        print(f"{'run':<34} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'ratio':>6}"
              f" {'matches':>8}")
        runs = [
            ("(a) baseline: read + decompress", [sys.executable, "-c", BASELINE, str(archive)]),
            ("(b) grep MARKER", [*nitpicker_command(), "query", str(archive), "grep", MARKER]),
            ("(c) grep /regex/ --ignore-case",
             [*nitpicker_command(), "query", str(archive), "grep",
              "/needle-IN-the-\\w+ in page \\d+/", "--ignore-case"]),
            ("(d) grep MARKER --in text",
             [*nitpicker_command(), "query", str(archive), "grep", MARKER, "--in", "text"]),
        ]
        base = None
        for label, command in runs:
            wall, cpu, rss, out = _measure(command, args.repeat)
            base = base or wall
            matches = json.loads(out)["total"] if out.startswith("{") else "-"
            print(f"{label:<34} {wall:>8.2f} {cpu:>8.2f} {rss:>12.0f} {wall / base:>6.2f}"
                  f" {matches:>8}", flush=True)


if __name__ == "__main__":
    main()
