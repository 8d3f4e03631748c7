"""``nitpicker report --sheet`` when Google is not what it should be: an endpoint that never
answers, a refused port, a credentials file of the wrong shape, cells past Google's 50,000
characters. The local fake (fixtures/sheets_fake.py) and the fixtures of
tests/test_report_sheets.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("gspread")

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gspread.exceptions import APIError
from nitpicker_reports.google_sheets import (
    API_URL_VARIABLE,
    SheetsError,
    SheetsReporter,
    client_from_credentials,
)
from nitpicker_reports.sheets_network import TIMEOUT, TIMEOUT_VARIABLE, timeout_setting

from fixtures.sheets_fake import MAX_CELL_CHARS
from nitpicker.query import open_archive
from nitpicker.query.report_rows import select_sheets
from nitpicker.report import ReportSource
from tests.helpers import ROOT, SHEET_URL, report_cli
from tests.helpers import SHEET_ACCOUNT as ACCOUNT

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.sheets_fake import FakeSheets


def _key(tmp_path: Path, token_uri: str) -> Path:
    """A service-account key whose token endpoint is ``token_uri``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "sa.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "fake-project", "private_key_id": "k1",
        "private_key": pem, "client_email": ACCOUNT, "client_id": "1", "token_uri": token_uri,
    }))
    return path


# -- the network -------------------------------------------------------------------------------


def test_an_endpoint_that_never_answers_is_one_error_line(report_archive_path: Path,
                                                           tmp_path: Path) -> None:
    """Google accepts the connection and never answers (the token endpoint and the API): the
    report gives up after NITPICKER_SHEETS_TIMEOUT, in one line, exit 1."""
    with socket.socket() as stalled:
        stalled.bind(("127.0.0.1", 0))
        stalled.listen(16)  # connections complete in the backlog; nothing is ever read
        host = f"127.0.0.1:{stalled.getsockname()[1]}"
        key = _key(tmp_path, f"http://{host}/token")
        started = time.monotonic()
        done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(key),
                    env={API_URL_VARIABLE: f"http://{host}", TIMEOUT_VARIABLE: "1"},
                    cwd=tmp_path)
        elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        (f"Error: No answer from {host} within 1 s (NITPICKER_SHEETS_TIMEOUT): try again later,"
        " or allow longer with NITPICKER_SHEETS_TIMEOUT")]
    assert elapsed < 30


def test_a_refused_port_is_one_error_line(report_archive_path: Path, tmp_path: Path
                                          ) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        host = f"127.0.0.1:{closed.getsockname()[1]}"
    key = _key(tmp_path, f"http://{host}/token")
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(key),
                env={API_URL_VARIABLE: f"http://{host}"}, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        (f"Error: Cannot reach {host}: Connection refused; check the network (and any proxy),"
        " then re-run")]


def test_a_stall_half_way_says_how_many_rows_were_sent(
        report_archive_path: Path, key_file: Path, fake: FakeSheets,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The spreadsheet was reached, then Google stops answering: the chunks sent are counted,
    the rest is one error."""
    monkeypatch.setenv(TIMEOUT_VARIABLE, "0.5")
    reporter = SheetsReporter(client_from_credentials(key_file), SHEET_URL, in_flight=1)
    conn = open_archive(report_archive_path)
    try:
        source = ReportSource(conn, select_sheets(["Links", "Summary"]), chunk_rows=5)
        reporter.check(source)

        def stall(_rows: int) -> None:  # the first chunk handed on: from now on, no answers
            fake.state.delay = 2.0

        source.on_rows = stall
        with pytest.raises(SheetsError, match=r"^No answer from 127\.0\.0\.1:\d+ within 0\.5 s"):
            reporter.write(source)
    finally:
        conn.close()
    assert reporter.sent_rows in (0, 5)  # the first chunk, if it beat the stall
    assert "Links" in fake.tabs


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "inf", "nan"])
def test_the_timeout_setting_refuses_bad_values(raw: str) -> None:
    with pytest.raises(ValueError, match=f"NITPICKER_SHEETS_TIMEOUT must be .*{raw!r}"):
        timeout_setting({TIMEOUT_VARIABLE: raw})
    assert timeout_setting({}) == (10.0, TIMEOUT)
    assert timeout_setting({TIMEOUT_VARIABLE: "2.5"}) == (2.5, 2.5)


def test_a_bad_timeout_on_the_command_line(report_archive_path: Path, key_file: Path,
                                           fake: FakeSheets, tmp_path: Path) -> None:
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(key_file),
                env={API_URL_VARIABLE: fake.url, TIMEOUT_VARIABLE: "soon"}, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: NITPICKER_SHEETS_TIMEOUT must be a number of seconds above 0: 'soon'"]
    assert list(fake.tabs) == ["Sheet1"]


# -- an OAuth client file of the wrong shape ---------------------------------------------------

_CLIENT = {"client_id": "1234-nitpicker.apps.googleusercontent.com", "client_secret": "s3cret",
           "auth_uri": "http://127.0.0.1:1/auth", "token_uri": "http://127.0.0.1:1/token",
           "redirect_uris": ["http://localhost"]}


@pytest.mark.parametrize(("installed", "problem"), [
    ("a string", '"installed" is a string, not an object of the client\'s settings'),
    (["a", "list"], '"installed" is a list, not an object of the client\'s settings'),
    (7, '"installed" is a number, not an object of the client\'s settings'),
    (None, '"installed" is null, not an object of the client\'s settings'),
    ({**_CLIENT, "client_id": None}, '"installed"."client_id" is missing'),
    ({**_CLIENT, "token_uri": ["x"]}, '"installed"."token_uri" is a list, not text'),
])
@pytest.mark.parametrize("cached_token", [False, True])
def test_an_oauth_client_file_of_the_wrong_shape(report_archive_path: Path,
                                                 tmp_path: Path, installed: object,
                                                 problem: str, cached_token: bool) -> None:
    """One line naming the file and what is wrong with it, whether a token is cached or not;
    nothing written, no browser opened."""
    client = tmp_path / "credentials.json"
    client.write_text(json.dumps({"installed": installed}))
    if cached_token:
        (tmp_path / "token.json").write_text(json.dumps({
            "token": "t", "refresh_token": "r", "client_id": "c", "client_secret": "s",
            "expiry": "2020-01-01T00:00:00Z"}))
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(client), env={},
                cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        (f"Error: OAuth client file {client}: {problem}: download the client's JSON again"
        " (APIs & Services → Credentials)")]


# -- cells past Google's 50,000 characters -----------------------------------------------------


def test_a_huge_value_is_cut_to_what_a_cell_holds(report_archive_path: Path, key_file: Path,
                                                  fake: FakeSheets, tmp_path: Path) -> None:
    """A 300,000-character title (in the Page List's Title and Full Title, the title's note, the
    Links sheet) and description: every cell and note at most 50,000 characters, cut with a
    visible marker; the fake refuses longer ones with Google's 400, as Google does."""
    archive = tmp_path / "huge.nitpicker"
    shutil.copy(report_archive_path, archive)
    title = "Huge " + "t" * 299_995
    description = "d" * 120_000
    conn = sqlite3.connect(archive)
    with conn:
        (url,) = conn.execute("SELECT url FROM pages WHERE url LIKE '%/meta/minimal'").fetchone()
        conn.execute("UPDATE pages SET title = ?, description = ? WHERE url = ?",
                     (title, description, url))
    conn.close()
    done = report_cli(str(archive), "--sheet", SHEET_URL, "-C", str(key_file),
                env={API_URL_VARIABLE: fake.url}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for tab, rows in fake.tabs.items():
        assert all(len(str(v)) <= MAX_CELL_CHARS for row in rows for v in row), tab
    assert all(len(note) <= MAX_CELL_CHARS for notes in fake.notes.values()
               for note in notes.values())
    (number, row) = next((i, r) for i, r in enumerate(fake.tabs["Page List"])
                         if str(r[2]) == url)
    headers = fake.tabs["Page List"][0]
    full = row[headers.index("Full Title")]
    assert len(full) == MAX_CELL_CHARS  # 250,032 cut off: as many digits as 300,000
    keep = MAX_CELL_CHARS - len("… [truncated: 300000 characters]")
    assert full == title[:keep] + f"… [truncated: {300_000 - keep} characters]"
    assert row[headers.index("description")] == (
        description[:MAX_CELL_CHARS - len("… [truncated: 120000 characters]")]
        + f"… [truncated: {120_000 - MAX_CELL_CHARS + len('… [truncated: 120000 characters]')}"
        " characters]")
    note = fake.notes["Page List"][(number, 0)]
    assert note.startswith("Full-title:\nHuge ttt") and note.endswith(" characters]")
    assert len(note) <= MAX_CELL_CHARS
    links = next(r for r in fake.tabs["Links"] if r[0] == url)
    assert links[1] == full


def test_the_fake_refuses_a_cell_past_50000_characters(key_file: Path,
                                                        fake: FakeSheets) -> None:
    client = client_from_credentials(key_file)
    client.batch_update(fake_id := SHEET_URL.split("/d/")[1].split("/")[0], {"requests": [
        {"addSheet": {"properties": {"title": "Long"}}}]})
    with pytest.raises(APIError, match="more than the maximum of 50000 characters"):
        client.values_update(fake_id, "'Long'!A1", params={"valueInputOption": "RAW"},
                             body={"values": [["x" * 50_001]]})
    client.values_update(fake_id, "'Long'!A1", params={"valueInputOption": "RAW"},
                         body={"values": [["x" * 50_000]]})
    assert fake.tabs["Long"] == [["x" * 50_000]]


# -- SIGTERM half-way --------------------------------------------------------------------------


def test_sigterm_half_way_says_what_was_sent(report_archive_path: Path, key_file: Path,
                                             fake: FakeSheets, tmp_path: Path) -> None:
    """SIGTERM stops a Sheets report as Ctrl-C does, exit 130, saying that the tabs written
    so far are incomplete (nothing local to remove)."""
    fake.state.delay = 0.2  # every answer takes a while: the report is stopped half-way
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "report", str(report_archive_path), "--sheet",
         SHEET_URL, "-C", str(key_file), "--silent"], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), API_URL_VARIABLE: fake.url},
        stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(fake.tabs) < 3:  # Sheet1, Page List, Links: half-way
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the report did not start"
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    (line,) = err.strip().splitlines()
    assert re.fullmatch(r"Interrupted: \d+ rows were sent; the spreadsheet's new tabs are"
                        r" incomplete: remove them before reporting into it again", line), line
    assert "Resources Relational Table" not in fake.tabs


# -- --urls ------------------------------------------------------------------------------------


def test_urls_into_a_spreadsheet(report_archive_path: Path, key_file: Path,
                                 fake: FakeSheets, tmp_path: Path) -> None:
    """--urls with --sheet: the tabs hold the listed pages' rows only, grids sized to them."""
    conn = sqlite3.connect(report_archive_path)
    try:
        listed = {url for (url,) in conn.execute(
            "SELECT url FROM pages WHERE url LIKE '%/meta/full' OR url LIKE '%/meta/minimal'")}
    finally:
        conn.close()
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(sorted(listed)) + "\n")
    done = report_cli(str(report_archive_path), "--sheet", SHEET_URL, "-C", str(key_file), "--urls",
                str(urls), "--only", "Page List", "--only", "Links",
                env={API_URL_VARIABLE: fake.url}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr
    assert {row[2] for row in fake.tabs["Page List"][1:]} == listed
    assert {row[0] for row in fake.tabs["Links"][1:]} == listed
    grids = [req["addSheet"]["properties"]["gridProperties"]["rowCount"]
             for r in fake.requests if r.path.endswith(":batchUpdate")
             for req in r.body["requests"] if "addSheet" in req]
    assert grids == [3, 3]  # the header and the two listed pages
