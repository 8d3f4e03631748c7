"""``nitpicker report`` and the report's row builders (nitpicker.query.report_rows) over a crawl of
the fixture site: the ten sheets and their headers, the cell rules, the XLSX read back with
openpyxl, the CSV folder, the HTML opened in headless Chromium, and the bad-input rules."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from nitpicker.archive.schema import migrate
from nitpicker.query import charts, open_archive
from nitpicker.query.report_rows import SHEET_NAMES, SHEETS, Cell, Chunk, select_sheets
from nitpicker.query.report_rows.page_list import (
    HEADERS,
    is_bad_link,
    parent_index_url,
    path_cells,
    strip_parent_title,
)
from nitpicker.render.chromium import find_chromium
from nitpicker.report import ReportError, ReportSource, write_report
from tests.helpers import (
    EXPECTED_HEADERS,
    PLUGIN_HEADERS,
    REPORT_ROOTS,
    ROOT,
    crawl,
    run,
    store_page_values,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite
    from nitpicker.query.report_rows import SheetSpec

@pytest_twisted.async_fixture(scope="module")
async def archive_path(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("report"), [site.url(r) for r in REPORT_ROOTS])
    archive.conn.close()
    return archive.path


@pytest.fixture(scope="module")
def analysed_path(archive_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the archive with two violations and the page values of two plugins on
    ``/meta/minimal``, as analyzers would have stored them."""
    copy = tmp_path_factory.mktemp("analysed") / "analysed.nitpicker"
    shutil.copy(archive_path, copy)
    conn = sqlite3.connect(copy)
    with conn:  # the analyze store's table (migration 0013_analysis)
        page_id, url = conn.execute(
            "SELECT id, url FROM pages WHERE url LIKE '%/meta/minimal'").fetchone()
        conn.executemany(
            "INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, message,"
            " code, url) VALUES (?, 'axe', 'page', 'axe', 'error', ?, ?, ?, ?)",
            [(page_id, "image-alt", "Images need alt", "<img>", url),
             (page_id, "html-has-lang", "No lang", "<html>", url)])
        store_page_values(conn, page_id)
    conn.close()
    return copy


@pytest.fixture
def conn(archive_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_archive(archive_path)
    yield connection
    connection.close()


def page_list_of(path: Path) -> tuple[SheetSpec, list[list[Cell]]]:
    """The Page List's spec and rows of the archive at ``path``."""
    conn = open_archive(path)
    try:
        return select_sheets(["Page List"])[0].spec(conn), sheet_rows(conn, "Page List")
    finally:
        conn.close()


def sheet_rows(conn: sqlite3.Connection, name: str, chunk_rows: int = 2500
               ) -> list[list[Cell]]:
    (sheet,) = select_sheets([name])
    return [row for chunk in sheet.rows(conn, chunk_rows) for row in chunk]


def by_url(rows: list[list[Cell]], column: int, suffix: str) -> list[Cell]:
    (row,) = [r for r in rows if str(r[column].value).endswith(suffix)]
    return row


# -- the row builders -------------------------------------------------------------------------


def test_the_ten_sheets_in_order_with_their_exact_headers(conn: sqlite3.Connection) -> None:
    assert list(SHEET_NAMES) == list(EXPECTED_HEADERS)
    for sheet in SHEETS:
        spec = sheet.spec(conn)
        assert list(spec.headers) == EXPECTED_HEADERS[sheet.name]
        rows = sheet_rows(conn, sheet.name)
        assert len(rows) == sheet.count(conn), sheet.name
        assert all(len(row) == len(spec.headers) for row in rows), sheet.name


def test_rows_come_in_chunks_of_the_size_asked(conn: sqlite3.Connection) -> None:
    (sheet,) = select_sheets(["Links"])
    sizes = [len(chunk) for chunk in sheet.rows(conn, 4)]
    assert sizes[:-1] == [4] * (len(sizes) - 1) and 0 < sizes[-1] <= 4
    assert sum(sizes) == sheet.count(conn) > 8


def test_page_list_cells(conn: sqlite3.Connection) -> None:
    rows = sheet_rows(conn, "Page List")
    column = {h: i for i, h in enumerate(HEADERS)}
    not_found = by_url(rows, column["URL"], "/error-status/not-found")
    assert not_found[column["Status Code"]] == Cell(404, error=True)
    assert not_found[column["path2"]].value == "/not-found"
    assert not_found[column["Protocol"]] == Cell("http:", error=True)
    top = by_url(rows, column["URL"], "/error-status/")
    bad = top[column["Internal Bad Links"]]
    assert bad.value == 3 and bad.error  # not-found, server-error, forbidden
    assert bad.note is not None and "404 Not Found" in bad.note
    assert top[column["Internal Links"]].value == 4
    assert not top[column["Language"]].error
    errors = by_url(rows, column["URL"], "/errors/")
    assert errors[column["Internal Bad Links"]].value == 1  # /errors/reset: no response (-1)
    assert "-1" in (errors[column["Internal Bad Links"]].note or "")
    full = by_url(rows, column["URL"], "/meta/full")
    assert full[column["Language"]] == Cell("ja")
    assert full[column["og:url"]].link == full[column["og:url"]].value != ""
    dest = by_url(rows, column["URL"], "/redirect/dest")
    assert dest[column["Redirect From"]].value == 2  # start → middle → dest: both point at dest
    assert dest[column["Redirect From"]].note == "\n".join(
        u.replace("dest", hop) for u in [str(dest[column["URL"]].value)]
        for hop in ("middle", "start"))
    assert dest[column["Internal Referrers"]].value == 1
    assert dest[column["Internal Referrers"]].error  # fewer than 2
    assert "/redirect/" in (dest[column["Internal Referrers"]].note or "")


def test_page_list_hides_the_path_columns_deeper_than_any_page(
        conn: sqlite3.Connection) -> None:
    spec = select_sheets(["Page List"])[0].spec(conn)
    first = HEADERS.index("path1")
    assert spec.hidden_columns == tuple(range(first + 2, first + 10))  # /a/b at most
    assert (spec.freeze_rows, spec.freeze_cols) == (1, 1)


def test_page_list_shows_path1_when_a_page_has_only_a_query(tmp_path: Path) -> None:
    """``/?page=2`` fills path1 with ``/?page=2``: that column is not hidden, though no page
    has a path segment."""
    path = tmp_path / "query-only.nitpicker"
    raw = sqlite3.connect(path)
    migrate(raw)
    with raw:
        raw.execute("INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
                    " VALUES (1, 'test', 'test', 'https://example.com/', '[]', '{}',"
                    " '2026-12-01T00:00:00+00:00')")
        raw.executemany(
            "INSERT INTO pages(url, scraped, is_target, is_external, depth, status,"
            " content_type) VALUES (?, 1, 1, 0, 0, 200, 'text/html')",
            [("https://example.com/",), ("https://example.com/?page=2",)])
    raw.close()
    spec, rows = page_list_of(path)
    first = HEADERS.index("path1")
    assert "/?page=2" in [row[first].value for row in rows]
    assert spec.hidden_columns == tuple(range(first + 1, first + 10))


@pytest.mark.parametrize(("title", "parent", "expected"), [
    ("About | Example", "Example", "About"),
    ("About ｜ Example", "Example", "About"),
    ("Example", "Example", "Example"),
    ("About", None, "About"),
    ("About", "Example", "About"),
])
def test_title_minus_the_parent_index_title(title: str, parent: str | None,
                                            expected: str) -> None:
    assert strip_parent_title(title, parent) == expected


@pytest.mark.parametrize(("url", "parent"), [
    ("http://h/a/b/c.html", "http://h/a/b/"),
    ("http://h/a/b/", "http://h/a/"),
    ("http://h/a", "http://h/"),
    ("http://h/", None),
])
def test_parent_index_url(url: str, parent: str | None) -> None:
    assert parent_index_url(url) == parent


@pytest.mark.parametrize(("url", "cells"), [
    ("http://h/a/%E6%97%A5/x?q=1", ["/a", "/日", "/x?q=1"]),
    ("http://h/?q=1", ["/?q=1"]),
    ("http://h/", []),
])
def test_path_cells(url: str, cells: list[str]) -> None:
    values = [c.value for c in path_cells(url)]
    assert values == cells + [None] * (10 - len(cells))


@pytest.mark.parametrize("url", [
    "http://h/a/%E6%97%A5/x?q=1", "https://example.com", "https://example.com/", "http://h/?q",
    "http://h/a?b?c#d?e", "http://h/p#frag", "https://Example.COM/A", "http://h:8080/x",
    "http://user:pw@h/x", "http://[::1]:80/x", "http://h/a\tb", "http://h/a\nb?c\rd",
    "HTTP://h/x", "ftp://h/x", "mailto:a@b", "http://h.example-1.org/x;p?q=1&r=2",
    " http://h/x", "http://h/x ", "http://h/日本?語",
])
def test_split_url_is_urlsplit(url: str) -> None:
    """The Page List's URL splitting: ``urlsplit``'s parts (no fragment) and its host name,
    through the plain-URL shortcut or not."""
    from urllib.parse import urlsplit

    from nitpicker.query.report_rows.page_list import split_url

    expected = urlsplit(url)
    parts, hostname = split_url(url)
    assert parts == expected._replace(fragment="")
    assert hostname == (expected.hostname or "")


@pytest.mark.parametrize(("status", "skipped", "bad"), [
    (None, 0, True), (-1, 0, True), (404, 0, True), (500, 0, True), (401, 0, False),
    (200, 0, False), (301, 0, False), (None, 1, False),
])
def test_bad_links(status: int | None, skipped: int, bad: bool) -> None:
    assert is_bad_link(status, skipped) is bad


@pytest.mark.parametrize(("segment", "red"), [
    ("/_drafts", True), ("/page_", True), ("/about-copy", True), ("/dummy", True),
    ("/about", False), ("/under_score", False),
])
def test_suspicious_path_segments_are_red(segment: str, red: bool) -> None:
    assert path_cells(f"http://h{segment}")[0].error is red


def test_links_and_referrers(conn: sqlite3.Connection) -> None:
    links = sheet_rows(conn, "Links")
    dest = by_url(links, 0, "/redirect/dest")
    assert dest[5].value == 2 and dest[5].note is not None and "/redirect/middle" in dest[5].note
    assert dest[6].value == "2 Elements"  # /redirect/ → start → dest, and dest → start itself
    assert "[REDIRECTED FROM]" in (dest[6].note or "")
    server_error = by_url(links, 0, "/error-status/server-error")
    assert server_error[2] == Cell(500, error=True)
    table = sheet_rows(conn, "Referrers Relational Table")
    via = [r for r in table if str(r[0].value).endswith("/redirect/dest")]
    assert via and all(r[0].note and r[0].note.startswith("[REDIRECTED FROM]") for r in via)


#: Anchor texts whose Referrers note line SQLite writes as Python's ``str.strip()`` would.
ODD_TEXTS = ("  Plain  ", "", " \t\n ", "\u3000全角\u3000", "\xa0nbsp\u2028", "two\nlines",
             "\x1fsep\x85", "✓ mark")


def _referrers_note(texts: list[tuple[str, str, str, str | None]], total: int) -> str:
    """The Links Referrers note as the SPEC words it: a line an anchor (its text stripped, or
    ``__NO_TEXT_CONTENT__``; its page and ``#hash``; the redirect source it goes through),
    the first 100 of them, then ``… and N more``."""
    lines = []
    for text, source, hash_, through in texts[:100]:
        frm = f"{source}#{hash_}" if hash_ else source
        via = f" => [REDIRECTED FROM] {through}" if through else ""
        lines.append(f"{text.strip() or '__NO_TEXT_CONTENT__'} ({frm}{via})")
    more = [f"… and {total - len(lines)} more"] if total > len(lines) else []
    return "\n".join(lines + more)


@pytest.mark.parametrize("extra", [0, 110])
def test_links_referrers_note_lines(archive_path: Path, tmp_path: Path, extra: int) -> None:
    copy = tmp_path / "odd.nitpicker"
    shutil.copy(archive_path, copy)
    db = sqlite3.connect(copy)
    with db:
        dest, dest_url = db.execute(
            "SELECT id, url FROM pages WHERE url LIKE '%/redirect/dest'").fetchone()
        via, via_url = db.execute("SELECT id, url FROM pages WHERE redirect_dest_id = ?",
                                  (dest,)).fetchone()
        pages = db.execute("SELECT id, url FROM pages WHERE is_external = 0 ORDER BY id"
                           " LIMIT 3").fetchall()
        db.execute("DELETE FROM anchors WHERE href_id IN (?, ?)", (dest, via))
        expected = []
        for n, text in enumerate([*ODD_TEXTS, *(f"more {k}" for k in range(extra))]):
            (page, page_url), hash_ = pages[n % 3], ("frag" if n % 2 else "")
            target, through = (via, via_url) if n % 3 == 1 else (dest, None)
            db.execute("INSERT INTO anchors(page_id, href_id, hash, text) VALUES (?, ?, ?, ?)",
                       (page, target, hash_, text))
            expected.append((text, page_url, hash_, through))
    db.close()
    connection = open_archive(copy)
    try:
        row = by_url(sheet_rows(connection, "Links"), 0, dest_url)
        table = [r for r in sheet_rows(connection, "Referrers Relational Table")
                 if r[0].value == dest_url]
    finally:
        connection.close()
    total = len(expected)
    assert row[6].value == f"{total} Elements"
    assert row[6].note == _referrers_note(expected, total)
    # The same anchors in the relational table, in their order: the text as the note has it.
    assert [(r[1].value, r[2].value, r[0].note) for r in table] == [
        (f"{source}#{hash_}" if hash_ else source, text.strip() or "__NO_TEXT_CONTENT__",
         f"[REDIRECTED FROM] {through}" if through else None)
        for text, source, hash_, through in expected]


@pytest.mark.parametrize(("lines", "total"), [
    ([], 0), ([], 3), (["a"], 1), (["a", "b"], 2), (["a", "b"], 7),
    ([f"u{n}" for n in range(100)], 100), ([f"u{n}" for n in range(100)], 250),
    ([f"u{n}" for n in range(120)], 120),  # more lines than a note shows: cut as note_of cuts
])
def test_joined_note_is_note_of_the_lines(lines: list[str], total: int) -> None:
    from nitpicker.query.report_rows.cells import joined_note, note_of

    joined = "\n".join(lines) if lines else None
    assert joined_note(joined, total) == note_of(lines, total)


@pytest.mark.parametrize(("pairs", "merged"), [
    ([], {}),
    ([["b", "1"], ["a", "2"]], {"b": "1", "a": "2"}),
    ([["set-cookie", "a=1"], ["x", "y"], ["set-cookie", "b=2"], ["Set-Cookie", "c=3"]],
     {"set-cookie": "a=1, b=2", "x": "y", "Set-Cookie": "c=3"}),
])
def test_merged_headers_join_a_repeated_name(pairs: list[list[str]],
                                             merged: dict[str, str]) -> None:
    from nitpicker.query.report_rows.links import merged_headers

    result = merged_headers(pairs)
    assert result == merged and list(result) == list(merged)


@pytest.mark.parametrize("headers", [
    {"content-type": "text/html", "x-odd": 'quote " back\\slash \n tab\t ✓ \u2028 \x01'},
    {"set-cookie": "a=1, b=2"},
    {"x-nul\x00": "a NUL \x00 inside, escaped as JSON does", "x-two": "second"},
])
def test_pretty_headers_is_json_dumps_indented(headers: dict[str, str]) -> None:
    from nitpicker.query.report_rows.links import pretty_headers

    assert pretty_headers(headers) == json.dumps(headers, indent=2, ensure_ascii=False)


def test_violations_empty_without_analysis_and_listed_with(
        conn: sqlite3.Connection, analysed_path: Path) -> None:
    assert sheet_rows(conn, "Violations") == []
    assert charts.top_violation_rules(conn) == []
    analysed = open_archive(analysed_path)
    try:
        rows = sheet_rows(analysed, "Violations")
        assert [r[2].value for r in rows] == ["image-alt", "html-has-lang"]
        assert str(rows[0][5].value).endswith("/meta/minimal")
        assert charts.top_violation_pages(analysed)[0][1] == 2
    finally:
        analysed.close()


def test_discrepancies_have_six_cells_and_a_type(conn: sqlite3.Connection) -> None:
    rows = sheet_rows(conn, "Discrepancies")
    assert rows
    assert {r[0].value for r in rows} == {"Link Text vs Page Title"}
    assert all(r[2].value != r[3].value for r in rows)


def test_charts(conn: sqlite3.Connection) -> None:
    statuses = dict(charts.status_distribution(conn))
    assert statuses["404"] == 1 and statuses["500"] == 1 and statuses["200"] > 10
    assert dict(charts.pages_by_depth(conn))["0"] == len(REPORT_ROOTS)
    assert dict(charts.broken_links_by_source(conn))
    assert sum(n for _, n in charts.size_distribution(conn)) > 0
    # every in-scope HTML page of the crawl was timed (0014_response_time)
    timed = charts.response_time_distribution(conn)
    assert sum(n for _, n in timed) == sum(n for _, n in charts.pages_by_depth(conn))


def test_response_time_buckets(tmp_path: Path) -> None:
    from nitpicker.archive.schema import migrate

    archive = tmp_path / "timed.nitpicker"
    db = sqlite3.connect(archive)
    migrate(db)
    db.executemany(
        "INSERT INTO pages(url, scraped, content_type, response_time_ms) VALUES"
        " (?, 1, 'text/html', ?)",
        [(f"https://t.example/{n}", ms) for n, ms in
         enumerate([0, 99, 100, 499, 999, 1_000, 4_999, 5_000, 60_000, None])])
    try:
        assert charts.response_time_distribution(db) == [
            ("< 100 ms", 2), ("100–250 ms", 1), ("250–500 ms", 1), ("500 ms–1 s", 1),
            ("1–2 s", 1), ("2–5 s", 1), ("≥ 5 s", 2)]
        db.execute("DELETE FROM migrations WHERE name = '0014_response_time'")
        assert charts.response_time_distribution(db) == []  # an older archive: no chart
    finally:
        db.close()


# -- writing without half-files ----------------------------------------------------------------


class _Failing:
    def default_path(self, archive: Path) -> Path:
        return archive.with_suffix(".x")

    def write(self, source: ReportSource, path: Path) -> None:
        path.write_text("half")
        raise OSError(28, "No space left on device")


def test_a_failed_report_leaves_nothing(conn: sqlite3.Connection, tmp_path: Path) -> None:
    target = tmp_path / "report.x"
    with pytest.raises(OSError, match="No space"):
        write_report(_Failing(), ReportSource(conn, list(SHEETS)), target)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_output_is_never_overwritten(conn: sqlite3.Connection,
                                                  tmp_path: Path) -> None:
    target = tmp_path / "report.x"
    target.write_text("mine")
    with pytest.raises(ReportError, match="exists"):
        write_report(_Failing(), ReportSource(conn, list(SHEETS)), target)
    assert target.read_text() == "mine"


# -- the command ------------------------------------------------------------------------------


def _column(ws: Any, index: int) -> bool:
    """Whether the worksheet's column ``index`` (0-based) is hidden."""
    for dim in ws.column_dimensions.values():
        if dim.min and dim.min <= index + 1 <= dim.max and dim.hidden:
            return True
    return False


def test_report_xlsx_read_back(archive_path: Path, tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "report.xlsx"
    result = run("report", str(archive_path), "--format", "xlsx", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    workbook = openpyxl.load_workbook(out)
    assert workbook.sheetnames == [*SHEET_NAMES, "Notes"]
    for name, headers in EXPECTED_HEADERS.items():
        assert [c.value for c in workbook[name][1]] == headers, name
    pages = workbook["Page List"]
    assert pages.freeze_panes == "B2"
    assert workbook["Links"].freeze_panes == "B3"
    first_path = HEADERS.index("path1")
    assert not _column(pages, first_path + 1) and _column(pages, first_path + 2)
    status = HEADERS.index("Status Code") + 1
    cached = openpyxl.load_workbook(out, data_only=True)["Page List"]  # formulas' values
    (number,) = [r[0].row for r in cached.iter_rows(min_row=2)
                 if str(r[2].value).endswith("/error-status/not-found")]
    row = pages[number]
    assert row[status - 1].value == 404
    assert row[status - 1].fill.fgColor.rgb == "FFE60000"
    assert row[status - 1].font.color.rgb == "FFFFFFFF"
    url = cached[number][2].value
    assert row[2].value == f'=HYPERLINK("{url}","{url}")'  # a link that streams
    # the title's note is a row of the Notes sheet, and the title links to it
    notes = {(r[0].value, r[1].row): r for r in workbook["Notes"].iter_rows(min_row=2)}
    (note_row,) = [n for (sheet, n), r in notes.items() if sheet == "Page List"
                   and r[1].value == f'=HYPERLINK("#\'Page List\'!A{number}","A{number}")']
    assert notes["Page List", note_row][2].value.startswith("Full-title:")
    assert row[0].value.startswith(f'=HYPERLINK("#\'Notes\'!C{note_row}",')
    assert workbook["Violations"].max_row == 1  # headers only: never analysed


def test_xlsx_links_and_notes_stream(conn: sqlite3.Connection, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision: links as HYPERLINK() formulas, notes in the Notes sheet: nothing a workbook
    holds in memory until it closes (no write_url, no write_comment), whatever the size."""
    openpyxl = pytest.importorskip("openpyxl")
    from nitpicker_reports import xlsx

    long_url = "https://example.com/" + "x" * 300
    odd_url = 'https://example.com/SORT(a)/FILTER(b)?q="x"'
    rows = [[Cell("short", link="https://example.com/a"), Cell(long_url, link=long_url),
             Cell(3, note="one\ntwo", error=True), Cell(odd_url, link=odd_url)]]
    (sheet,) = select_sheets(["Links"])
    fake = type(sheet)(sheet.name, sheet.spec_of, sheet.count,
                       lambda _c, _n: iter([Chunk.of_cells(rows)]))
    out = tmp_path / "decided.xlsx"
    called: list[str] = []
    for name in ("write_url", "write_comment"):
        original = getattr(xlsx.xlsxwriter.worksheet.Worksheet, name)

        def spy(*args: Any, _n: str = name, _o: Any = original, **kw: Any) -> Any:
            called.append(_n)
            return _o(*args, **kw)
        monkeypatch.setattr(xlsx.xlsxwriter.worksheet.Worksheet, name, spy)
    write_report(xlsx.XlsxReporter(), ReportSource(conn, [fake]), out)
    assert called == []
    workbook = openpyxl.load_workbook(out)
    cells = workbook["Links"][2]
    assert cells[0].value == '=HYPERLINK("https://example.com/a","short")'
    assert cells[1].value == long_url  # past a formula's 255 characters: plain text
    assert cells[2].value == '=HYPERLINK("#\'Notes\'!C2",3)'
    assert cells[2].fill.fgColor.rgb == "FFE60000"
    # taken as written: no _xlfn. prefix slipped into a URL naming one of Excel's functions
    assert cells[3].value == ('=HYPERLINK("https://example.com/SORT(a)/FILTER(b)?q=""x""",'
                              '"https://example.com/SORT(a)/FILTER(b)?q=""x""")')
    assert [c.value for c in workbook["Notes"][2]] == [
        "Links", '=HYPERLINK("#\'Links\'!C2","C2")', "one\ntwo"]
    assert openpyxl.load_workbook(out, data_only=True)["Links"]["C2"].value == 3


def test_xlsx_sheet_longer_than_a_worksheet_goes_on(conn: sqlite3.Connection,
                                                   tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    from nitpicker_reports.xlsx import XlsxReporter

    out = tmp_path / "short.xlsx"
    write_report(XlsxReporter(max_rows=6), ReportSource(conn, select_sheets(["Links"])), out)
    workbook = openpyxl.load_workbook(out)
    expected = select_sheets(["Links"])[0].count(conn)
    parts = -(-expected // 5)
    # the Notes sheet is made before the rows are written: the parts come after it
    links = [n for n in workbook.sheetnames if n.startswith("Links")]
    assert links == ["Links", *(f"Links {n}" for n in range(2, parts + 1))]
    assert workbook.sheetnames[1] == "Notes"
    parts_ = [workbook[n] for n in links]
    rows = [r for ws in parts_ for r in ws.iter_rows(min_row=2, values_only=True)]
    assert len(rows) == expected
    assert all([c.value for c in ws[1]] == EXPECTED_HEADERS["Links"] for ws in parts_)
    assert all(ws.freeze_panes == "B3" for ws in parts_)


def test_report_csv_folder(archive_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "csv"
    result = run("report", str(archive_path), "--format", "csv", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(n.lower().replace(" ", "-") + ".csv" for n in SHEET_NAMES)
    import csv

    with (out / "links.csv").open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == EXPECTED_HEADERS["Links"]
    assert any(r[0].endswith("/error-status/not-found") and r[2] == "404" for r in rows)


def test_report_default_path_and_exit_1_when_it_exists(archive_path: Path,
                                                       tmp_path: Path) -> None:
    archive = tmp_path / "site.nitpicker"
    shutil.copy(archive_path, archive)
    first = run("report", str(archive), "--format", "html", "--silent", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    report = tmp_path / "site.html"
    before = report.read_bytes()
    again = run("report", str(archive), "--format", "html", cwd=tmp_path)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines() == [
        f"Error: Output path exists, not overwritten: {report}"]
    assert report.read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "pdf"], "Error: Unknown report format: 'pdf' (choose from csv, html, xlsx)"),
    # the Sheets reporter is in the group too, but writes a spreadsheet (--sheet), not a file
    (["--format", "sheets"],
     "Error: Unknown report format: 'sheets' (choose from csv, html, xlsx)"),
    (["--only", "Nope"], "Error: Unknown sheet 'Nope'"),
    (["-o", "/nonexistent-dir/r.xlsx"], "Error: Output directory not found: /nonexistent-dir"),
])
def test_report_bad_input(archive_path: Path, tmp_path: Path, args: list[str],
                          message: str) -> None:
    result = run("report", str(archive_path), *args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_report_refuses_an_archive_a_crawl_is_writing(archive_path: Path,
                                                      tmp_path: Path) -> None:
    archive = tmp_path / "busy.nitpicker"
    shutil.copy(archive_path, archive)
    Path(f"{archive}.lock").write_text(f"{os.getpid()}\ncrawl\n")  # this process: alive
    result = run("report", str(archive), "--format", "csv", cwd=tmp_path)
    assert result.returncode == 1
    assert "being written by a running crawl" in result.stderr
    assert not (tmp_path / "busy-csv").exists()


needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium")


@needs_chromium
def test_report_html_renders_its_charts_in_chromium(analysed_path: Path,
                                                    tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = run("report", str(analysed_path), "--format", "html", "-o", str(out),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "://cdn" not in html
    screenshot = tmp_path / "report.png"
    browser = subprocess.run(
        [sys.executable, "-m", "tests.report_browser.open_report", str(out), str(screenshot),
         str(find_chromium())],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert browser.returncode == 0, browser.stderr
    seen = json.loads(browser.stdout)
    assert seen["requests"] == []  # self-contained: nothing fetched
    chart_ids = {c["id"] for c in seen["charts"]}
    assert chart_ids == {"chart-status", "chart-depth", "chart-size", "chart-response-time",
                         "chart-violation-rules", "chart-violation-pages", "chart-broken-links"}
    for chart in seen["charts"]:
        assert chart["width"] > 0 and chart["height"] > 0, chart
        assert chart["bars"] == chart["drawn"] == chart["declared"] > 0, chart
    assert screenshot.stat().st_size > 10_000
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- plugin columns ----------------------------------------------------------------------------


def test_page_list_plugin_columns_with_their_notes(analysed_path: Path,
                                                   conn: sqlite3.Connection) -> None:
    assert list(select_sheets(["Page List"])[0].spec(conn).headers) == EXPECTED_HEADERS[
        "Page List"]  # never analysed: no plugin columns
    spec, rows = page_list_of(analysed_path)
    fixed = len(EXPECTED_HEADERS["Page List"])
    assert list(spec.headers) == [*EXPECTED_HEADERS["Page List"], *PLUGIN_HEADERS]
    assert spec.note_columns == (fixed, fixed + 1, fixed + 2)
    assert all(len(row) == len(spec.headers) for row in rows)
    minimal = by_url(rows, HEADERS.index("URL"), "/meta/minimal")
    assert minimal[fixed:] == [Cell("true", note="lorem at line 3"), Cell(2),
                               Cell(0.5, note="two rules failed")]
    other = by_url(rows, HEADERS.index("URL"), "/meta/full")
    assert other[fixed:] == [Cell(None)] * 3


def test_plugin_columns_in_xlsx_and_csv(analysed_path: Path, tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "report.xlsx"
    result = run("report", str(analysed_path), "--only", "Page List", "-o", str(out),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    workbook = openpyxl.load_workbook(out, data_only=True)  # links and notes are formulas
    pages = workbook["Page List"]
    headers = [c.value for c in pages[1]]
    assert headers == [*EXPECTED_HEADERS["Page List"], *PLUGIN_HEADERS]
    (row,) = [r for r in pages.iter_rows(min_row=2) if str(r[2].value).endswith("/meta/minimal")]
    found = row[headers.index("Search: found")]
    assert found.value == "true"
    # the note: in the Notes sheet (Sheet, Cell, Note), the noted cell linking to it
    notes = {(r[0].value, r[1].value): r[2].value for r in workbook["Notes"].iter_rows(min_row=2)}
    assert notes[("Page List", found.coordinate)] == "lorem at line 3"
    assert row[headers.index("Search: count")].value == 2
    folder = tmp_path / "csv"
    result = run("report", str(analysed_path), "--only", "Page List", "--format", "csv", "-o",
                 str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    import csv

    with (folder / "page-list.csv").open(encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0][len(EXPECTED_HEADERS["Page List"]):] == [
        "Search: found", "Search: found note", "Search: count", "Search: count note",
        "Lint: score", "Lint: score note"]
    (line,) = [r for r in table if r[2].endswith("/meta/minimal")]
    assert line[len(EXPECTED_HEADERS["Page List"]):] == [
        "true", "lorem at line 3", "2", "", "0.5", "two rules failed"]


def test_plugin_columns_in_html_with_notes_as_titles(analysed_path: Path,
                                                     tmp_path: Path) -> None:
    from nitpicker_reports.html import HtmlReporter

    out = tmp_path / "report.html"
    analysed = open_archive(analysed_path)
    try:
        write_report(HtmlReporter(), ReportSource(analysed, select_sheets(["Page List"])), out)
    finally:
        analysed.close()
    html = out.read_text(encoding="utf-8")
    assert "<th>Search: found</th><th>Search: count</th><th>Lint: score</th>" in html
    assert '<td title="lorem at line 3">true</td><td>2</td><td title="two rules failed">0.5</td>' \
        in html


# -- --dedupe-resources, --limit, which sheets --------------------------------------------------


@pytest.fixture(scope="module")
def resources_path(archive_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the archive whose pages loaded a tracking pixel under many query strings."""
    copy = tmp_path_factory.mktemp("resources") / "resources.nitpicker"
    shutil.copy(archive_path, copy)
    conn = sqlite3.connect(copy)
    with conn:
        pages = [r[0] for r in conn.execute("SELECT id FROM pages WHERE is_external = 0"
                                            " ORDER BY id LIMIT 3")]
        base = "http://cdn.test/"
        urls = [(f"{base}px.gif?uid={n}&t={n % 2}", 200, "image/gif") for n in range(120)]
        urls += [(f"{base}px.gif?t=1&uid=x&uid=y", 200, "image/gif"),  # keys once, sorted
                 (f"{base}px.gif?uid=1", 200, "image/gif"),
                 (f"{base}px.gif?uid=2", 404, "text/html"),
                 (f"{base}app.js", 200, "text/javascript"),
                 (f"{base}px.gifx?uid=3", 200, "image/gif")]
        for n, (url, status, ctype) in enumerate(urls):
            cursor = conn.execute("INSERT INTO resources(url, status, status_text, content_type,"
                                  " content_length) VALUES (?, ?, 'OK', ?, ?)",
                                  (url, status, ctype, 40 + n))
            conn.execute("INSERT INTO resource_referrers(resource_id, page_id) VALUES (?, ?)",
                         (cursor.lastrowid, pages[n % 3]))
    conn.close()
    return copy


def test_dedupe_resources_folds_query_strings(resources_path: Path) -> None:
    conn = open_archive(resources_path)
    try:
        (sheet,) = select_sheets(["Resources"], dedupe_resources=True)
        spec = sheet.spec(conn)
        rows = [row for chunk in sheet.rows(conn, 2) for row in chunk]
        count = sheet.count(conn)
        raw = select_sheets(["Resources"])[0].count(conn)
    finally:
        conn.close()
    assert list(spec.headers) == [*EXPECTED_HEADERS["Resources"], "Count", "Query Pattern"]
    table = {(r[0].value, r[1].value): (r[5].value, r[6].value, r[7].value) for r in rows
             if "cdn.test" in str(r[0].value)}  # beside the crawl's own resources
    base = "http://cdn.test/"
    assert table == {
        (f"{base}app.js", 200): ("1 pages", 1, ""),
        (f"{base}px.gif?t&uid", 200): ("3 pages", 121, "t=2, uid=100+"),
        (f"{base}px.gif?uid", 200): ("1 pages", 1, "uid=1"),
        (f"{base}px.gif?uid", 404): ("1 pages", 1, "uid=1"),
        (f"{base}px.gifx?uid", 200): ("1 pages", 1, "uid=1"),
    }
    assert [r[0].value for r in rows] == sorted(r[0].value for r in rows)
    assert count == len(rows) == raw - 120  # 121 pixel URLs folded into one row
    (app,) = [r for r in rows if r[0].value == f"{base}app.js"]
    assert app[4].value == 40 + 123  # its own length


def test_dedupe_resources_and_limit_on_the_command_line(resources_path: Path,
                                                        tmp_path: Path) -> None:
    import csv

    out = tmp_path / "csv"
    result = run("report", str(resources_path), "--format", "csv", "-o", str(out),
                 "--dedupe-resources", "--limit", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (out / "resources.csv").open(encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0][-2:] == ["Count", "Query Pattern"]
    assert len(table) == 4  # the first 3 rows by URL: a crawled image, then the CDN's
    assert table[2][0] == "http://cdn.test/app.js"
    assert table[3][0] == "http://cdn.test/px.gif?t&uid" and table[3][-2:] == ["121",
                                                                              "t=2, uid=100+"]
    for name in SHEET_NAMES:  # every sheet: at most 3 rows
        with (out / (name.lower().replace(" ", "-") + ".csv")).open(encoding="utf-8") as handle:
            assert 1 <= len(list(csv.reader(handle))) <= 4, name
    with (out / "links.csv").open(encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == 4


def test_limit_cuts_every_sheet_and_its_count(conn: sqlite3.Connection) -> None:
    source = ReportSource(conn, list(SHEETS), chunk_rows=2, limit=5)
    for sheet in SHEETS:
        rows = [row for chunk in source.rows(sheet) for row in chunk]
        assert len(rows) == source.count(sheet) == min(5, sheet.count(conn)), sheet.name
    assert source.total_rows() == sum(min(5, s.count(conn)) for s in SHEETS)


def _invoke(args: list[str], answer: str | None, terminal: bool,
            monkeypatch: pytest.MonkeyPatch) -> Any:
    from typer.testing import CliRunner

    from nitpicker.cli import report as report_cli

    monkeypatch.setattr(report_cli, "is_terminal", lambda: terminal)
    return CliRunner().invoke(report_cli.app, args, input=answer)


@pytest.mark.parametrize(("args", "answer", "terminal", "written"), [
    ([], "2 4\n", True, ["Page List", "Resources"]),
    ([], "1\n", True, ["Issues"]),  # the Issues first (issue 26)
    ([], "Links, Summary\n", True, ["Links", "Summary"]),
    ([], "\n", True, list(SHEET_NAMES)),  # Enter: every sheet
    ([], "12\n5\n", True, ["Images"]),  # not a choice: asked again
    (["--all"], None, True, list(SHEET_NAMES)),
    (["--only", "Links"], None, True, ["Links"]),
    ([], None, False, list(SHEET_NAMES)),  # not a terminal: every sheet, nothing asked
])
def test_which_sheets(archive_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      args: list[str], answer: str | None, terminal: bool,
                      written: list[str]) -> None:
    out = tmp_path / "csv"
    result = _invoke([str(archive_path), "--format", "csv", "-o", str(out), "--silent", *args],
                     answer, terminal, monkeypatch)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(
        n.lower().replace(" ", "-") + ".csv" for n in written)
    assert ("What do you report?" in result.output) is (answer is not None)


def test_all_and_only_together_are_refused(archive_path: Path, tmp_path: Path) -> None:
    result = run("report", str(archive_path), "--all", "--only", "Links", "--format", "csv",
                 "-o", str(tmp_path / "csv"), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: --all and --only contradict each other: give one of them"]
    assert not (tmp_path / "csv").exists()


def test_no_answer_at_the_sheet_question_exits_0_and_writes_nothing(
        archive_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "csv"
    result = _invoke([str(archive_path), "--format", "csv", "-o", str(out)], "", True,
                     monkeypatch)  # end of input, as Ctrl-D (Ctrl-C raises the same Abort)
    assert result.exit_code == 0, result.output
    assert "What do you report?" in result.output
    assert not out.exists()


def test_the_collector_runs_less_often_while_a_report_is_written(
        archive_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from nitpicker_reports import csv_folder

    from nitpicker.report.collector import REPORT_THRESHOLDS

    seen: list[tuple[tuple[int, int, int], int]] = []
    write = csv_folder.CsvReporter.write

    def watched(self: Any, source: ReportSource, path: Path) -> None:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        write(self, source, path)

    monkeypatch.setattr(csv_folder.CsvReporter, "write", watched)
    before = gc.get_threshold()
    result = _invoke([str(archive_path), "--format", "csv", "-o", str(tmp_path / "csv"),
                      "--silent"], None, False, monkeypatch)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1
    thresholds, frozen = seen[0]
    assert thresholds == REPORT_THRESHOLDS
    assert frozen > 10_000  # the imported modules, classes, functions
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
