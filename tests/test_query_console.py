"""nitpicker.query.console (and ``nitpicker query FILE console``) on an archive written by the
archive writer: order, filters, paging, a page the archive does not have, a bad level. (The
console of real pages rendered in Chromium: ``tests/test_render_console.py``.)"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from nitpicker.items import ConsoleRecord, PageItem
from nitpicker.query import CONSOLE_LEVELS, list_console_messages, open_archive
from tests.helpers import run

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

    from nitpicker.archive.writer import ArchiveWriter

SITE = "http://example.com"
SHARED = ConsoleRecord("console", "warning", "shared", f"{SITE}/s.js", 1, 9)
BOOM = ConsoleRecord("exception", "error", "Error: boom", f"{SITE}/b", 3, 1)
NOTE = ConsoleRecord("console", "info", "note", "", 0, 0)
TICK = ConsoleRecord("console", "log", "tick", f"{SITE}/a", 2, 5, count=4)


@pytest.fixture
def archive(writer: ArchiveWriter) -> Path:
    for path, console in (("/a", [TICK, SHARED]), ("/b", [SHARED, BOOM]), ("/c", [SHARED]),
                          ("/d", [NOTE]), ("/e", [])):
        writer.pages.record(PageItem(url=SITE + path, frontier_id=None, depth=0,
                                     is_external=False, is_target=True, status=200,
                                     content_type="text/html", console=console), [])
    path = writer.path
    writer.close()
    return path


@pytest.fixture
def conn(archive: Path) -> Iterator[sqlite3.Connection]:
    connection = open_archive(archive)
    yield connection
    connection.close()


def test_most_severe_first_then_most_shared(conn: sqlite3.Connection) -> None:
    answer = list_console_messages(conn)
    assert answer is not None
    assert [(m["text"], m["level"], m["page_count"], m["occurrences"]) for m in answer["items"]
            ] == [("Error: boom", "error", 1, 1), ("shared", "warning", 3, 3),
                  ("note", "info", 1, 1), ("tick", "log", 1, 4)]
    assert answer["items"][1] == {
        "level": "warning", "kind": "console", "text": "shared", "source_url": f"{SITE}/s.js",
        "line": 1, "column": 9, "page_count": 3, "occurrences": 3,
        "pages": [f"{SITE}/a", f"{SITE}/b", f"{SITE}/c"]}
    # no location: None, not "" and 0
    assert (answer["items"][2]["source_url"], answer["items"][2]["line"]) == (None, None)


def test_filters_and_paging(conn: sqlite3.Connection) -> None:
    def texts(**options: object) -> tuple[list[str], int]:
        answer = list_console_messages(conn, **options)  # type: ignore[arg-type]
        assert answer is not None
        return [m["text"] for m in answer["items"]], answer["total"]

    assert texts(level="warning") == (["shared"], 1)
    assert texts(level="debug") == ([], 0)
    assert texts(url=f"{SITE}/b") == (["shared", "Error: boom"], 2)  # the page's own order
    assert texts(url=f"{SITE}/a#x", level="log") == (["tick"], 1)
    assert texts(url=f"{SITE}/e") == ([], 0)
    assert texts(limit=2, offset=1) == (["shared", "note"], 4)
    assert texts(offset=9) == ([], 4)
    assert list_console_messages(conn, url=f"{SITE}/nowhere") is None
    with pytest.raises(ValueError, match="Invalid level: 'warn'. Must be one of: "
                                         + ", ".join(CONSOLE_LEVELS)):
        list_console_messages(conn, level="warn")


def test_query_console_errors_are_one_line(archive: Path, tmp_path: Path) -> None:
    answer = run("query", str(archive), "console", "--url", f"{SITE}/b", "--pretty",
                 cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert [m["text"] for m in json.loads(answer.stdout)["items"]] == ["shared", "Error: boom"]
    for args, message in (
        (("--level", "warn"), ("Error: Invalid level: 'warn'. Must be one of: error, warning, "
                               "info, log, debug")),
        (("--url", f"{SITE}/nowhere"), f"Error: Page not found: {SITE}/nowhere"),
        (("--limit", "-1"), ("Error: Invalid --limit: -1. Must be between 0 and "
                             "9223372036854775807")),
    ):
        failed = run("query", str(archive), "console", *args, cwd=tmp_path)
        assert (failed.returncode, failed.stdout, failed.stderr.strip()) == (1, "", message)
