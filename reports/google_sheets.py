"""The Google Sheets reporter (``nitpicker report FILE --sheet URL``), through gspread.

One tab per sheet, added to the spreadsheet the URL names: its header row, then the rows in
chunks of 2,500 (``values:append``, RAW), each chunk followed by one ``batchUpdate`` with the
chunk's red cells (background red 0.9, white text) and notes; then the tab's frozen rows and
columns and hidden path columns. One request in flight at a time. A 429 or a 5xx answer is
retried after an exponential wait (1 s, 2 s, 4 s, … up to 64 s, 8 tries), the wait shown on the
progress line.

Authentication: a service-account JSON file (``--credentials``), through google-auth (its
``token_uri`` is where the token is asked). ``NITPICKER_SHEETS_API_URL`` points the client at
another Sheets v4 endpoint than ``https://sheets.googleapis.com`` (tests use a local fake).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any, Final

from gspread.exceptions import APIError, NoValidUrlKeyFound
from gspread.http_client import HTTPClient
from gspread.utils import extract_id_from_url

if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping
    from pathlib import Path

    from requests import Response

    from nitpicker.query.report import Cell, SheetSpec
    from nitpicker.report import ReportSource

__all__ = ["API_URL_VARIABLE", "GOOGLE_API", "SCOPES", "SheetsError", "SheetsReporter",
           "client_from_service_account"]

GOOGLE_API: Final = "https://sheets.googleapis.com"
API_URL_VARIABLE: Final = "NITPICKER_SHEETS_API_URL"
SCOPES: Final = ("https://www.googleapis.com/auth/spreadsheets",)
RED: Final = {"red": 0.9, "green": 0.0, "blue": 0.0}
WHITE: Final = {"red": 1.0, "green": 1.0, "blue": 1.0}
RETRIES: Final = 8
MAX_WAIT: Final = 64.0


class SheetsError(Exception):
    """A Sheets report cannot be written: one line naming the fix."""


class RetryingClient(HTTPClient):
    """gspread's HTTP client, pointed at ``api_url``, retrying 429 and 5xx with back-off."""

    def __init__(self, auth: Any, api_url: str = GOOGLE_API,
                 on_wait: Callable[[float, int], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(auth)
        self.api_url = api_url.rstrip("/")
        self.on_wait = on_wait or (lambda _wait, _code: None)
        self.sleep = sleep

    def request(self, method: str, endpoint: str, *args: Any, **kwargs: Any) -> Response:
        if endpoint.startswith(GOOGLE_API):
            endpoint = self.api_url + endpoint[len(GOOGLE_API):]
        wait = 1.0
        for attempt in range(RETRIES + 1):
            try:
                return super().request(method, endpoint, *args, **kwargs)
            except APIError as exc:
                if attempt == RETRIES or not (exc.code == 429 or exc.code >= 500):
                    raise
                self.on_wait(wait, exc.code)
                self.sleep(wait)
                wait = min(wait * 2, MAX_WAIT)
        raise AssertionError("unreachable")  # the loop returns or raises


def client_from_service_account(path: Path, on_wait: Callable[[float, int], None] | None = None
                                ) -> RetryingClient:
    """A client authenticated as the service account in the JSON file at ``path``."""
    from google.auth.exceptions import GoogleAuthError
    from google.oauth2.service_account import Credentials

    if not path.is_file():
        raise SheetsError(f"Credentials file not found: {path} (a service-account JSON key;"
                          " create one in the Google Cloud console)")
    try:
        credentials = Credentials.from_service_account_file(str(path), scopes=list(SCOPES))
    except (ValueError, KeyError, json.JSONDecodeError, GoogleAuthError) as exc:
        raise SheetsError(f"Not a service-account key file: {path} ({exc})") from exc
    api_url = os.environ.get(API_URL_VARIABLE, GOOGLE_API)
    return RetryingClient(credentials, api_url, on_wait)


def spreadsheet_id(url: str) -> str:
    try:
        return extract_id_from_url(url)
    except NoValidUrlKeyFound:
        raise SheetsError(f"Not a Google Sheets URL: {url!r}"
                          " (expected https://docs.google.com/spreadsheets/d/ID/…)") from None


def _explain(exc: APIError, url: str, account: str) -> SheetsError:
    message = str(exc.error.get("message", ""))
    if exc.code == 403 and ("has not been used" in message or "is disabled" in message):
        return SheetsError(f"The Google Sheets API is not enabled for the service account's"
                           f" project: enable it in the Google Cloud console ({message})")
    if exc.code in (403, 404):
        return SheetsError(f"Spreadsheet not found or not shared with {account}: share {url}"
                           " with that address as an editor")
    return SheetsError(f"Google Sheets answered {exc.code}: {message}")


class SheetsReporter:
    """Writes the report's sheets as new tabs of an existing spreadsheet."""

    def __init__(self, client: RetryingClient, url: str) -> None:
        self.client = client
        self.url = url
        self.id = spreadsheet_id(url)
        self.sent_rows = 0
        self._checked = False

    @property
    def account(self) -> str:
        return str(getattr(self.client.auth, "service_account_email", "the service account"))

    def check(self, source: ReportSource) -> None:
        """Before anything is sent: the spreadsheet is reachable and has none of the tabs."""
        try:
            meta = self.client.fetch_sheet_metadata(self.id)
        except APIError as exc:
            raise _explain(exc, self.url, self.account) from exc
        taken = {s["properties"]["title"] for s in meta.get("sheets", [])}
        clash = [sheet.name for sheet in source.sheets if sheet.name in taken]
        if clash:
            raise SheetsError(f"The spreadsheet already has a tab named {clash[0]!r}: remove"
                              " or rename it, or report into another spreadsheet")
        self._checked = True

    def write(self, source: ReportSource) -> None:
        if not self._checked:
            self.check(source)
        try:
            self._write(source)
        except APIError as exc:
            raise _explain(exc, self.url, self.account) from exc

    def _write(self, source: ReportSource) -> None:
        specs = source.specs()
        for sheet, spec in zip(source.sheets, specs, strict=True):
            tab = self._add_tab(spec)
            self._append(spec.name, [list(spec.headers)])
            row_number = 1
            for chunk in source.rows(sheet):
                self._append(spec.name, [[_value(c) for c in row] for row in chunk])
                self._decorate(tab, row_number, chunk)
                row_number += len(chunk)
                self.sent_rows += len(chunk)
            self._format(tab, spec)

    def _add_tab(self, spec: SheetSpec) -> int:
        body = {"requests": [{"addSheet": {"properties": {
            "title": spec.name,
            "gridProperties": {"rowCount": 1, "columnCount": len(spec.headers)},
        }}}]}
        reply = self.client.batch_update(self.id, body)
        return int(reply["replies"][0]["addSheet"]["properties"]["sheetId"])

    def _append(self, title: str, values: list[list[Any]]) -> None:
        self.client.values_append(self.id, f"'{title}'!A1",
                                  {"valueInputOption": "RAW", "insertDataOption": "INSERT_ROWS"},
                                  {"values": values})

    def _decorate(self, tab: int, first_row: int, chunk: list[list[Cell]]) -> None:
        requests: list[MutableMapping[str, Any]] = []
        for offset, row in enumerate(chunk):
            for column, cell in enumerate(row):
                if not cell.error and not cell.note:
                    continue
                data: dict[str, Any] = {}
                fields = []
                if cell.error:
                    data["userEnteredFormat"] = {"backgroundColor": RED,
                                                 "textFormat": {"foregroundColor": WHITE}}
                    fields.append("userEnteredFormat(backgroundColor,textFormat)")
                if cell.note:
                    data["note"] = cell.note
                    fields.append("note")
                requests.append({"updateCells": {
                    "range": {"sheetId": tab, "startRowIndex": first_row + offset,
                              "endRowIndex": first_row + offset + 1,
                              "startColumnIndex": column, "endColumnIndex": column + 1},
                    "rows": [{"values": [data]}], "fields": ",".join(fields)}})
        if requests:
            self.client.batch_update(self.id, {"requests": requests})

    def _format(self, tab: int, spec: SheetSpec) -> None:
        requests: list[dict[str, Any]] = [
            {"repeatCell": {"range": {"sheetId": tab, "startRowIndex": 0, "endRowIndex": 1},
                            "cell": {"userEnteredFormat": {"textFormat": {"bold": True}}},
                            "fields": "userEnteredFormat.textFormat.bold"}},
            {"updateSheetProperties": {"properties": {"sheetId": tab, "gridProperties": {
                "frozenRowCount": spec.freeze_rows, "frozenColumnCount": spec.freeze_cols}},
                "fields": "gridProperties(frozenRowCount,frozenColumnCount)"}},
        ]
        requests.extend(
            {"updateDimensionProperties": {
                "range": {"sheetId": tab, "dimension": "COLUMNS", "startIndex": column,
                          "endIndex": column + 1},
                "properties": {"hiddenByUser": True}, "fields": "hiddenByUser"}}
            for column in spec.hidden_columns)
        self.client.batch_update(self.id, {"requests": requests})


def _value(cell: Cell) -> str | int | float:
    return "" if cell.value is None else cell.value
