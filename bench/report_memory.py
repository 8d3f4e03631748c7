"""Time and peak RSS of ``nitpicker report`` (XLSX, and Google Sheets into the local fake)
against a bare baseline, at two archive sizes.

The archive is the synthetic one of ``bench/query_latency.py`` (``build_archive``: sections of
pages, navigation and other anchors, externals, 404s, redirects, images, resources), with
``--nav`` navigation links a page, plus violations in the analysis tables (three on every
tenth in-scope page), a response time on every fetched page (``0014_response_time``) and the
site checks run (the Issues sheet).

The bare baseline reads every sheet's rows with one plain SQL statement each (the same rows,
in the same order, the same number of columns; the cells the archive holds as they are, no
note, no red rule, no per-row look-up) and writes them with the same writer and the same
formats: for XLSX, XlsxWriter in ``constant_memory`` mode with the header format, the frozen
panes (the header row at least), the column widths measured on the first rows, an autofilter,
the Issues' priority formats and the URL columns as the same ``HYPERLINK()`` formulas (issue
26); for Sheets, the same
``SheetsReporter`` requests (a tab, the header, the rows in chunks of 2,500, the tab's
formatting) through the same gspread client into the same fake (``fixtures/sheets_fake.py``,
started here on 127.0.0.1, counting rows instead of keeping them). Each run is its own process
and its peak RSS is the kernel's ``ru_maxrss`` of that process (``os.wait4``). Not a timed
test: it prints its figures (targets: time ratio <= 1.5, RSS at the larger size <= 1.2x the
smaller's). The ratio is of CPU seconds (the process's own user + system time, from the same
``wait4``), which other load on a shared machine disturbs far less than wall time; both print.
Where the machine's own speed drifts from minute to minute (a shared host: the same run has
taken 25 s and 34 s of CPU minutes apart), ``--rounds N`` runs the report and the bare
baseline N times each, alternated, and prints the median of the N ratios of neighbouring runs.

    .venv/bin/python bench/report_memory.py                      # 10,000 and 100,000 pages
    .venv/bin/python bench/report_memory.py --sizes 10000 --formats xlsx
    .venv/bin/python bench/report_memory.py --per-sheet   # and each sheet's rows, built vs plain
    .venv/bin/python bench/report_memory.py --rounds 5    # alternated, the median ratio too
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import query_latency

from nitpicker.archive.check_store import record_checks

SHEET_ID = "1BenchBenchBenchBenchBenchBenchBenchBench00"
SHEET_URL = f"https://docs.google.com/spreadsheets/d/{SHEET_ID}/edit"


_PAGE_ORDER = 'ORDER BY p."order" IS NULL, p."order", p.url'
_INTERNAL = ("+p.scraped = 1 AND +p.is_external = 0 AND +p.content_type = 'text/html'"
             " AND +p.redirect_dest_id IS NULL")

BASE_SQL: dict[str, str] = {
    "Issues": "SELECT min(priority), rule, rule, min(category), count(DISTINCT url), count(*),"
              " min(source), '', '' FROM findings GROUP BY rule ORDER BY 1, 5 DESC, 2",
    "Page List": f"SELECT p.title, p.title, p.url, '', '', '', '', '', '', '', '', '', '', '',"
                 " '', p.status, '', p.lang, '', '', '', '', '', p.description, p.keywords,"
                 " p.noindex, p.nofollow, p.noarchive, p.canonical, p.alternate,"
                 " p.twitter_card, p.og_site_name, p.og_url, p.og_title, p.og_description,"
                 f" p.og_type, p.og_image FROM pages p WHERE {_INTERNAL} AND +p.is_target = 1"
                 f" {_PAGE_ORDER}",
    "Links": "SELECT url, title, status, status_text, content_type, '', '', '{}', skip_reason"
             " FROM pages WHERE redirect_dest_id IS NULL ORDER BY url",
    "Resources": "SELECT url, status, status_text, content_type, content_length, ''"
                 " FROM resources ORDER BY url",
    "Images": "SELECT p.url, i.src, i.current_src, i.alt, i.width, i.height, i.is_lazy,"
              " i.source_code FROM images i JOIN pages p ON p.id = i.page_id"
              " WHERE p.is_external = 0 ORDER BY p.url, i.id",
    "Violations": "SELECT v.validator, v.severity, v.rule, v.code, v.message, p.url"
                  " FROM violations v JOIN pages p ON p.id = v.page_id ORDER BY p.url, v.rowid",
    "Discrepancies": "SELECT 'Link Text vs Page Title', p.url, a.text, d.title, d.url, ''"
                     " FROM pages p JOIN anchors a ON a.page_id = p.id"
                     " JOIN pages h ON h.id = a.href_id"
                     " JOIN pages d ON d.id = coalesce(h.redirect_dest_id, h.id)"
                     f" WHERE {_INTERNAL} AND +p.is_target = 1 AND d.is_external = 0"
                     " AND d.content_type = 'text/html' AND trim(a.text) != trim(d.title)"
                     f' ORDER BY p."order" IS NULL, p."order", p.url, a.id',
    "Summary": "SELECT 'pages', count(*) FROM pages",
    "Referrers Relational Table": "SELECT t.url, s.url, a.text, t.status, t.status_text,"
                                  " t.content_type FROM anchors a JOIN pages h"
                                  " ON h.id = a.href_id JOIN pages t"
                                  " ON t.id = coalesce(h.redirect_dest_id, h.id)"
                                  " JOIN pages s ON s.id = a.page_id ORDER BY t.url, a.id",
    "Resources Relational Table": "SELECT p.url, r.url, r.status, r.status_text,"
                                  " r.content_type, r.content_length FROM resource_referrers rr"
                                  " JOIN resources r ON r.id = rr.resource_id"
                                  " JOIN pages p ON p.id = rr.page_id ORDER BY r.url, p.url",
}
"""Each sheet's rows, plain: the same rows in the same order as the report's builders."""

LINK_COLUMNS: dict[str, tuple[int, ...]] = {"Page List": (2, 32), "Links": (0,)}
"""The columns the report writes as links by a mark (URL, og:url; the Links URL), besides
each spec's ``url_columns``."""


# -- the archive --------------------------------------------------------------------------------


def build(path: Path, pages: int, per_page: int, nav: int) -> None:
    """The synthetic archive, with violations and response times."""
    query_latency.NAV = nav
    query_latency.build_archive(path, pages, per_page)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
            " started_at, ended_at, outcome) VALUES ('axe', '1', '', '{}', '{}', 1,"
            " '2024-06-07T00:00:00', '2024-06-07T00:10:00', 'finished')")
        ids = [r[0] for r in conn.execute(
            f"SELECT p.id FROM pages p WHERE {_INTERNAL} AND p.id % 10 = 0")]
        conn.executemany(
            "INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, code,"
            " message, url) SELECT ?, 'axe', 'page', 'axe', ?, ?, '<img>', ?, url FROM pages"
            " WHERE id = ?",
            [(i, severity, rule, f"{rule} on page {i}", i) for i in ids
             for severity, rule in (("error", "image-alt"), ("warning", "color-contrast"),
                                    ("error", "html-has-lang"))])
        conn.execute("UPDATE pages SET response_time_ms = 20 + (id * 37) % 900"
                     " WHERE scraped = 1 AND status IS NOT NULL")
    conn.isolation_level = None
    record_checks(conn)  # the Issues sheet's findings, as at the end of a crawl
    conn.close()


# -- the baselines (run as their own processes) ---------------------------------------------------


def _specs(conn: sqlite3.Connection) -> dict[str, Any]:
    from nitpicker.query.report_rows import SHEETS

    return {sheet.name: sheet.spec(conn) for sheet in SHEETS}


def bare_xlsx(archive: str, out: str) -> None:
    """Plain SQL, XlsxWriter in constant_memory mode, the report's formats."""
    import xlsxwriter
    from nitpicker_reports.xlsx import ReportWorksheet, column_widths

    from nitpicker.query import open_archive
    from nitpicker.query.report_rows.issues_sheet import PRIORITY_COLOURS

    conn = open_archive(Path(archive))
    workbook = xlsxwriter.Workbook(out, {"constant_memory": True, "strings_to_urls": False,
                                         "strings_to_numbers": False,
                                         "strings_to_formulas": False})
    header = workbook.add_format({"bold": True, "bg_color": "#EEEEEE"})
    link = workbook.add_format({"font_color": "#1155CC", "underline": 1})
    priorities = {name: workbook.add_format({"bg_color": bg, "font_color": fg, "bold": True})
                  for name, (bg, fg) in PRIORITY_COLOURS.items()}
    for name, spec in _specs(conn).items():
        # the report's worksheet class: its formulas stored as written (upstream runs some
        # thirty regular expressions over each, most of a linked cell's cost)
        worksheet = workbook.add_worksheet(name, worksheet_class=ReportWorksheet)
        worksheet.freeze_panes(max(1, spec.freeze_rows), spec.freeze_cols)
        hidden = set(spec.hidden_columns)
        worksheet.write_row(0, 0, spec.headers, header)
        links = (*LINK_COLUMNS.get(name, ()), *spec.url_columns)
        cursor = conn.execute(BASE_SQL[name])
        number = 1
        first = True
        while rows := cursor.fetchmany(2500):
            if first:
                for column, width in enumerate(column_widths(spec.headers, rows)):
                    worksheet.set_column(column, column, width, None,
                                         {"hidden": True} if column in hidden else None)
                first = False
            for row in rows:
                worksheet.write_row(number, 0, row)
                for column in links:
                    url = row[column]
                    if url and len(url) <= 255:
                        quoted = '"' + url.replace('"', '""') + '"'
                        worksheet.write_formula(number, column, f"=HYPERLINK({quoted},{quoted})",
                                                link, url)
                if spec.priority_column is not None and row[0] in priorities:
                    worksheet.write_string(number, 0, row[0], priorities[row[0]])
                number += 1
        worksheet.autofilter(0, 0, number - 1, len(spec.headers) - 1)
    workbook.close()


def bare_sheets(archive: str, key: str) -> None:
    """Plain SQL, the same SheetsReporter requests through the same client."""
    from nitpicker_reports.google_sheets import SheetsReporter, client_from_service_account

    from nitpicker.query import open_archive
    from nitpicker.query.report_rows import SHEETS

    conn = open_archive(Path(archive))
    reporter = SheetsReporter(client_from_service_account(Path(key)), SHEET_URL)
    for sheet in SHEETS:
        spec = sheet.spec(conn)
        tab = reporter._add_tab(spec, sheet.count(conn))
        reporter._put(spec.name, 1, [list(spec.headers)])
        cursor = conn.execute(BASE_SQL[spec.name])
        number = 2
        while rows := cursor.fetchmany(2500):
            reporter._put(spec.name, number, [["" if v is None else v for v in row]
                                              for row in rows])
            number += len(rows)
        reporter._format(tab, spec)


def per_sheet(archive: Path) -> None:
    """Each sheet's rows as the report builds them (its query library builder: values, notes,
    red flags) against the bare baseline's one plain statement, in CPU seconds of this process,
    nothing written: where the report's extra time is spent before any writer sees a row."""
    from nitpicker.query import open_archive
    from nitpicker.query.report_rows import SHEETS

    conn = open_archive(archive)
    totals = [0.0, 0.0]
    print(f"  {'sheet':<28} {'rows':>9} {'builder':>9} {'plain SQL':>10}")
    for sheet in SHEETS:
        started = time.process_time()
        rows = sum(len(chunk) for chunk in sheet.chunks(conn))
        built = time.process_time() - started
        started = time.process_time()
        cursor = conn.execute(BASE_SQL[sheet.name])
        while cursor.fetchmany(2500):
            pass
        plain = time.process_time() - started
        totals[0] += built
        totals[1] += plain
        print(f"  {sheet.name:<28} {rows:>9,} {built:>8.2f}s {plain:>9.2f}s", flush=True)
    print(f"  {'all sheets':<28} {'':>9} {totals[0]:>8.2f}s {totals[1]:>9.2f}s")
    conn.close()


# -- measuring ------------------------------------------------------------------------------------


Measured = tuple[float, float, float]
"""Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one process."""


def _measure(command: list[str], env: dict[str, str] | None = None) -> Measured:
    """Wall and CPU seconds and peak RSS (MB) of ``command`` run as its own process.

    The peak is the process's own ``VmHWM`` (``/proc/self/status``, read at exit by
    :func:`_run_measured`): ``ru_maxrss`` would count the pages of this script the child
    shares between ``fork`` and ``exec`` (Linux keeps the larger of the two).
    """
    started = time.perf_counter()
    with tempfile.NamedTemporaryFile("r", suffix=".hwm") as hwm:
        process = subprocess.Popen(
            [sys.executable, __file__, "--run-measured", hwm.name, *command[1:]],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=ROOT)
        _pid, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        if status != 0:
            assert process.stderr is not None
            raise SystemExit(f"failed: {' '.join(command)}: {process.stderr.read().decode()}")
        peak_kb = int(hwm.read().strip())
    return elapsed, usage.ru_utime + usage.ru_stime, peak_kb / 1024


def _run_measured(out: str, argv: list[str]) -> None:
    """Run ``argv`` (``-m MODULE args`` or ``SCRIPT args``) in this process; at exit write
    this process's peak RSS in kB (``VmHWM``) to ``out``."""
    import atexit
    import runpy

    def record() -> None:
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next(line for line in status if line.startswith("VmHWM:"))
        Path(out).write_text(peak.split()[1])

    atexit.register(record)
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")


def _key_file(path: Path, token_uri: str) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "bench", "private_key_id": "k1",
        "private_key": pem, "client_email": "bench@bench.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri}))
    return path


def _line(fmt: str, pages: int, report: Measured, bare: Measured) -> str:
    return (f"{fmt:<6} {pages:>8,} pages  report {report[0]:6.1f} s ({report[1]:6.1f} s CPU)"
            f" {report[2]:4.0f} MB   bare {bare[0]:6.1f} s ({bare[1]:6.1f} s CPU) {bare[2]:4.0f} MB"
            f"   CPU {report[1] / bare[1]:4.2f}x  wall {report[0] / bare[0]:4.2f}x")


def _medians(fmt: str, pages: int, pairs: list[tuple[Measured, Measured]]) -> str:
    """The median of the rounds' ratios: each report run against the bare run beside it."""
    cpu = statistics.median(report[1] / bare[1] for report, bare in pairs)
    wall = statistics.median(report[0] / bare[0] for report, bare in pairs)
    return (f"{fmt:<6} {pages:>8,} pages  median of {len(pairs)} rounds"
            f"{'':>58}CPU {cpu:4.2f}x  wall {wall:4.2f}x")


def run_xlsx(archive: Path, tmp: Path) -> tuple[Measured, Measured]:
    out = tmp / f"{archive.stem}.xlsx"
    bare_out = tmp / f"{archive.stem}-bare.xlsx"
    for stale in (out, bare_out):
        stale.unlink(missing_ok=True)
    report = _measure([sys.executable, "-m", "nitpicker.cli", "report", str(archive),
                       "--format", "xlsx", "--silent", "-o", str(out)])
    bare = _measure([sys.executable, __file__, "--bare-xlsx", str(archive), str(bare_out)])
    return report, bare


def run_sheets(archive: Path, tmp: Path) -> tuple[Measured, Measured]:
    from nitpicker_reports.google_sheets import API_URL_VARIABLE

    from fixtures.sheets_fake import FakeSheets

    results = []
    for bare in (False, True):
        with FakeSheets(SHEET_ID, keep=False) as fake:
            key = _key_file(tmp / "sa.json", f"{fake.url}/token")
            env = {API_URL_VARIABLE: fake.url}
            if bare:
                command = [sys.executable, __file__, "--bare-sheets", str(archive), str(key)]
            else:
                command = [sys.executable, "-m", "nitpicker.cli", "report", str(archive),
                           "--sheet", SHEET_URL, "-C", str(key), "--silent"]
            results.append(_measure(command, env))
            rows = sum(n for tab, n in fake.row_counts.items() if tab != "Sheet1")
            print(f"  ({'bare' if bare else 'report'}: {rows:,} rows into the fake)",
                  flush=True)
    return results[0], results[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="page counts asked of build_archive (it makes at least ~9,500)")
    parser.add_argument("--per-page", type=int, default=8, help="anchors an in-scope page")
    parser.add_argument("--nav", type=int, default=5, help="navigation links among them")
    parser.add_argument("--formats", default="xlsx,sheets")
    parser.add_argument("--keep", type=Path, help="build the archives in this folder, reuse")
    parser.add_argument("--rounds", type=int, default=1,
                        help="report and bare runs, alternated, a size and format; with more "
                             "than one, the median of their ratios too (peak RSS: the largest)")
    parser.add_argument("--per-sheet", action="store_true",
                        help="also each sheet's builder against its plain statement, CPU s")
    parser.add_argument("--bare-xlsx", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--bare-sheets", nargs=2, help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--run-measured"]:
        _run_measured(sys.argv[2], sys.argv[3:])
        return
    args = parser.parse_args()
    if args.bare_xlsx:
        bare_xlsx(*args.bare_xlsx)
        return
    if args.bare_sheets:
        bare_sheets(*args.bare_sheets)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    rss: dict[str, dict[int, float]] = {f: {} for f in formats}
    with tempfile.TemporaryDirectory(prefix="nitpicker-report-bench-") as scratch:
        tmp = Path(scratch)
        folder = args.keep or tmp
        for size in sizes:
            archive = folder / f"{size}-{args.per_page}-{args.nav}.nitpicker"
            if not archive.exists():
                print(f"building {size:,} pages, {args.per_page} anchors a page …", flush=True)
                build(archive, size, args.per_page, args.nav)
            with sqlite3.connect(archive) as conn:
                pages, anchors = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                                  for t in ("pages", "anchors"))
            print(f"archive: {pages:,} pages, {anchors:,} anchors", flush=True)
            if args.per_sheet:
                per_sheet(archive)
            for fmt in formats:
                pairs = []
                for _round in range(args.rounds):
                    report, bare = (run_xlsx if fmt == "xlsx" else run_sheets)(archive, tmp)
                    pairs.append((report, bare))
                    print(_line(fmt, pages, report, bare), flush=True)
                rss[fmt][pages] = max(report[2] for report, _bare in pairs)
                if len(pairs) > 1:
                    print(_medians(fmt, pages, pairs), flush=True)
    for fmt, by_size in rss.items():
        if len(by_size) > 1:
            small, large = min(by_size), max(by_size)
            print(f"{fmt}: peak RSS {large:,} / {small:,} pages: "
                  f"{by_size[large] / by_size[small]:.2f}x (target <= 1.2)")


if __name__ == "__main__":
    main()
