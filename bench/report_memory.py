"""Time and peak RSS of ``nitpicker report --format xlsx`` against a bare baseline.

The archive is the synthetic one of ``bench/query_latency.py`` (``build_archive``), at two
sizes. The baseline reads each sheet's base rows with one plain SQL statement (no per-row
look-ups: no notes, no referrer counts, no bad-link rule) and writes them with the same writer
(XlsxWriter, ``constant_memory``). Each run is its own process; its peak RSS is the kernel's
``ru_maxrss`` of that process (``os.wait4``). Not a timed test: it prints its figures.

    .venv/bin/python bench/report_memory.py                      # 10,000 and 100,000 pages
    .venv/bin/python bench/report_memory.py --sizes 2000,10000 --per-page 10
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from query_latency import build_archive

_BASE_SQL = {
    "Page List": "SELECT title, title, url, '', '', '', '', '', '', '', '', '', '', '', '',"
                 " status, '', lang, '', '', '', '', '', description, keywords, noindex,"
                 " nofollow, noarchive, canonical, alternate, twitter_card, og_site_name,"
                 " og_url, og_title, og_description, og_type, og_image FROM pages"
                 " WHERE scraped = 1 AND is_external = 0 AND content_type = 'text/html'"
                 " AND redirect_dest_id IS NULL AND is_target = 1",
    "Links": "SELECT url, title, status, status_text, content_type, '', '', '{}', skip_reason"
             " FROM pages WHERE redirect_dest_id IS NULL",
    "Resources": "SELECT url, status, status_text, content_type, content_length, ''"
                 " FROM resources",
    "Images": "SELECT p.url, i.src, i.current_src, i.alt, i.width, i.height, i.is_lazy,"
              " i.source_code FROM images i JOIN pages p ON p.id = i.page_id",
    "Referrers Relational Table": "SELECT t.url, s.url, a.text, t.status, t.status_text,"
                                  " t.content_type FROM anchors a JOIN pages t ON"
                                  " t.id = a.href_id JOIN pages s ON s.id = a.page_id",
    "Resources Relational Table": "SELECT p.url, r.url, r.status, r.status_text,"
                                  " r.content_type, r.content_length FROM resource_referrers rr"
                                  " JOIN resources r ON r.id = rr.resource_id"
                                  " JOIN pages p ON p.id = rr.page_id",
}


def baseline(archive: str, out: str) -> None:
    """The bare baseline: plain SQL, the same writer."""
    import sqlite3

    import xlsxwriter

    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    workbook = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_urls": False})
    for name, sql in _BASE_SQL.items():
        worksheet = workbook.add_worksheet(name)
        cursor = conn.execute(sql)
        row_number = 1
        while rows := cursor.fetchmany(2500):
            for row in rows:
                if row_number < 1_048_576:
                    worksheet.write_row(row_number, 0, row)
                row_number += 1
    workbook.close()


def _measure(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of ``command`` run as its own process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"failed: {' '.join(command)}: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="page counts asked of build_archive (it makes at least ~9,500)")
    parser.add_argument("--per-page", type=int, default=20)
    parser.add_argument("--baseline", nargs=2, metavar=("ARCHIVE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        baseline(*args.baseline)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    rss: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="nitpicker-report-bench-") as tmp:
        for size in sizes:
            archive = Path(tmp) / f"{size}.nitpicker"
            print(f"building {size:,} pages, {args.per_page} links a page …", flush=True)
            build_archive(archive, size, args.per_page)
            report = [sys.executable, "-m", "nitpicker.cli", "report", str(archive),
                      "--format", "xlsx", "--silent", "-o", str(Path(tmp) / f"{size}.xlsx")]
            bare = [sys.executable, __file__, "--baseline", str(archive),
                    str(Path(tmp) / f"{size}-bare.xlsx")]
            with sqlite3.connect(archive) as conn:
                pages = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
            r_time, r_rss = _measure(report)
            b_time, b_rss = _measure(bare)
            rss[size] = r_rss
            print(f"{pages:>8,} pages  report {r_time:7.1f} s {r_rss:6.0f} MB   "
                  f"bare {b_time:7.1f} s {b_rss:6.0f} MB   time ratio {r_time / b_time:4.2f}",
                  flush=True)
    if len(sizes) > 1:
        print(f"peak RSS {sizes[-1]:,} / {sizes[0]:,} pages: {rss[sizes[-1]] / rss[sizes[0]]:.2f}"
              " (target <= 1.2)")


if __name__ == "__main__":
    main()
