"""``nitpicker diff`` against the bare SQL it runs, on two synthetic archives.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/diff_compare.py [--pages 100000] [--anchors-per-page 20]
                                           [--keep DIR] [--repeat 3]

One run:

1. builds OLD with ``bench/query_latency.py``'s synthetic archive (schema by ``migrate()``,
   rows by ``executemany``), then NEW as a copy of it changed in SQL: 5% of the internal pages
   retitled, 1% answering 404, 2% of the pages' URLs moved (2% removed, 2% added), every 50th
   page linking to another page, 1% of images losing their alt text, a trap-cap firing.
   Findings: OLD has an ``axe`` run, a violation on every other internal page and a plugin
   value on each; in NEW 10,000 violations moved to another line (persisting), 2% fixed,
   1% new, 5% of the values changed.
   ``--keep DIR`` builds both there once and reuses them;
2. in a fresh process (so the build's memory does not count), times the library
   (``compare_archives`` + every category read row by row, the first 10 items kept: what
   ``nitpicker diff`` does), then the same statements run bare on a connection with both
   archives attached (the pairs table built, each category's SQL stepped to the end, rows
   dropped), alternating, the best of ``--repeat`` kept; prints both, their ratio (target
   <= 1.5) and the process's peak RSS (target <= 300 MB, not growing with the archives).

Always exits 0 once the runs completed: targets are reported, not asserted.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.query_latency import build_archive
from nitpicker.query import diff_findings
from nitpicker.query.diff import (
    _IDENTITY,
    CATEGORIES,
    compare_archives,
    summarise_diff,
)
from nitpicker.query.diff_categories import _PAIRS_SQL, _to_new

_SITE_HTML = ("is_external = 0 AND status = 200 AND content_type = 'text/html'")

_FINDINGS = (
    ("INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
     " started_at, outcome) VALUES ('axe', '1', '', '{}', '{}', 1, '', 'finished')"),
    # a violation on every other internal page, its line depending on the page
    ("INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, code, message,"
     " url, location) SELECT id, 'axe', 'page', 'axe',"
     " CASE WHEN id % 3 = 0 THEN 'serious' ELSE 'moderate' END, 'rule-' || (id % 10),"
     " '<img src=\"/img/' || id || '.png\" class=\"hero\">',"
     " 'Images must have alternate text', url, (id % 300) || ':5'"
     f" FROM pages WHERE {_SITE_HTML} AND id % 2 = 0"),
    ("INSERT INTO page_values(plugin, page_id, key, phase, value, note)"
     f" SELECT 'axe', id, 'count', 'page', '1', NULL FROM pages WHERE {_SITE_HTML}"),
)
"""OLD's findings (NEW starts as a copy)."""

_CHANGES = (
    # 5% of the internal pages retitled
    ("UPDATE pages SET title = title || ' (new)' WHERE is_external = 0 AND status = 200"
    " AND content_type = 'text/html' AND id % 20 = 3"),
    # 1% answering 404
    ("UPDATE pages SET status = 404, status_text = 'Not Found' WHERE is_external = 0"
    " AND status = 200 AND content_type = 'text/html' AND id % 100 = 7"),
    # 2% of the URLs moved: each a page removed and a page added
    ("UPDATE pages SET url = url || '-moved' WHERE is_external = 0 AND status = 200"
    " AND id % 50 = 11"),
    # every 50th page links to another page instead of one it linked to
    ("UPDATE anchors SET href_id = (href_id % (SELECT max(id) FROM pages)) + 1"
    " WHERE id % 50 = 13"),
    # 1% of the images lose their alt text
    "UPDATE images SET alt = '' WHERE id % 100 = 17 AND alt = 'x'",
    ("INSERT INTO trap_events(run_id, signature, parent_path, count, first_url, last_url,"
    " created_at) VALUES (1, 'bench', '/list/date', 10, 'a', 'b', '2024-06-08')"),
    # 10,000 findings moved three lines down: the same findings
    ("UPDATE violations SET location = ((page_id % 300) + 3) || ':5' WHERE id IN ("
     "SELECT id FROM violations WHERE id % 4 = 1 LIMIT 10000)"),
    # 2% fixed, 1% new
    "DELETE FROM violations WHERE id % 50 = 2",
    ("INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, code, message,"
     " url, location) SELECT id, 'axe', 'page', 'axe', 'critical', 'label', '<input>',"
     f" 'Form elements must have labels', url, '40:1' FROM pages WHERE {_SITE_HTML}"
     " AND id % 100 = 5"),
    # 5% of the values changed
    "UPDATE page_values SET value = '2' WHERE page_id % 20 = 9",
)


def build(directory: Path, pages: int, per_page: int) -> tuple[Path, Path]:
    old, new = directory / "old.nitpicker", directory / "new.nitpicker"
    if not old.exists():
        print(f"building {old} …", file=sys.stderr)
        build_archive(old, pages, per_page)
        conn = sqlite3.connect(old, isolation_level=None)
        conn.execute("BEGIN")
        for sql in _FINDINGS:
            conn.execute(sql)
        conn.execute("COMMIT")
        conn.close()
    if not new.exists():
        print(f"building {new} …", file=sys.stderr)
        shutil.copyfile(old, new)
        conn = sqlite3.connect(new, isolation_level=None)
        conn.execute("BEGIN")
        for sql in _CHANGES:
            conn.execute(sql)
        conn.execute("COMMIT")
        conn.close()
    return old, new


def _library(old: Path, new: Path) -> dict[str, int]:
    with compare_archives(old, new) as diff:
        summary = summarise_diff(diff, limit=10)
    return {name: c["count"] for name, c in summary["categories"].items()}


def _bare(old: Path, new: Path) -> None:
    conn = sqlite3.connect("file::memory:", uri=True)
    for schema, path in (("old", old), ("new", new)):
        conn.execute(f"ATTACH DATABASE ? AS {schema}", (f"{path.resolve().as_uri()}?mode=ro",))
    params = _IDENTITY.params()
    conn.execute("CREATE TEMP TABLE pairs (old_id INTEGER PRIMARY KEY,"
                 " new_id INTEGER NOT NULL UNIQUE)")
    conn.execute(_PAIRS_SQL, params)
    diff_findings.prepare(conn, params, _to_new("p.url"))  # the fingerprints' two tables
    for category in CATEGORIES:
        sql = category.sql.format(where="") if category.name == "trap_caps_new" else category.sql
        for _ in conn.execute(sql, params):
            pass
    conn.close()


def measure(old: Path, new: Path, repeat: int) -> None:
    library: list[float] = []
    bare: list[float] = []
    cpu: dict[str, list[float]] = {"library": [], "bare": []}
    counts: dict[str, int] = {}
    for round_ in range(repeat):
        order = [("library", library), ("bare", bare)]
        for name, times in order if round_ % 2 == 0 else reversed(order):
            started, started_cpu = time.perf_counter(), time.process_time()
            if name == "library":
                counts = _library(old, new)
            else:
                _bare(old, new)
            times.append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = (old.stat().st_size + new.stat().st_size) / 2**20
    print("counts:", ", ".join(f"{name} {count:,}" for name, count in counts.items()))
    print(f"library {min(library):7.2f} s   bare SQL {min(bare):7.2f} s   "
          f"ratio {min(library) / min(bare):.2f} (target <= 1.5)")
    print(f"CPU: library {min(cpu['library']):7.2f} s   bare SQL {min(cpu['bare']):7.2f} s   "
          f"ratio {min(cpu['library']) / min(cpu['bare']):.2f} (the wall time on a shared "
          "machine is mostly I/O wait)")
    print(f"peak RSS {rss_mb:.0f} MB (target <= 300 MB) for {size_mb:.0f} MB of archives")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--anchors-per-page", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the archives in this folder once")
    parser.add_argument("--measure", nargs=2, type=Path, metavar=("OLD", "NEW"),
                        help=argparse.SUPPRESS)  # the fresh process of step 2
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # the builder's process
    args = parser.parse_args(argv)
    if args.measure:
        measure(*args.measure, args.repeat)
        return 0
    if args.build:
        build(args.build, args.pages, args.anchors_per_page)
        return 0
    with tempfile.TemporaryDirectory(prefix="nitpicker-diff-bench-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        # Each step in its own process: Linux keeps a process's peak RSS across fork and exec,
        # so a measuring process started by the builder would report the build's peak.
        subprocess.run([sys.executable, __file__, "--build", str(directory), "--pages",
                        str(args.pages), "--anchors-per-page", str(args.anchors_per_page)],
                       check=True)
        subprocess.run([sys.executable, __file__, "--measure", str(directory / "old.nitpicker"),
                        str(directory / "new.nitpicker"), "--repeat", str(args.repeat)],
                       check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
