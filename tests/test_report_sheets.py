"""``nitpicker report FILE --sheet URL`` against a local fake of the Sheets v4 API
(fixtures/sheets_fake.py), through the real gspread and google-auth code: a service-account key
the test generates, whose ``token_uri`` is the fake's token endpoint."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

pytest.importorskip("gspread")

from nitpicker_reports.google_sheets import (
    API_URL_VARIABLE,
    IN_FLIGHT_VARIABLE,
    SheetsError,
    SheetsReporter,
    client_from_credentials,
    client_from_service_account,
    in_flight_setting,
)

from fixtures.sheets_fake import FakeSheets
from nitpicker.query import open_archive
from nitpicker.query.report_rows import (
    SHEET_NAMES,
    SHEETS,
    Cell,
    Chunk,
    Sheet,
    SheetSpec,
    select_sheets,
)
from nitpicker.query.report_rows.cells import stream
from nitpicker.query.report_rows.issues_sheet import PRIORITY_COLOURS
from nitpicker.report import ReportSource
from tests.helpers import (
    EXPECTED_HEADERS,
    PLUGIN_HEADERS,
    SHEET_ACCOUNT,
    SHEET_URL,
    report_cli,
    run,
    store_page_values,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path




def _report(report_archive_path: Path, key_file: Path, chunk_rows: int = 2500,
            waits: list[tuple[float, int]] | None = None) -> SheetsReporter:
    heard = waits if waits is not None else []
    client = client_from_service_account(key_file, lambda w, c: heard.append((w, c)))
    client.sleep = lambda _seconds: None
    reporter = SheetsReporter(client, SHEET_URL)
    conn = open_archive(report_archive_path)
    try:
        reporter.write(ReportSource(conn, list(SHEETS), chunk_rows=chunk_rows))
    finally:
        conn.close()
    return reporter


def test_the_nine_tabs_with_headers_and_rows(report_archive_path: Path, key_file: Path,
                                             fake: FakeSheets) -> None:
    reporter = _report(report_archive_path, key_file)
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]
    conn = open_archive(report_archive_path)
    try:
        for sheet in SHEETS:
            rows = fake.tabs[sheet.name]
            assert rows[0] == EXPECTED_HEADERS[sheet.name]
            assert len(rows) - 1 == sheet.count(conn), sheet.name
        assert reporter.sent_rows == sum(sheet.count(conn) for sheet in SHEETS)
    finally:
        conn.close()
    token = [r for r in fake.requests if r.path == "/token"]
    assert token and token[0].body["grant_type"] == [
        "urn:ietf:params:oauth:grant-type:jwt-bearer"]
    assert token[0].body["assertion"][0].count(".") == 2  # a signed JWT
    api = [r for r in fake.requests if r.path != "/token"]
    assert all(r.authorization == "Bearer fake-token" for r in api)


def _value_writes(fake: FakeSheets, title: str) -> list[tuple[int, int]]:
    """(first row, rows) of every ``values.update`` into ``title``, by first row."""
    writes = [r for r in fake.requests if r.method == "PUT" and f"/values/'{title}'!A" in r.path]
    assert all(r.query["valueInputOption"] == ["RAW"] for r in writes)
    return sorted((int(r.path.rsplit("!A", 1)[1]), len(r.body["values"])) for r in writes)


def test_rows_go_in_chunks(report_archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    _report(report_archive_path, key_file, chunk_rows=4)
    writes = _value_writes(fake, "Links")
    assert writes[0] == (1, 1)  # the header row
    assert max(n for _, n in writes[1:]) == 4 and len(writes) > 3
    assert [first for first, _ in writes[1:]] == list(range(2, 2 + 4 * (len(writes) - 1), 4))


def test_formatting_requests(report_archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    _report(report_archive_path, key_file)
    requests = [req for r in fake.requests if r.path.endswith(":batchUpdate")
                for req in r.body["requests"]]
    tabs = [req["addSheet"]["properties"]["title"] for req in requests if "addSheet" in req]
    assert tabs == list(SHEET_NAMES)
    assert tabs[0] == "Issues"  # the audit first (issue 26)
    rules = [req["addConditionalFormatRule"]["rule"] for req in requests
             if "addConditionalFormatRule" in req]
    assert fake.entries["Issues"]["addConditionalFormatRule"] == 5
    assert {rule["booleanRule"]["condition"]["values"][0]["userEnteredValue"]: (
        rule["ranges"], rule["booleanRule"]["format"]["backgroundColor"]) for rule in rules} == {
        priority: ([{"sheetId": fake.state.tab_ids["Issues"], "startRowIndex": 1,
                     "startColumnIndex": 0, "endColumnIndex": 1}],
                   {"red": int(bg[1:3], 16) / 255, "green": int(bg[3:5], 16) / 255,
                    "blue": int(bg[5:7], 16) / 255})
        for priority, (bg, _text) in PRIORITY_COLOURS.items()}
    red = fake.red_cells("Page List")
    assert red and all(fake.formats["Page List"][cell] == {
        "backgroundColor": {"red": 0.9, "green": 0.0, "blue": 0.0},
        "textFormat": {"foregroundColor": {"red": 1.0, "green": 1.0, "blue": 1.0}}}
        for cell in red)
    frozen = [req["updateSheetProperties"]["properties"]["gridProperties"] for req in requests
              if "updateSheetProperties" in req]
    assert {"frozenRowCount": 1, "frozenColumnCount": 1} in frozen
    assert {"frozenRowCount": 2, "frozenColumnCount": 1} in frozen
    hidden = [req for req in requests if "updateDimensionProperties" in req]
    assert len(hidden) == 8  # path3…path10: no page is deeper than /a/b


def test_red_cells_and_notes_are_the_rows_own(report_archive_path: Path, key_file: Path,
                                              fake: FakeSheets) -> None:
    """Every tab's red cells and notes are exactly the cells the row builders mark."""
    _report(report_archive_path, key_file, chunk_rows=7)  # many chunks: every offset is checked
    conn = open_archive(report_archive_path)
    try:
        for sheet in SHEETS:
            red: set[tuple[int, int]] = set()
            notes: dict[tuple[int, int], str] = {}
            number = 1
            for chunk in sheet.rows(conn):
                for row in chunk:
                    for column, cell in enumerate(row):
                        if cell.error:
                            red.add((number, column))
                        if cell.note:
                            notes[(number, column)] = cell.note
                    number += 1
            assert fake.red_cells(sheet.name) == red, sheet.name
            assert fake.notes.get(sheet.name, {}) == notes, sheet.name
    finally:
        conn.close()
    assert fake.red_cells("Page List") and fake.notes["Page List"] and fake.notes["Links"]


def test_429_is_waited_out(report_archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    fake.fail_next(429, "Quota exceeded", times=3)
    waits: list[tuple[float, int]] = []
    _report(report_archive_path, key_file, waits=waits)
    assert waits == [(1.0, 429), (2.0, 429), (4.0, 429)]
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]


def test_not_shared_names_the_account(report_archive_path: Path, key_file: Path,
                                      fake: FakeSheets) -> None:
    fake.fail_next(403, "The caller does not have permission")
    with pytest.raises(SheetsError, match=f"not shared with {SHEET_ACCOUNT}"):
        _report(report_archive_path, key_file)


def test_api_not_enabled(report_archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    fake.fail_next(403, "Google Sheets API has not been used in project 1 before or it is"
                   " disabled")
    with pytest.raises(SheetsError, match="not enabled"):
        _report(report_archive_path, key_file)


def test_report_sheet_on_the_command_line(report_archive_path: Path, key_file: Path,
                                          fake: FakeSheets, tmp_path: Path) -> None:
    env = {API_URL_VARIABLE: fake.url}
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "--credentials", str(key_file),
                env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]
    # the Issues tab first, one row an issue, as nitpicker query FILE issues lists them
    header, *rows = fake.tabs["Issues"]
    assert header == EXPECTED_HEADERS["Issues"]
    listed = json.loads(run("query", str(report_archive_path), "issues", "--limit", "1000",
                            cwd=tmp_path).stdout)
    assert listed["items"]
    assert rows == [[i["priority"], i["title"], i["id"], i["category"], i["urls"],
                     i["findings"], i["source"], i["explanation"], i["fix"]]
                    for i in listed["items"]]
    again = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(key_file), env=env,
                 cwd=tmp_path)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines() == [
        ("Error: The spreadsheet already has a tab named 'Issues': remove or rename it,"
        " or report into another spreadsheet")]


@pytest.mark.parametrize(("args", "message"), [
    (["--sheet", "https://example.com/nope"], "Error: Not a Google Sheets URL: "),
    (["--sheet", SHEET_URL, "-C", "missing.json"], "Error: Credentials file not found: "),
    (["--sheet", SHEET_URL, "--format", "xlsx"], "Error: --sheet writes to Google Sheets"),
])
def test_report_sheet_bad_input(report_archive_path: Path, key_file: Path, fake: FakeSheets,
                                tmp_path: Path, args: list[str], message: str) -> None:
    if "-C" not in args:
        args = [*args, "-C", str(key_file)]
    result = report_cli(str(report_archive_path), *args, env={API_URL_VARIABLE: fake.url}, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(fake.tabs) == ["Sheet1"]


# -- chunks in flight -------------------------------------------------------------------------


def _numbers(count: int, red_every: int = 1000, note_every: int = 0) -> Sheet:
    """A sheet of ``count`` rows (``n``, ``n²``; every ``red_every``th red, every
    ``note_every``th ``n`` with a note), streamed like the real ones."""
    spec = SheetSpec("Numbers", ("n", "square"))
    sql = ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?)"
           " SELECT n FROM c")

    def rows(conn: sqlite3.Connection, chunk_rows: int) -> Iterator[Chunk]:
        for chunk in stream(conn, sql, (count,), chunk_rows):
            yield Chunk.of_cells([
                [Cell(n, note=f"n={n}" if note_every and n % note_every == 0 else None),
                 Cell(n * n, error=n % red_every == 0)] for (n,) in chunk])

    return Sheet("Numbers", lambda _conn: spec, lambda _conn: count, rows)


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_chunks_of_2500_with_a_bounded_number_in_flight(key_file: Path, fake: FakeSheets,
                                                         in_flight: int) -> None:
    fake.state.delay = 0.15  # every answer takes a while: chunks overlap if they may
    fake.fail_next(429, "Quota exceeded", on="'Numbers'!A2502")
    waits: list[tuple[float, int]] = []
    client = client_from_credentials(key_file, lambda w, c: waits.append((w, c)))
    client.sleep = lambda _seconds: None
    reporter = SheetsReporter(client, SHEET_URL, in_flight=in_flight)
    conn = sqlite3.connect(":memory:")
    counted: list[int] = []  # the progress line's rows: each chunk whole, though sent in a thread
    try:
        reporter.write(ReportSource(conn, [_numbers(8000)], on_rows=counted.append))
    finally:
        conn.close()
    assert counted == [2500, 2500, 2500, 500]
    assert _value_writes(fake, "Numbers") == [
        (1, 1), (2, 2500), (2502, 2500), (2502, 2500), (5002, 2500), (7502, 500)]
    assert fake.tabs["Numbers"] == [["n", "square"], *([n, n * n] for n in range(1, 8001))]
    assert reporter.sent_rows == 8000
    assert waits == [(1.0, 429)]  # the refused chunk was sent again after the wait
    assert fake.max_in_flight == in_flight
    assert sorted(fake.red_cells("Numbers")) == [(n, 1) for n in range(1000, 8001, 1000)]
    (grid,) = [req["addSheet"]["properties"]["gridProperties"] for r in fake.requests
               if r.path.endswith(":batchUpdate") for req in r.body["requests"]
               if "addSheet" in req]
    assert grid == {"rowCount": 8001, "columnCount": 2}


def test_the_bytes_in_flight_are_bounded_too(key_file: Path, fake: FakeSheets) -> None:
    """Chunks of long notes wait for the bytes already in flight, not only for a free request:
    with room for one chunk's bodies, one chunk at a time, whatever the count allows; a chunk
    larger than the room still goes, alone."""
    fake.state.delay = 0.15
    reporter = SheetsReporter(client_from_credentials(key_file), SHEET_URL, in_flight=3,
                              in_flight_bytes=60_000)
    conn = sqlite3.connect(":memory:")
    try:
        reporter.write(ReportSource(conn, [_numbers(8000, note_every=1)]))  # ~70 kB a chunk
    finally:
        conn.close()
    assert fake.max_in_flight == 1
    assert reporter.sent_rows == 8000
    assert len(fake.notes["Numbers"]) == 8000


@pytest.mark.parametrize(("red_every", "note_every"), [(1000, 0), (1, 0), (3, 2), (1, 1)])
def test_one_update_cells_a_chunk_however_many_cells_are_red(
        key_file: Path, fake: FakeSheets, red_every: int, note_every: int) -> None:
    """The red cells and notes of a chunk go in one request entry: the entries follow the
    chunks (4 of 2,500 rows for 8,000), not the red or noted cells (8 to 16,000 here)."""
    reporter = SheetsReporter(client_from_credentials(key_file), SHEET_URL)
    conn = sqlite3.connect(":memory:")
    try:
        reporter.write(ReportSource(conn, [_numbers(8000, red_every, note_every)]))
    finally:
        conn.close()
    assert fake.entries["Numbers"] == {"addSheet": 1, "updateCells": 4, "repeatCell": 1,
                                       "updateSheetProperties": 1}
    assert fake.red_cells("Numbers") == {(n, 1) for n in range(red_every, 8001, red_every)}
    assert fake.notes.get("Numbers", {}) == (
        {(n, 0): f"n={n}" for n in range(note_every, 8001, note_every)} if note_every else {})


@pytest.mark.parametrize("raw", ["0", "9", "two", "-1"])
def test_in_flight_setting_refuses_bad_values(raw: str) -> None:
    with pytest.raises(SheetsError, match=f"NITPICKER_SHEETS_IN_FLIGHT .*{raw!r}"):
        in_flight_setting({"NITPICKER_SHEETS_IN_FLIGHT": raw})
    assert in_flight_setting({}) == 3 and in_flight_setting({IN_FLIGHT_VARIABLE: "4"}) == 4


# -- OAuth desktop flow: credentials.json → consent → token.json --------------------------------


@pytest.fixture
def client_file(fake: FakeSheets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An OAuth client of the Desktop app kind whose Google endpoints are the fake's."""
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the fake speaks plain HTTP
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"installed": {
        "client_id": "1234-nitpicker.apps.googleusercontent.com", "client_secret": "s3cret",
        "project_id": "fake-project", "auth_uri": f"{fake.url}/auth",
        "token_uri": f"{fake.url}/token", "redirect_uris": ["http://localhost"]}}))
    return path


class _Person:
    """Plays the person at the browser: opens the consent page, which agrees and redirects
    back to the flow's local server (in a thread: the flow serves it once this returns)."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.threads: list[threading.Thread] = []

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        session = requests.Session()
        session.trust_env = False  # no proxy between the test and 127.0.0.1
        thread = threading.Thread(target=session.get, args=(url,), kwargs={"timeout": 30},
                                  daemon=True)
        thread.start()
        self.threads.append(thread)


def _expire(token_file: Path) -> None:
    """As if the cached token were a day old: its access token has expired."""
    token = json.loads(token_file.read_text())
    token["expiry"] = "2020-01-01T00:00:00Z"
    token_file.write_text(json.dumps(token))


def test_oauth_consent_then_the_cached_token(report_archive_path: Path, client_file: Path,
                                             fake: FakeSheets, tmp_path: Path) -> None:
    person = _Person()
    client = client_from_credentials(client_file, open_url=person)
    reporter = SheetsReporter(client, SHEET_URL)
    conn = open_archive(report_archive_path)
    try:
        reporter.write(ReportSource(conn, select_sheets(["Page List"])))
    finally:
        conn.close()
    (opened,) = person.opened
    assert opened.startswith(f"{fake.url}/auth?")
    assert parse_qs(urlsplit(opened).query)["redirect_uri"][0].startswith("http://localhost:")
    (exchange,) = [r.body for r in fake.requests if r.path == "/token"]
    assert exchange["grant_type"] == ["authorization_code"] and exchange["code"] == ["fake-code"]
    token_file = tmp_path / "token.json"
    assert json.loads(token_file.read_text())["refresh_token"] == "fake-refresh"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert "Page List" in fake.tabs
    assert all(r.authorization == "Bearer fake-token" for r in fake.requests
               if r.path.startswith("/v4/"))

    # A later run (the command line, no browser): the cached token, refreshed once expired.
    _expire(token_file)
    before = len(fake.requests)
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(client_file), "--only",
                "Summary", env={API_URL_VARIABLE: fake.url}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Sign in" not in done.stderr
    later = fake.requests[before:]
    assert [r.body["grant_type"] for r in later if r.path == "/token"] == [["refresh_token"]], [(r.method, r.path) for r in later]
    assert not [r for r in later if r.path == "/auth"]
    assert list(fake.tabs) == ["Sheet1", "Page List", "Summary"]
    assert json.loads(token_file.read_text())["expiry"] > "2020-01-02"  # written back


def test_oauth_revoked_token_names_the_fix(client_file: Path, fake: FakeSheets,
                                          tmp_path: Path) -> None:
    client_from_credentials(client_file, open_url=_Person())
    token_file = tmp_path / "token.json"
    _expire(token_file)
    fake.state.revoked = True
    with pytest.raises(SheetsError, match=r"revoked or has expired .*: delete .*token.json and"
                       " re-run"):
        client_from_credentials(client_file, open_url=_Person())


@pytest.mark.parametrize(("content", "message"), [
    (None, "Credentials file not found: "),
    ("{nope", "Credentials file unreadable: "),
    (json.dumps({"web": {"client_id": "x"}}), "OAuth client of the Web application kind"),
    (json.dumps({"type": "authorized_user"}), "Not a service-account key nor an OAuth client"),
])
def test_credentials_files_that_cannot_serve(tmp_path: Path, content: str | None,
                                             message: str) -> None:
    path = tmp_path / "credentials.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SheetsError, match=message):
        client_from_credentials(path, open_url=_Person())
    assert not (tmp_path / "token.json").exists()


def test_unreadable_token_cache_names_the_fix(client_file: Path, tmp_path: Path) -> None:
    (tmp_path / "token.json").write_text("{}")
    with pytest.raises(SheetsError, match="Token cache unreadable: .*delete it and re-run"):
        client_from_credentials(client_file, open_url=_Person())


# -- plugin columns ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def analysed_sheets_path(report_archive_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("analysed-sheets") / "analysed.nitpicker"
    shutil.copy(report_archive_path, copy)
    conn = sqlite3.connect(copy)
    with conn:
        (page_id,) = conn.execute("SELECT id FROM pages WHERE url LIKE '%/meta/minimal'"
                                  ).fetchone()
        store_page_values(conn, page_id)
    conn.close()
    return copy


def test_plugin_columns_and_notes_reach_the_sheet(analysed_sheets_path: Path, key_file: Path,
                                                  fake: FakeSheets) -> None:
    client = client_from_credentials(key_file)
    conn = open_archive(analysed_sheets_path)
    try:
        SheetsReporter(client, SHEET_URL).write(ReportSource(conn, select_sheets(["Page List"])))
    finally:
        conn.close()
    rows = fake.tabs["Page List"]
    fixed = len(EXPECTED_HEADERS["Page List"])
    assert rows[0] == [*EXPECTED_HEADERS["Page List"], *PLUGIN_HEADERS]
    (index, row) = next((i, r) for i, r in enumerate(rows) if str(r[2]).endswith("/meta/minimal"))
    assert row[fixed:] == ["true", 2, 0.5]
    notes = fake.notes["Page List"]
    assert notes[(index, fixed)] == "lorem at line 3"
    assert notes[(index, fixed + 2)] == "two rules failed"
    assert (index, fixed + 1) not in notes
