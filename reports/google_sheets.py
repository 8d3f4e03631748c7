"""The Google Sheets reporter (``nitpicker report FILE --sheet URL``), through gspread.

Found as the others are, in the ``nitpicker.report`` entry-point group, by the name ``sheets``
(:func:`open_spreadsheet`); its errors are the host's ``ReportError``.

One tab per sheet, added to the spreadsheet the URL names with a grid of the sheet's size: its
header row, then the rows in chunks of 2,500 (``values.update`` into the chunk's own rows,
RAW), each chunk followed by one ``batchUpdate`` holding one ``updateCells`` for the whole
chunk (its red cells, background red 0.9 and white text, and its notes, from the chunk's first
cell: the request's size follows the chunk, not the number of red or noted cells); then the
tab's frozen rows and columns and hidden path columns.
At most ``in_flight`` chunks are being sent at once (``NITPICKER_SHEETS_IN_FLIGHT``, default
3, 1 to 8), and at most 8 MB of their request bodies (a chunk is encoded, and its rows freed,
before it waits its turn; a chunk of long notes may be ~6 MB): each chunk has its own rows, so
they may land in any order. A 429 or a 5xx answer
is retried after an exponential wait (1 s, 2 s, 4 s, … up to 64 s, 8 tries), the wait shown on
the progress line. A value or note longer than the 50,000 characters Google allows a cell
is cut to them, ending with ``… [truncated: N characters]``.

Authentication (:mod:`nitpicker_reports.sheets_auth`): a service-account JSON file or an OAuth
client file (``--credentials``), the token of the latter cached in ``token.json`` beside it.
``NITPICKER_SHEETS_API_URL`` points the client at another Sheets v4 endpoint than
``https://sheets.googleapis.com`` (tests use a local fake). Every request is bounded in time
(:mod:`nitpicker_reports.sheets_network`, ``NITPICKER_SHEETS_TIMEOUT``); a network failure is
one line naming the host.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Final

from gspread.exceptions import APIError, NoValidUrlKeyFound
from gspread.http_client import HTTPClient
from gspread.urls import SPREADSHEET_BATCH_UPDATE_URL, SPREADSHEET_VALUES_URL
from gspread.utils import extract_id_from_url, quote
from nitpicker_reports.sheets_auth import SCOPES, AuthError, load_credentials
from nitpicker_reports.sheets_network import NETWORK_ERRORS, network_failure, timeout_setting

from nitpicker.query.report_rows.issues_sheet import PRIORITY_COLOURS
from nitpicker.report import ReportError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from requests import Response

    from nitpicker.query.report_rows import Chunk, Mark, SheetSpec, Value
    from nitpicker.report import ReportSource

__all__ = ["API_URL_VARIABLE", "GOOGLE_API", "IN_FLIGHT", "IN_FLIGHT_VARIABLE",
           "MAX_CELL_CHARS", "SCOPES", "SheetsError", "SheetsReporter", "client_from_credentials",
           "client_from_service_account", "fitted", "in_flight_setting", "open_spreadsheet"]

GOOGLE_API: Final = "https://sheets.googleapis.com"
API_URL_VARIABLE: Final = "NITPICKER_SHEETS_API_URL"
IN_FLIGHT_VARIABLE: Final = "NITPICKER_SHEETS_IN_FLIGHT"
IN_FLIGHT: Final = 3
"""Chunks sent at once by default: Google allows 60 write requests a minute a user."""
MAX_IN_FLIGHT: Final = 8
IN_FLIGHT_BYTES: Final = 8_000_000
"""At most this many bytes of request bodies in flight (one chunk always goes, however large):
a chunk of notes at their longest is ~6 MB, one of plain values ~1 MB."""
RED: Final = {"red": 0.9, "green": 0.0, "blue": 0.0}
WHITE: Final = {"red": 1.0, "green": 1.0, "blue": 1.0}
RETRIES: Final = 8
MAX_WAIT: Final = 64.0
MAX_CELL_CHARS: Final = 50_000
"""Google's limit on a cell's text (and a note's): longer ones are refused with a 400."""
_TRUNCATED: Final = "… [truncated: {} characters]"


class SheetsError(ReportError):
    """A Sheets report cannot be written: one line naming the fix."""


class RetryingClient(HTTPClient):
    """gspread's HTTP client, pointed at ``api_url``, retrying 429 and 5xx with back-off."""

    def __init__(self, auth: Any, api_url: str = GOOGLE_API,
                 on_wait: Callable[[float, int], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(auth)
        self.account = str(getattr(auth, "service_account_email", "the service account"))
        self.personal = False  # a person's OAuth token, not a service account
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
    """A client for the credentials file at ``path`` (kept name: any kind is taken)."""
    return client_from_credentials(path, on_wait)


def client_from_credentials(path: Path, on_wait: Callable[[float, int], None] | None = None,
                            open_url: Callable[[str], object] | None = None) -> RetryingClient:
    """A client for the credentials file at ``path``: a service-account key or an OAuth client
    (its token cached in ``token.json`` beside it; the first run asks consent in the browser,
    opened with ``open_url``). Its requests are bounded by ``NITPICKER_SHEETS_TIMEOUT``."""
    try:
        timeout = timeout_setting()
    except ValueError as exc:
        raise SheetsError(str(exc)) from None
    try:
        credentials, account = load_credentials(path, open_url, timeout=timeout)
    except AuthError as exc:
        raise SheetsError(str(exc)) from exc
    client = RetryingClient(credentials, os.environ.get(API_URL_VARIABLE, GOOGLE_API), on_wait)
    client.set_timeout(timeout)
    client.account = account
    client.personal = not hasattr(credentials, "service_account_email")
    return client


def in_flight_setting(environ: dict[str, str] | None = None) -> int:
    """``NITPICKER_SHEETS_IN_FLIGHT``: chunks sent at once, 1 to 8 (default 3)."""
    raw = (os.environ if environ is None else environ).get(IN_FLIGHT_VARIABLE, "")
    if not raw:
        return IN_FLIGHT
    if not raw.strip().isdigit() or not 1 <= int(raw) <= MAX_IN_FLIGHT:
        raise SheetsError(f"{IN_FLIGHT_VARIABLE} must be a whole number from 1 to"
                          f" {MAX_IN_FLIGHT}: {raw!r}")
    return int(raw)


def spreadsheet_id(url: str) -> str:
    try:
        return extract_id_from_url(url)
    except NoValidUrlKeyFound:
        raise SheetsError(f"Not a Google Sheets URL: {url!r}"
                          " (expected https://docs.google.com/spreadsheets/d/ID/…)") from None


def _explain(exc: APIError, url: str, account: str, personal: bool = False) -> SheetsError:
    message = str(exc.error.get("message", ""))
    if exc.code == 403 and ("has not been used" in message or "is disabled" in message):
        owner = "OAuth client's" if personal else "service account's"
        return SheetsError(f"The Google Sheets API is not enabled for the {owner}"
                           f" project: enable it in the Google Cloud console ({message})")
    if exc.code in (403, 404) and personal:
        return SheetsError(f"Spreadsheet not found or {account} cannot edit it: open {url}"
                           " signed in as that account, or ask its owner to share it with you")
    if exc.code in (403, 404):
        return SheetsError(f"Spreadsheet not found or not shared with {account}: share {url}"
                           " with that address as an editor")
    return SheetsError(f"Google Sheets answered {exc.code}: {message}")


def open_spreadsheet(url: str, credentials: Path,
                     on_wait: Callable[[float, int], None] | None = None) -> SheetsReporter:
    """The reporter of ``report --sheet URL --credentials FILE``: the ``sheets`` entry point of
    the ``nitpicker.report`` group (:func:`nitpicker.report.open_spreadsheet`). A bad setting,
    URL or credentials file is a :class:`SheetsError`."""
    in_flight = in_flight_setting()
    return SheetsReporter(client_from_credentials(credentials, on_wait), url, in_flight)


class SheetsReporter:
    """Writes the report's sheets as new tabs of an existing spreadsheet."""

    def __init__(self, client: RetryingClient, url: str, in_flight: int = IN_FLIGHT,
                 in_flight_bytes: int = IN_FLIGHT_BYTES) -> None:
        self.client = client
        self.url = url
        self.id = spreadsheet_id(url)
        self.sent_rows = 0
        self.tabs_added = 0
        self.in_flight = in_flight
        self.in_flight_bytes = in_flight_bytes
        self._checked = False
        self._sizes: dict[Future[int], int] = {}  # the request bodies of the chunks in flight

    @property
    def account(self) -> str:
        return self.client.account

    def check(self, source: ReportSource) -> None:
        """Before anything is sent: the spreadsheet is reachable and has none of the tabs."""
        try:
            meta = self.client.fetch_sheet_metadata(self.id)
        except APIError as exc:
            raise _explain(exc, self.url, self.account, self.client.personal) from exc
        except NETWORK_ERRORS as exc:
            raise self._unreachable(exc) from exc
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
            raise _explain(exc, self.url, self.account, self.client.personal) from exc
        except NETWORK_ERRORS as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: BaseException) -> SheetsError:
        timeout = self.client.timeout
        bounds = timeout if isinstance(timeout, tuple) else timeout_setting()
        return SheetsError(network_failure(exc, bounds))

    def _write(self, source: ReportSource) -> None:
        pool = ThreadPoolExecutor(self.in_flight, thread_name_prefix="sheets")
        try:
            self._write_tabs(source, pool)
        except BaseException:  # Ctrl-C, SIGTERM, a failed chunk: the queued ones are not sent
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()

    def _write_tabs(self, source: ReportSource, pool: ThreadPoolExecutor) -> None:
        specs = source.specs()
        for sheet, spec in zip(source.sheets, specs, strict=True):
            tab = self._add_tab(spec, source.count(sheet))
            self._put(spec.name, 1, [list(spec.headers)])
            sending: set[Future[int]] = set()
            row_number = 1
            for chunk in source.chunks(sheet):
                rows = len(chunk)
                values, cells = _encoded(chunk, tab, row_number)  # the chunk is emptied
                size = len(values) + len(cells or b"")
                while sending and (len(sending) >= self.in_flight or sum(
                        self._sizes.values()) + size > self.in_flight_bytes):
                    sending = self._settle(sending, FIRST_COMPLETED)
                future = pool.submit(self._send, spec.name, row_number, rows, values, cells)
                self._sizes[future] = size
                sending.add(future)
                row_number += rows
            self._settle(sending, None)
            self._format(tab, spec)

    def _settle(self, sending: set[Future[int]], until: str | None) -> set[Future[int]]:
        """Wait for one chunk (``FIRST_COMPLETED``) or all; a failed chunk raises here."""
        done, pending = wait(sending, return_when=until or ALL_COMPLETED)
        for future in done:
            self._sizes.pop(future, None)
            self.sent_rows += future.result()
        return pending

    def _send(self, title: str, first_row: int, rows: int, values: bytes, cells: bytes | None
              ) -> int:
        """One chunk, encoded (:func:`_encoded`): its values into rows ``first_row + 1``…,
        then its red cells and notes in one ``updateCells`` (one request entry a chunk,
        however many cells are red or noted)."""
        self._put_json(title, first_row + 1, values)
        if cells is not None:
            self.client.request("post", SPREADSHEET_BATCH_UPDATE_URL % self.id,
                                data=cells, headers=dict(_JSON_BODY))
        return rows

    def _add_tab(self, spec: SheetSpec, rows: int) -> int:
        body = {"requests": [{"addSheet": {"properties": {
            "title": spec.name,
            "gridProperties": {"rowCount": rows + 1, "columnCount": len(spec.headers)},
        }}}]}
        reply = self.client.batch_update(self.id, body)
        self.tabs_added += 1
        return int(reply["replies"][0]["addSheet"]["properties"]["sheetId"])

    def _put(self, title: str, row: int, values: list[list[Any]]) -> None:
        """``values.update`` from column A of ``row`` (1-based)."""
        self._put_json(title, row, _values_json(_values(values)))

    def _put_json(self, title: str, row: int, body: bytes) -> None:
        """``values.update`` from column A of ``row`` (1-based) of ``body``, its JSON."""
        self.client.request("put", SPREADSHEET_VALUES_URL % (self.id, quote(f"'{title}'!A{row}")),
                            params={"valueInputOption": "RAW"}, data=body,
                            headers=dict(_JSON_BODY))

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
        if spec.priority_column is not None:
            requests.extend(_priority_rules(tab, spec.priority_column))
        self.client.batch_update(self.id, {"requests": requests})


def _colour(hex_rgb: str) -> dict[str, float]:
    """``#RRGGBB`` as the Sheets API's colour (0–1 a channel)."""
    return {name: int(hex_rgb[i:i + 2], 16) / 255
            for name, i in (("red", 1), ("green", 3), ("blue", 5))}


def _priority_rules(tab: int, column: int) -> list[dict[str, Any]]:
    """One conditional format a priority over the column below the header: its cells coloured
    as the other formats colour them, whatever the rows (one request entry each)."""
    return [{"addConditionalFormatRule": {"index": 0, "rule": {
        "ranges": [{"sheetId": tab, "startRowIndex": 1, "startColumnIndex": column,
                    "endColumnIndex": column + 1}],
        "booleanRule": {
            "condition": {"type": "TEXT_EQ", "values": [{"userEnteredValue": priority}]},
            "format": {"backgroundColor": _colour(background),
                       "textFormat": {"bold": True, "foregroundColor": _colour(text)}}},
    }}} for priority, (background, text) in PRIORITY_COLOURS.items()]


RED_FORMAT: Final = {"backgroundColor": RED, "textFormat": {"foregroundColor": WHITE}}
FORMAT_FIELD: Final = "userEnteredFormat(backgroundColor,textFormat)"
_JSON_BODY: Final = {"Content-Type": "application/json"}
_PLAIN_CELL: Final = "{}"
_RED_CELL: Final = json.dumps({"userEnteredFormat": RED_FORMAT}, separators=(",", ":"))
_RED_NOTE: Final = _RED_CELL[:-1] + ',"note":'
_NOTE: Final = '{"note":'
_quote: Final = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
"""``json.dumps`` of one string (the C encoder, ASCII out: what ``requests`` sends)."""


def fitted(text: str) -> str:
    """``text`` cut to Google's :data:`MAX_CELL_CHARS` a cell, ending with
    ``… [truncated: N characters]`` (N: the characters cut off) when it was longer."""
    if len(text) <= MAX_CELL_CHARS:
        return text
    keep = MAX_CELL_CHARS - len(_TRUNCATED.format(len(text)))  # the marker at its longest
    return text[:keep] + _TRUNCATED.format(len(text) - keep)


def _values(rows: Sequence[Sequence[Value]]) -> list[list[Any]]:
    """A chunk's values, ``None`` as ``""``, text longer than a cell holds :func:`fitted`."""
    return [[fitted(value) if value.__class__ is str and len(value) > MAX_CELL_CHARS
             else "" if value is None else value for value in row] for row in rows]


def _values_json(rows: list[list[Any]]) -> bytes:
    """The ``values.update`` body of ``rows``, as ``requests`` would encode it."""
    return json.dumps({"values": rows}, allow_nan=False).encode()


def _encoded(chunk: Chunk, tab: int, first_row: int) -> tuple[bytes, bytes | None]:
    """A chunk as the bodies of its two requests: its values (``values.update``) and its red
    cells and notes (``batchUpdate``, ``None`` when it has neither).

    The chunk's lists are emptied as they are read: a chunk of the Page List is ~6 MB of Python
    objects and its two bodies ~2.5 MB, and the bodies are what waits for a free request.
    """
    values = _values_json(_values(chunk.values))
    chunk.values.clear()
    cells = _decorations(chunk.marks)
    chunk.marks.clear()
    return values, None if cells is None else _update_cells(tab, first_row, *cells).encode()


def _decorations(marks: list[Mark]) -> tuple[str, str] | None:
    """A chunk's red cells and notes (from its marks) as the JSON text of the ``rows`` of one
    ``updateCells`` from the chunk's first cell, with its ``fields`` (``None``: nothing to
    decorate). A row without a red or noted cell is ``{}``; a row's cell data stops at its last
    decorated cell, and the rows at the chunk's last decorated row. Links are not decorations
    here.

    The text is written here, a cell at a time, rather than as dicts for ``json.dumps``: a
    chunk of the Page List has ~20,000 decorated cells, and their dicts cost more to build and
    to hold (three chunks in flight) than the JSON they become.
    """
    rows: list[str] = []
    red = noted = False
    data: list[str] = []
    current = -1  # the row of the last decorated cell; the rows hold current + 1 entries
    width = 0  # the cells in data
    for row, column, note, _link, error in marks:
        if note:
            noted = True
            if len(note) > MAX_CELL_CHARS:
                note = fitted(note)
            if error:
                red = True
                cell = f"{_RED_NOTE}{_quote(note)}}}"
            else:
                cell = f"{_NOTE}{_quote(note)}}}"
        elif error:
            red = True
            cell = _RED_CELL
        else:
            continue
        if row != current:
            if data:
                rows.append(f'{{"values":[{",".join(data)}]}}')
            if row > current + 1:
                rows.extend([_PLAIN_CELL] * (row - current - 1))
            current = row
            data = [_PLAIN_CELL] * column
            data.append(cell)
        else:
            if column > width:
                data.extend([_PLAIN_CELL] * (column - width))
            data.append(cell)
        width = column + 1
    if not data:
        return None
    rows.append(f'{{"values":[{",".join(data)}]}}')
    fields = ",".join(name for name, used in ((FORMAT_FIELD, red), ("note", noted)) if used)
    return ",".join(rows), fields


def _update_cells(tab: int, first_row: int, rows: str, fields: str) -> str:
    """The ``batchUpdate`` body (JSON text) of one ``updateCells`` writing ``rows`` (the JSON
    text of its ``rows``) from column A of row ``first_row`` (0-based).

    ``fields`` names what the cells carry; a cell given as ``{}`` has those fields cleared,
    which on the report's new tab leaves it as it was.
    """
    return (f'{{"requests":[{{"updateCells":{{"start":{{"sheetId":{tab:d},'
            f'"rowIndex":{first_row:d},"columnIndex":0}},"rows":[{rows}],'
            f'"fields":{_quote(fields)}}}}}]}}')
