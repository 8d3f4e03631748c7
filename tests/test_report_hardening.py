"""``nitpicker report`` against hostile archives: crawled text that a spreadsheet would run as a
formula (CSV), URLs whose scheme runs something (XLSX), non-finite plugin values, SIGTERM
half-way, and ``--urls`` (a report of the listed URLs only).

The crawled archive is ``/formulas/`` of the fixture site: a title, description, keywords,
``og:*`` values, anchor texts and an image's alt text that start with ``=``, ``+``, ``-`` or
``@``, and ``og:url`` values of ``javascript:``, ``file:``, ``vbscript:`` and ``ms-msdt:``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
import pytest_twisted
from nitpicker_reports.csv_folder import file_name

from nitpicker.query import open_archive
from nitpicker.query.report_rows import SHEET_NAMES, select_sheets
from tests import nonfinite_plugin
from tests.helpers import ROOT, count, crawl, run
from tests.viewer_process import Viewer

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

#: Plugin values, notes and a header title of the tab and carriage-return kinds (the crawl
#: strips those from page text), with a negative number that must stay a number.
PLUGIN_HEADERS = {"cell": "=EVIL()", "tabbed": "Tabbed", "negative": "Negative"}


@pytest_twisted.async_fixture(scope="module")
async def formulas_crawl(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("formulas"), [site.url("/formulas/")])
    archive.conn.close()
    return archive.path


@pytest.fixture(scope="module")
def formulas_path(formulas_crawl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The crawl of ``/formulas/`` with a plugin's values and violations on its top page, as
    ``nitpicker analyze`` stores them, every text starting with a formula character."""
    copy = tmp_path_factory.mktemp("formulas-analysed") / "formulas.nitpicker"
    shutil.copy(formulas_crawl, copy)
    conn = sqlite3.connect(copy)
    with conn:
        page_id, url = conn.execute(
            "SELECT id, url FROM pages WHERE url LIKE '%/formulas/'").fetchone()
        conn.execute(
            "INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
            " started_at, outcome) VALUES ('evil', '1', 'h', '{}', ?, 1, '2026-12-01',"
            " 'finished')", (json.dumps(PLUGIN_HEADERS),))
        conn.executemany(
            "INSERT INTO page_values(plugin, page_id, key, phase, value, note)"
            " VALUES ('evil', ?, ?, 'page', ?, ?)",
            [(page_id, "cell", json.dumps("=IMPORTXML(A1,\"//a\")"), "+note"),
             (page_id, "tabbed", json.dumps("\t=1+1"), "\r=2+2"),
             (page_id, "negative", json.dumps(-5), "@note")])
        conn.execute(
            "INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, message,"
            " code, url) VALUES (?, 'evil', 'page', '=validator', '+severity', '-rule',"
            " '@message', '=code', ?)", (page_id, url))
    conn.close()
    return copy


def _csv_cells(folder: Path) -> dict[str, list[list[str]]]:
    """Every CSV file of the folder, by sheet name: its rows, header row first."""
    files = {file_name(name): name for name in SHEET_NAMES}
    cells: dict[str, list[list[str]]] = {}
    for path in sorted(folder.iterdir()):
        with path.open(encoding="utf-8", newline="") as handle:
            cells[files[path.name]] = list(csv.reader(handle))
    return cells


def _as_text(value: Any) -> str:
    """How the csv module writes a value."""
    return "" if value is None else str(value)


def test_csv_text_cells_never_start_a_formula(formulas_path: Path, tmp_path: Path) -> None:
    """Every cell of every CSV file: a text cell starting with = + - @ TAB CR is written with a
    leading ' (OWASP), anything else as the row builders give it; numbers stay numbers."""
    out = tmp_path / "csv"
    result = run("report", str(formulas_path), "--format", "csv", "-o", str(out), "--silent",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = _csv_cells(out)
    assert sorted(written) == sorted(SHEET_NAMES)
    escaped: set[tuple[str, str]] = set()  # (sheet, header) of every neutralised cell
    conn = open_archive(formulas_path)
    try:
        for sheet in select_sheets(None):
            spec = sheet.spec(conn)
            rows = [row for chunk in sheet.rows(conn) for row in chunk]
            header, *body = written[spec.name]
            headers: list[str] = []
            values: list[list[Any]] = []
            for index, title in enumerate(spec.headers):  # a note column after a noted one
                headers.append(title)
                if index in spec.note_columns:
                    headers.append(f"{title} note")
            for row in rows:
                line: list[Any] = []
                for index, cell in enumerate(row):
                    line.append(cell.value)
                    if index in spec.note_columns:
                        line.append(cell.note or "")
                values.append(line)
            assert len(body) == len(values), spec.name
            for title, shown in zip(headers, header, strict=True):
                _check_cell(title, shown)
            for line, shown_line in zip(values, body, strict=True):
                for title, value, shown in zip(headers, line, shown_line, strict=True):
                    if _check_cell(value, shown):
                        escaped.add((spec.name, title.removesuffix(" note")))
    finally:
        conn.close()
    for text in [cell for rows in written.values() for row in rows for cell in row]:
        assert len(text) < 2 or not text.startswith(FORMULA_STARTS) or re.fullmatch(
            r"-\d+(\.\d+)?", text), text  # a number, written as a number
    page_list = {(n, h) for n, h in escaped if n == "Page List"}
    assert page_list == {("Page List", h) for h in (
        "Title", "Full Title", "Language", "description", "keywords", "twitter:card",
        "og:site_name", "og:title", "og:description", "og:type", "=EVIL()", "Tabbed",
        "Negative")}
    assert escaped - page_list == {
        ("Links", "Page Title"), ("Images", "Alternative Text"),
        ("Discrepancies", "Left"), ("Discrepancies", "Right"),
        ("Referrers Relational Table", "Referrer Content"),
        *(("Violations", h) for h in ("Validator", "Severity", "Rule", "Code", "Message")),
        ("Issues", "Issue"), ("Issues", "ID")}  # an analyzer's validator/rule
    (top,) = [r for r in written["Page List"][1:] if r[2].endswith("/formulas/")]
    row = dict(zip(written["Page List"][0], top, strict=True))
    assert row["'=EVIL()"] == "'=IMPORTXML(A1,\"//a\")" and row["'=EVIL() note"] == "'+note"
    assert row["Tabbed"] == "'\t=1+1" and row["Tabbed note"] == "'\r=2+2"
    assert row["Negative"] == "-5" and row["Negative note"] == "'@note"  # the number as it was
    assert row["twitter:card"] == "'-1"  # text that looks like a number is still text
    assert row["Status Code"] == "200"


def _check_cell(value: Any, shown: str) -> bool:
    """The CSV cell ``shown`` of the builders' ``value``; whether it was neutralised."""
    if isinstance(value, str) and len(value) > 1 and value.startswith(FORMULA_STARTS):
        assert shown == "'" + value
        return True
    assert shown == _as_text(value)
    return False


def test_xlsx_links_only_to_web_urls(formulas_path: Path, tmp_path: Path) -> None:
    """A javascript:, file:, vbscript: or ms-msdt: og:url is plain text, never a HYPERLINK();
    http(s) URLs (the scheme in any case) stay links."""
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "report.xlsx"
    result = run("report", str(formulas_path), "--format", "xlsx", "-o", str(out), "--silent",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    workbook = openpyxl.load_workbook(out)
    pages = workbook["Page List"]
    headers = [c.value for c in pages[1]]
    url, og_url = headers.index("URL"), headers.index("og:url")
    shown = {}
    for row in pages.iter_rows(min_row=2):
        page = re.search(r'"(http[^"]+)"\)$', str(row[url].value))
        assert page, row[url].value  # the page's own URL: a link
        shown[page.group(1).rsplit("/formulas/", 1)[1]] = row[og_url].value
    assert shown == {
        "": "javascript:alert(1)",
        "file": "file:///etc/passwd",
        "vbscript": "VBScript:MsgBox(1)",
        "msdt": 'ms-msdt:/id PCWDiagnostic /skip force /param "IT_RebrowseForFile=?"',
        "target": '=HYPERLINK("https://example.com/formulas/target",'
                  '"https://example.com/formulas/target")',
        "upper": '=HYPERLINK("https://example.com/formulas/upper",'
                 '"https://example.com/formulas/upper")',
    }
    for worksheet in workbook.worksheets:
        for row in worksheet.iter_rows():
            for cell in row:
                target = re.match(r'=HYPERLINK\("([^"]*)"', str(cell.value))
                if target:
                    assert target.group(1).startswith(("http://", "https://", "#")), cell.value


# -- plugin values that are not finite numbers -------------------------------------------------


def _strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN`` and ``Infinity`` (not JSON)."""
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def _with_plugin(*args: str, cwd: Path, plugins: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(plugins)]),
           "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def nonfinite_analysis(formulas_crawl: Path, tmp_path_factory: pytest.TempPathFactory
                       ) -> tuple[Path, str]:
    """The crawl of ``/formulas/`` analysed by a plugin giving NaN, inf and -inf on every
    page (:mod:`tests.nonfinite_plugin`), and what ``analyze`` printed on stderr."""
    directory = tmp_path_factory.mktemp("nonfinite")
    archive = directory / "nonfinite.nitpicker"
    shutil.copy(formulas_crawl, archive)
    plugins = nonfinite_plugin.register(directory / "plugins")
    done = _with_plugin("analyze", str(archive), "--plugin", "nonfinite", cwd=directory,
                        plugins=plugins)
    assert done.returncode == 0, done.stderr
    return archive, done.stderr


@pytest.fixture(scope="module")
def nonfinite_path(nonfinite_analysis: tuple[Path, str]) -> Path:
    return nonfinite_analysis[0]


def test_non_finite_plugin_values_are_stored_as_null(nonfinite_analysis: tuple[Path, str]
                                                     ) -> None:
    """Decision: stored as null (an empty cell) with a warning, the page not refused."""
    nonfinite_path, stderr = nonfinite_analysis
    pages = count(nonfinite_path, "SELECT count(DISTINCT page_id) FROM page_values")
    warnings = [line for line in stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 2, stderr  # the first one, then the run's count
    assert "plugin nonfinite gave nan for 'nan' on http" in warnings[0]
    assert "stored as empty (null)" in warnings[0]
    assert f"plugin nonfinite: {3 * pages} values were not finite numbers" in warnings[1]
    conn = sqlite3.connect(nonfinite_path)
    try:
        stored = set(conn.execute("SELECT key, value, note FROM page_values"))
    finally:
        conn.close()
    assert stored == {("nan", "null", "0/0"), ("inf", "null", None), ("minus", "null", None),
                      ("ratio", "0.5", "finite")}


def test_non_finite_values_in_xlsx_query_and_viewer(nonfinite_path: Path,
                                                     tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "report.xlsx"
    done = run("report", str(nonfinite_path), "--format", "xlsx", "-o", str(out), "--silent",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pages = openpyxl.load_workbook(out, data_only=True)["Page List"]
    headers = [c.value for c in pages[1]]
    columns = [headers.index(title) for title in nonfinite_plugin.HEADERS.values()]
    rows = [[row[c].value for c in columns] for row in pages.iter_rows(min_row=2)]
    assert rows and all(row == [None, None, None, 0.5] for row in rows)

    query = run("query", str(nonfinite_path), "page-values", "--plugin", "nonfinite",
                cwd=tmp_path)
    assert query.returncode == 0, query.stderr
    items = _strict(query.stdout)["items"]
    assert items and all(item["values"]["nan"] == {"value": None, "note": "0/0"}
                         and item["values"]["inf"]["value"] is None
                         and item["values"]["ratio"]["value"] == 0.5 for item in items)

    url = items[0]["url"]
    viewer = Viewer(str(nonfinite_path), "--port", "0")
    try:
        answer = viewer.get(f"/a/0/page?url={quote(url, safe='')}&format=json")
    finally:
        code, err = viewer.stop()
    assert answer.status_code == 200, answer.text
    values = {v["key"]: v["value"] for v in _strict(answer.text)["analysis"]}
    assert values == {"nan": None, "inf": None, "minus": None, "ratio": 0.5}
    assert code == 0 and "Traceback" not in err, err


# -- SIGTERM half-way --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def large_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic archive of ~20,000 pages and 270,000 links: a report takes seconds."""
    from bench.query_latency import build_archive

    path = tmp_path_factory.mktemp("large") / "large.nitpicker"
    build_archive(path, 20_000, 8)
    return path


@pytest.mark.parametrize(("fmt", "output", "writing"), [
    ("csv", "large-csv", ".large-csv.partial-*/*.csv"),  # a file of the hidden folder
    ("xlsx", "large.xlsx", "**/tmp*"),  # XlsxWriter's row files, somewhere in TMPDIR
])
def test_sigterm_half_way_leaves_nothing(large_archive: Path, tmp_path: Path, fmt: str,
                                         output: str, writing: str) -> None:
    """SIGTERM stops a report as Ctrl-C does: exit 130, one line, no partial output (the CSV
    folder's hidden ``.NAME.partial-PID``), no scratch file (XlsxWriter's, in TMPDIR)."""
    work = tmp_path / "out"
    scratch = tmp_path / "tmp"
    work.mkdir()
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "report", str(large_archive), "--format", fmt,
         "-o", str(work / output), "--silent"], env=env, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    where = work if fmt == "csv" else scratch
    try:
        deadline = time.monotonic() + 60
        while not any(where.glob(writing)):
            assert process.poll() is None, process.communicate()[1]  # still writing
            assert time.monotonic() < deadline, "the report did not start writing"
            time.sleep(0.005)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["Interrupted: nothing was written"]
    assert list(work.iterdir()) == []
    assert list(scratch.iterdir()) == []


# -- --urls: a report of the listed URLs only --------------------------------------------------

#: Each sheet's column naming the page a row is about, which --urls keeps the rows of.
LISTED_BY = {"Page List": "URL", "Links": "URL", "Images": "Page URL", "Violations": "URL",
             "Discrepancies": "Left URL", "Referrers Relational Table": "Link (To)",
             "Resources Relational Table": "Referred Page (From)"}


def _url_file(directory: Path, site_base: str) -> tuple[Path, set[str]]:
    """A URL file listing two pages of /formulas/ (one in another case, with a fragment and
    a comment), a URL the archive lacks, blank lines and comments; and the two pages' URLs."""
    path = directory / "urls.txt"
    path.write_text(f"# the pages to report on\n{site_base}/formulas/\n\n"
                    f"{site_base.upper()}/formulas/target#top  # the target\n"
                    f"{site_base}/formulas/nowhere\n", encoding="utf-8")
    return path, {f"{site_base}/formulas/", f"{site_base}/formulas/target"}


def _base(archive: Path) -> str:
    conn = sqlite3.connect(archive)
    try:
        (url,) = conn.execute("SELECT url FROM pages WHERE url LIKE '%/formulas/'").fetchone()
    finally:
        conn.close()
    return str(url).removesuffix("/formulas/")


def test_urls_keeps_the_rows_of_the_listed_pages(formulas_path: Path, tmp_path: Path) -> None:
    """--urls: every sheet keeps the rows about a listed page (by the column of LISTED_BY;
    Resources: what a listed page loaded), the Summary, the Issues and the Technologies are the
    archive's; a listed URL the
    archive lacks is one warning line. CSV, XLSX and HTML."""
    base = _base(formulas_path)
    urls, listed = _url_file(tmp_path, base)
    full = run("report", str(formulas_path), "-f", "csv", "-o", str(tmp_path / "all"),
               "--silent", cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    done = run("report", str(formulas_path), "-f", "csv", "-o", str(tmp_path / "some"),
               "--silent", "--urls", str(urls), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Warning: 1 of the 3 URLs of {urls} is not in the archive: {base}/formulas/nowhere",
        f"Report written: {tmp_path / 'some'}"]
    every, some = _csv_cells(tmp_path / "all"), _csv_cells(tmp_path / "some")
    loaded = {row[1] for row in every["Resources Relational Table"][1:] if row[0] in listed}
    assert loaded  # the image of /formulas/
    for name in SHEET_NAMES:
        header, *rows = every[name]
        if name in ("Summary", "Issues", "Technologies"):  # the archive's, whatever is listed
            kept = rows
        elif name == "Resources":
            kept = [row for row in rows if row[0] in loaded]
        else:
            column = header.index(LISTED_BY[name])
            kept = [row for row in rows if row[column] in listed]
        assert some[name] == [header, *kept], name
    page_list = some["Page List"]
    assert {row[2] for row in page_list[1:]} == listed
    assert all(some[name][1:] for name in LISTED_BY), some  # every sheet has rows to keep
    assert len(some["Links"]) < len(every["Links"])

    openpyxl = pytest.importorskip("openpyxl")
    xlsx = tmp_path / "some.xlsx"
    done = run("report", str(formulas_path), "-o", str(xlsx), "--silent", "--urls", str(urls),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    workbook = openpyxl.load_workbook(xlsx, data_only=True)
    assert {row[2] for row in workbook["Page List"].iter_rows(min_row=2, values_only=True)} == (
        listed)
    assert {row[0] for row in workbook["Links"].iter_rows(min_row=2, values_only=True)} == listed

    html = tmp_path / "some.html"
    done = run("report", str(formulas_path), "-f", "html", "-o", str(html), "--silent",
               "--urls", str(urls), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = html.read_text(encoding="utf-8")
    section = re.search(r'<section id="sheet-page-list">.*?</section>', text, re.DOTALL)
    assert section and section.group(0).count("<tr>") == 1 + len(listed)
    assert all(f'<a href="{url}">{url}</a>' in section.group(0) for url in listed)
    chart = re.search(r'<figure><figcaption>Status codes \(pages\)</figcaption>.*?'
                      r'</figure>', text, re.DOTALL)
    assert chart and re.findall(r">(\d+)</text>", chart.group(0)) == ["200", "2"]  # not 6


@pytest.mark.parametrize(("content", "message"), [
    (None, "Error: Cannot read the URL file: {path} (No such file or directory)"),
    ("# nothing\n\n", "Error: No URLs found in the URL file: {path}"),
    (b"http://a/\xff\n", "Error: The URL file is not UTF-8 text: {path} (byte 0xff at offset 9)"),
    ("http://elsewhere.example/a\nhttp://elsewhere.example/b\n",
     ("Error: None of the 2 URLs of {path} is in the archive (the first:"
     " http://elsewhere.example/a): check the file, and the archive it goes with")),
])
def test_urls_bad_input(formulas_path: Path, tmp_path: Path, content: str | bytes | None,
                        message: str) -> None:
    path = tmp_path / "urls.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    out = tmp_path / "report"
    done = run("report", str(formulas_path), "-f", "csv", "-o", str(out), "--urls", str(path),
               cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [message.format(path=path)]
    assert list(tmp_path.iterdir()) == ([path] if content is not None else [])
