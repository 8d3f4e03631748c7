"""``nitpicker report FILE --sheet URL`` against a local fake of the Sheets v4 API
(fixtures/sheets_fake.py), through the real gspread and google-auth code: a service-account key
the test generates, whose ``token_uri`` is the fake's token endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

pytest.importorskip("gspread")

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from nitpicker_reports.google_sheets import (
    API_URL_VARIABLE,
    SheetsError,
    SheetsReporter,
    client_from_service_account,
)

from fixtures.sheets_fake import FakeSheets
from nitpicker.query import open_archive
from nitpicker.query.report import SHEET_NAMES, SHEETS
from nitpicker.report import ReportSource
from tests.helpers import ROOT, crawl
from tests.test_report import EXPECTED_HEADERS, ROOTS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from fixtures.site import FixtureSite

SHEET_ID = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
SHEET_URL = f"https://docs.google.com/spreadsheets/d/{SHEET_ID}/edit#gid=0"
ACCOUNT = "nitpicker@fake-project.iam.gserviceaccount.com"


@pytest_twisted.async_fixture(scope="module")
async def archive_path(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("sheets"), [site.url(r) for r in ROOTS])
    archive.conn.close()
    return archive.path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSheets]:
    with FakeSheets(SHEET_ID) as server:
        monkeypatch.setenv(API_URL_VARIABLE, server.url)
        yield server


@pytest.fixture
def key_file(fake: FakeSheets, tmp_path: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "sa.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "fake-project", "private_key_id": "k1",
        "private_key": pem, "client_email": ACCOUNT, "client_id": "1",
        "token_uri": f"{fake.url}/token",
    }))
    return path


def _report(archive_path: Path, key_file: Path, chunk_rows: int = 2500,
            waits: list[tuple[float, int]] | None = None) -> SheetsReporter:
    heard = waits if waits is not None else []
    client = client_from_service_account(key_file, lambda w, c: heard.append((w, c)))
    client.sleep = lambda _seconds: None
    reporter = SheetsReporter(client, SHEET_URL)
    conn = open_archive(archive_path)
    try:
        reporter.write(ReportSource(conn, list(SHEETS), chunk_rows=chunk_rows))
    finally:
        conn.close()
    return reporter


def test_the_nine_tabs_with_headers_and_rows(archive_path: Path, key_file: Path,
                                             fake: FakeSheets) -> None:
    reporter = _report(archive_path, key_file)
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]
    conn = open_archive(archive_path)
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


def test_rows_go_in_chunks(archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    _report(archive_path, key_file, chunk_rows=4)
    links = [r for r in fake.requests
             if r.path.endswith(":append") and "'Links'" in r.path]
    sizes = [len(r.body["values"]) for r in links]
    assert sizes[0] == 1  # the header row
    assert max(sizes[1:]) == 4 and len(sizes) > 3
    assert all(r.query["valueInputOption"] == ["RAW"] for r in links)


def test_formatting_requests(archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    _report(archive_path, key_file)
    requests = [req for r in fake.requests if r.path.endswith(":batchUpdate")
                for req in r.body["requests"]]
    page_list_id = next(req["addSheet"]["properties"]["title"] for req in requests
                        if "addSheet" in req)
    assert page_list_id == "Page List"
    red = [req["updateCells"] for req in requests if "updateCells" in req
           and "userEnteredFormat" in req["updateCells"]["rows"][0]["values"][0]]
    assert red and red[0]["rows"][0]["values"][0]["userEnteredFormat"]["backgroundColor"] == {
        "red": 0.9, "green": 0.0, "blue": 0.0}
    frozen = [req["updateSheetProperties"]["properties"]["gridProperties"] for req in requests
              if "updateSheetProperties" in req]
    assert {"frozenRowCount": 1, "frozenColumnCount": 1} in frozen
    assert {"frozenRowCount": 2, "frozenColumnCount": 1} in frozen
    hidden = [req for req in requests if "updateDimensionProperties" in req]
    assert len(hidden) == 8  # path3…path10: no page is deeper than /a/b


def test_429_is_waited_out(archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    fake.fail_next(429, "Quota exceeded", times=3)
    waits: list[tuple[float, int]] = []
    _report(archive_path, key_file, waits=waits)
    assert waits == [(1.0, 429), (2.0, 429), (4.0, 429)]
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]


def test_not_shared_names_the_account(archive_path: Path, key_file: Path,
                                      fake: FakeSheets) -> None:
    fake.fail_next(403, "The caller does not have permission")
    with pytest.raises(SheetsError, match=f"not shared with {ACCOUNT}"):
        _report(archive_path, key_file)


def test_api_not_enabled(archive_path: Path, key_file: Path, fake: FakeSheets) -> None:
    fake.fail_next(403, "Google Sheets API has not been used in project 1 before or it is"
                   " disabled")
    with pytest.raises(SheetsError, match="not enabled"):
        _report(archive_path, key_file)


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", "report", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120, check=False)


def test_report_sheet_on_the_command_line(archive_path: Path, key_file: Path,
                                          fake: FakeSheets, tmp_path: Path) -> None:
    env = {API_URL_VARIABLE: fake.url}
    done = _cli(str(archive_path), "--sheet", SHEET_URL, "--credentials", str(key_file),
                env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(fake.tabs) == ["Sheet1", *SHEET_NAMES]
    again = _cli(str(archive_path), "--sheet", SHEET_URL, "-C", str(key_file), env=env,
                 cwd=tmp_path)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines() == [
        ("Error: The spreadsheet already has a tab named 'Page List': remove or rename it,"
        " or report into another spreadsheet")]


@pytest.mark.parametrize(("args", "message"), [
    (["--sheet", "https://example.com/nope"], "Error: Not a Google Sheets URL: "),
    (["--sheet", SHEET_URL, "-C", "missing.json"], "Error: Credentials file not found: "),
    (["--sheet", SHEET_URL, "--format", "xlsx"], "Error: --sheet writes to Google Sheets"),
])
def test_report_sheet_bad_input(archive_path: Path, key_file: Path, fake: FakeSheets,
                                tmp_path: Path, args: list[str], message: str) -> None:
    if "-C" not in args:
        args = [*args, "-C", str(key_file)]
    result = _cli(str(archive_path), *args, env={API_URL_VARIABLE: fake.url}, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(fake.tabs) == ["Sheet1"]
