"""nitpicker.render.console: the levels, the stack locations, one page's distinct messages; and
the console of real pages rendered in Chromium (``/console/``), as the archive and the query
see it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from nitpicker.items import ConsoleRecord
from nitpicker.query import list_console_messages, open_archive
from nitpicker.render.chromium import find_chromium
from nitpicker.render.console import (
    MAX_MESSAGES,
    MAX_TEXT,
    ConsoleLog,
    console_level,
    stack_location,
)
from tests.helpers import crawl, run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)",
)


@pytest.mark.parametrize(("kind", "level"), [
    ("error", "error"), ("assert", "error"), ("warning", "warning"), ("info", "info"),
    ("debug", "debug"), ("log", "log"), ("table", "log"), ("trace", "log"), ("dir", "log"),
    ("timeEnd", "log"), ("count", "log"),
])
def test_console_level(kind: str, level: str) -> None:
    assert console_level(kind) == level


@pytest.mark.parametrize(("stack", "location"), [
    ("TypeError: x is not a function\n    at start (http://h/app.js:12:5)\n    at http://h/:3:1",
     ("http://h/app.js", 12, 5)),
    ("Error: boom\n    at http://h/page?q=1:40:17", ("http://h/page?q=1", 40, 17)),
    ("Error: boom\n    at new Widget (https://cdn.example/w.min.js:1:20431)",
     ("https://cdn.example/w.min.js", 1, 20431)),
    ("Error: no frames", ("", 0, 0)),
    ("", ("", 0, 0)),
])
def test_stack_location(stack: str, location: tuple[str, int, int]) -> None:
    assert stack_location(stack) == location


def _message(kind: str, text: str, url: str = "", line: int = 0, column: int = 0) -> Any:
    return SimpleNamespace(type=kind, text=text,
                           location={"url": url, "lineNumber": line, "columnNumber": column})


def test_console_log_keeps_each_message_once_in_order_of_first_occurrence() -> None:
    log = ConsoleLog()
    log.on_console(_message("log", "before the page's document"))  # a pooled page's last URL
    log.listening = True
    for _ in range(3):
        log.on_console(_message("log", "tick", "http://h/", 9, 4))
    log.on_console(_message("warning", "deprecated", "http://h/s.js", 0, 8))
    log.on_console(_message("log", "tick", "http://h/", 10, 4))  # another line: another message
    log.on_console(_message("info", "no location"))
    log.on_page_error(SimpleNamespace(name="TypeError", message="x is not a function",
                                      stack="TypeError: x is not a function\n    at f (http://h/a.js:2:3)"))
    log.on_page_error(SimpleNamespace(name="", message="thrown string", stack=""))
    assert log.records == [
        ConsoleRecord("console", "log", "tick", "http://h/", 10, 5, count=3),
        ConsoleRecord("console", "warning", "deprecated", "http://h/s.js", 1, 9),
        ConsoleRecord("console", "log", "tick", "http://h/", 11, 5),
        ConsoleRecord("console", "info", "no location", "", 0, 0),
        ConsoleRecord("exception", "error", "TypeError: x is not a function", "http://h/a.js", 2, 3),
        ConsoleRecord("exception", "error", "thrown string", "", 0, 0),
    ]


def test_console_log_is_bounded() -> None:
    log = ConsoleLog()
    log.listening = True
    for n in range(MAX_MESSAGES + 7):
        log.on_console(_message("log", f"message {n}"))
    log.on_console(_message("log", "x" * (MAX_TEXT + 100) + "\ud800"))
    assert len(log.records) == MAX_MESSAGES and log.dropped == 8
    log = ConsoleLog()
    log.listening = True
    log.on_console(_message("log", "x" * 10 + "\ud800 lone surrogate"))
    log.on_console(_message("log", "y" * (MAX_TEXT + 100)))
    assert [r.text for r in log.records] == ["x" * 10 + "\ufffd lone surrogate", "y" * MAX_TEXT]


def test_the_same_message_has_the_same_digest_on_every_page() -> None:
    one = ConsoleRecord("console", "warning", "w", "http://h/s.js", 1, 9, count=4)
    assert one.digest == ConsoleRecord("console", "warning", "w", "http://h/s.js", 1, 9).digest
    assert one.digest != ConsoleRecord("console", "warning", "w", "http://h/s.js", 2, 9).digest
    assert one.digest != ConsoleRecord("console", "error", "w", "http://h/s.js", 1, 9).digest


# -- real pages in Chromium ------------------------------------------------------------------


def _by_page(archive: Any) -> dict[str, list[tuple[Any, ...]]]:
    rows = archive.rows(
        'SELECT p.url, m.kind, m.level, m.text, m.source_url, m.line, m."column", pm.count'
        " FROM page_console_messages pm JOIN pages p ON p.id = pm.page_id"
        " JOIN console_messages m ON m.id = pm.message_id ORDER BY p.url, pm.position")
    found: dict[str, list[tuple[Any, ...]]] = {}
    for url, *message in rows:
        found.setdefault(url, []).append(tuple(message))
    return found


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_console_messages_and_page_errors_of_rendered_pages(
    site: FixtureSite, tmp_path: Path
) -> None:
    archive = await crawl(tmp_path, [site.url("/console/")], render=True)
    shared = ("console", "warning", "shared: document.domain setter is deprecated",
              site.url("/console/assets/shared.js"), 1, 9, 1)
    levels = site.url("/console/levels")
    assert _by_page(archive) == {
        site.url("/console/"): [shared, ("console", "log", "console top: hello",
                                         site.url("/console/"), 13, 17, 1)],
        levels: [
            shared,
            ("console", "error", "levels: widget failed to load", levels, 13, 9, 1),
            ("console", "warning", "levels: slow widget", levels, 14, 9, 1),
            ("console", "info", "levels: info", levels, 15, 9, 1),
            ("console", "debug", "levels: debug", levels, 16, 9, 1),
            ("console", "log", "levels: tick", levels, 17, 37, 3),
        ],
        site.url("/console/uncaught"): [
            shared, ("exception", "error", "ReferenceError: undefinedWidget is not defined",
                     site.url("/console/uncaught"), 14, 3, 1)],
        site.url("/console/quiet"): [shared],
    }
    # the shared warning is one row, linked to its four pages
    assert archive.rows("SELECT count(*) FROM console_messages WHERE text LIKE 'shared:%'"
                        )[0][0] == 1
    archive.conn.close()

    conn = open_archive(archive.path)
    try:
        warnings = list_console_messages(conn, level="warning")
        assert warnings is not None
        assert [(m["text"], m["page_count"], m["occurrences"]) for m in warnings["items"]] == [
            ("shared: document.domain setter is deprecated", 4, 4), ("levels: slow widget", 1, 1)]
        assert warnings["items"][0]["pages"] == sorted(
            site.url(p) for p in ("/console/", "/console/levels", "/console/uncaught",
                                  "/console/quiet"))
        every = list_console_messages(conn)
        assert every is not None and every["total"] == 8
        assert [m["level"] for m in every["items"]] == [
            "error", "error", "warning", "warning", "info", "log", "log", "debug"]
        of_page = list_console_messages(conn, url=site.url("/console/uncaught#top"))
        assert of_page is not None
        assert [(m["kind"], m["line"], m["column"]) for m in of_page["items"]] == [
            ("console", 1, 9), ("exception", 14, 3)]
    finally:
        conn.close()

    plain = await crawl(tmp_path, [site.url("/console/")], render=False)
    assert plain.rows("SELECT count(*) FROM console_messages")[0][0] == 0
    assert len(plain.internal_pages()) == 4


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_query_console_on_the_command_line(site: FixtureSite, tmp_path: Path) -> None:
    archive = await crawl(tmp_path, [site.url("/console/quiet")], render=True, single=True)
    archive.conn.close()
    answer = run("query", str(archive.path), "console", "--level", "warning", cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout) == {"items": [{
        "level": "warning", "kind": "console",
        "text": "shared: document.domain setter is deprecated",
        "source_url": site.url("/console/assets/shared.js"), "line": 1, "column": 9,
        "page_count": 1, "occurrences": 1, "pages": [site.url("/console/quiet")]}],
        "total": 1, "offset": 0, "limit": 100}
    assert json.loads(run("query", str(archive.path), "console", "--level", "error",
                          cwd=tmp_path).stdout)["total"] == 0
