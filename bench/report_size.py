"""The HTML report's size and how long Chromium takes to open it (issue 26).

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/report_size.py [--cases 500:4000,100000:20000] [--keep DIR]
                                          [--repeat 3] [--no-inline]

For each case ``PAGES:EXTERNAL``, an archive of that many in-scope pages linking to that many
external URLs is generated (``fixtures/report_archive.py``: a navigation of 30 links and 20
other internal links a page, each external URL linked from three pages on average, response
headers on every URL, images, resources, the site checks run; ``--keep DIR`` builds it there
once and reuses it), then:

(b) ``nitpicker report FILE --format html`` is run as the user runs it (its own process: wall
    and CPU seconds), and the HTML file's size, the folder of CSV files beside it and the
    time Chromium (``/usr/bin/chromium`` through Playwright, headless) takes from navigating
    to the file to the first frame after its ``load`` event are printed (best of
    ``--repeat``, a fresh page each);
(a) for the smaller cases (at most 5,000 pages; ``--no-inline`` skips it), the baseline: the
    same report with every row of every table inline and every note whole, as the reporter
    wrote it before issue 26, measured the same way.

Targets (issue 26): at 500 pages and 4,000 external links the HTML at most 5 MB and open in
at most 3 s; at 100,000 pages at most 20 MB. Reported, not asserted: always exits 0.
"""

from __future__ import annotations

import argparse
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

from fixtures.report_archive import build_report_archive

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
INLINE_UP_TO = 5_000
"""The baseline (every row inline) is written for cases of at most this many pages."""
TARGETS = {500: (5.0, 3.0), 100_000: (20.0, None)}
"""Pages: (HTML MB, Chromium seconds) at most."""


def _archive(folder: Path, pages: int, external: int) -> Path:
    path = folder / f"report-{pages}-{external}.nitpicker"
    if not path.exists():
        started = time.perf_counter()
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_report_archive(partial, pages, external)
        partial.rename(path)
        print(f"  built {path.name} in {time.perf_counter() - started:.1f} s", flush=True)
    return path


def _report(archive: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``nitpicker report FILE --format html -o OUT``."""
    started = time.perf_counter()
    proc = subprocess.Popen([*nitpicker_command(), "report", str(archive), "--format", "html",
                             "-o", str(out), "--silent"], stderr=subprocess.PIPE, text=True)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"nitpicker report failed: {stderr}")
    return wall, usage.ru_utime + usage.ru_stime


def _inline(archive: Path, out: Path) -> tuple[float, float]:
    """The baseline: every row of every table inline and every note whole (the reporter
    before issue 26: its head, charts and tables, without the audit); wall and CPU s."""
    from html import escape

    from nitpicker_reports import html as reporter

    from nitpicker.query import open_archive
    from nitpicker.query.report_rows import SHEETS
    from nitpicker.report import ReportSource

    def cell(c: object) -> str:
        value, note, link, error = c.value, c.note, c.link, c.error  # type: ignore[attr-defined]
        attrs = (' class="error"' if error else "") + (
            f' title="{escape(note)}"' if note else "")
        text = "" if value is None else escape(str(value))
        target = link or (value if isinstance(value, str) else None)
        if target and target.startswith(("http://", "https://")):
            text = f'<a href="{escape(target)}">{text}</a>'
        return f"<td{attrs}>{text}</td>"

    started, cpu = time.perf_counter(), time.process_time()
    conn = open_archive(archive)
    source = ReportSource(conn, list(SHEETS[1:]))  # the nine sheets of before, no Issues
    with out.open("w", encoding="utf-8") as handle:
        handle.write(f"<!doctype html><html><head><meta charset=utf-8><style>{reporter.STYLE}"
                     "</style></head><body>")
        reporter._charts(handle, source)
        for sheet in source.sheets:
            spec = sheet.spec(conn)
            hidden = set(spec.hidden_columns)
            handle.write(f"<section><h2>{escape(spec.name)}</h2><div class=table-wrap><table>"
                         "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for i, h in
                                                 enumerate(spec.headers) if i not in hidden)
                         + "</tr></thead><tbody>")
            for rows in source.rows(sheet):
                handle.writelines("<tr>" + "".join(cell(c) for i, c in enumerate(row)
                                                   if i not in hidden) + "</tr>" for row in rows)
            handle.write("</tbody></table></div></section>")
        handle.write("</body></html>\n")
    conn.close()
    return time.perf_counter() - started, time.process_time() - cpu


def _open_seconds(browser: object, path: Path, repeat: int) -> float:
    """Seconds from navigating to the file to the first frame after its load event, best of
    ``repeat`` (a new page each)."""
    times = []
    for _ in range(repeat):
        page = browser.new_page()  # type: ignore[attr-defined]
        started = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load", timeout=900_000)
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => done()))")
        times.append(time.perf_counter() - started)
        page.close()
    return min(times)


def _folder_size(folder: Path) -> tuple[int, int]:
    if not folder.is_dir():
        return 0, 0
    files = [p for p in folder.iterdir() if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def _mb(size: int) -> float:
    return size / 1_000_000


def _verdict(pages: int, megabytes: float, seconds: float | None) -> str:
    target = TARGETS.get(pages)
    if target is None:
        return ""
    size_ok = megabytes <= target[0]
    time_ok = target[1] is None or seconds is None or seconds <= target[1]
    parts = [f"size <= {target[0]:g} MB: {'PASS' if size_ok else 'FAIL'}"]
    if target[1] is not None:
        parts.append(f"open <= {target[1]:g} s: {'PASS' if time_ok else 'FAIL'}")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="500:4000,100000:20000",
                        help="PAGES:EXTERNAL, comma-separated")
    parser.add_argument("--keep", type=Path, help="build the archives here once, reuse them")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-inline", action="store_true", help="skip the baseline")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    cases = [tuple(int(n) for n in case.split(":")) for case in args.cases.split(",")]
    with tempfile.TemporaryDirectory(prefix="nitpicker-report-size-") as scratch, \
            sync_playwright() as playwright:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        print(f"{'case':<22} {'run':<28} {'HTML MB':>8} {'beside':>16} {'report s':>9}"
              f" {'CPU s':>6} {'open s':>7}")
        for pages, external in cases:
            archive = _archive(folder, pages, external)
            label = f"{pages:,} p / {external:,} ext"
            out_dir = Path(scratch) / f"out-{pages}"
            out_dir.mkdir()
            runs = []
            if pages <= INLINE_UP_TO and not args.no_inline:
                runs.append(("(a) every row inline", out_dir / "inline.html", _inline))
            runs.append(("(b) nitpicker report", out_dir / "report.html", _report))
            for name, out, write in runs:
                wall, cpu = write(archive, out)
                size = out.stat().st_size
                files, beside = _folder_size(out.with_name(f"{out.stem}-tables"))
                opened = _open_seconds(browser, out, args.repeat)
                print(f"{label:<22} {name:<28} {_mb(size):>8.2f} "
                      f"{f'{files} CSV, {_mb(beside):.1f} MB':>16} {wall:>9.1f} {cpu:>6.1f}"
                      f" {opened:>7.2f}", flush=True)
                if name.startswith("(b)") and (verdict := _verdict(pages, _mb(size), opened)):
                    print(f"{'':<22} {verdict}")
        browser.close()


if __name__ == "__main__":
    main()
