"""ConsoleLog: the console messages and uncaught exceptions of one rendered page.

Filled by the page's ``console`` and ``pageerror`` events (:class:`nitpicker.render.page.
RenderResult` attaches :meth:`ConsoleLog.on_console` and :meth:`ConsoleLog.on_page_error`
before navigation, and removes them when the page goes back to the pool). Each distinct
message is kept once, with the number of times the page showed it, in the order of its first
occurrence; a page that logs in a loop keeps at most :data:`MAX_MESSAGES` distinct messages
(the others are counted in :attr:`ConsoleLog.dropped`), each at most :data:`MAX_TEXT`
characters.

The levels are DevTools' five: ``console.error`` and a failed ``console.assert`` are
``error``, ``console.warn`` is ``warning``, ``console.info`` ``info``, ``console.debug``
``debug``, and every other console call (``log``, ``dir``, ``table``, ``trace``, ``count``, …)
``log``. An uncaught exception (or unhandled rejection) is kind ``exception``, level
``error``, its text the first line of its stack (``TypeError: x is not a function``), its
location the stack's first frame. Lines and columns are 1-based, as DevTools shows them
(Playwright's console locations are 0-based); 0 when the browser does not say.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from nitpicker.items import ConsoleRecord

if TYPE_CHECKING:
    from collections.abc import Mapping

    from playwright.async_api import ConsoleMessage

__all__ = ["MAX_MESSAGES", "MAX_TEXT", "ConsoleLog", "console_level", "stack_location"]

#: The most distinct messages kept per page.
MAX_MESSAGES = 500
#: The most characters kept of a message's text (a logged object can be huge).
MAX_TEXT = 4000

_LEVELS = {
    "error": "error",
    "assert": "error",
    "warning": "warning",
    "info": "info",
    "debug": "debug",
}

# One frame of a V8 stack: "    at fn (https://host/app.js:12:5)" or "    at https://host/app.js:12:5".
_FRAME = re.compile(r"^\s*at (?:.*? \()?(?P<url>[^\s()]+?):(?P<line>\d+):(?P<column>\d+)\)?\s*$",
                    re.MULTILINE)


def console_level(kind: str) -> str:
    """The level of a Playwright console message type (``warning`` → ``warning``, ``table`` →
    ``log``)."""
    return _LEVELS.get(kind, "log")


def stack_location(stack: str) -> tuple[str, int, int]:
    """``(url, line, column)`` of the first frame of a V8 stack (``("", 0, 0)`` without one)."""
    frame = _FRAME.search(stack)
    if frame is None:
        return "", 0, 0
    return frame["url"], int(frame["line"]), int(frame["column"])


def _clean(text: str) -> str:
    """``text`` cut at :data:`MAX_TEXT`, a lone surrogate (a JavaScript string may hold one)
    made U+FFFD: SQLite stores UTF-8."""
    text = text[:MAX_TEXT]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class ConsoleLog:
    """The distinct console messages of one page, in order of first occurrence."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str, str, str, int, int], ConsoleRecord] = {}
        self.dropped = 0
        #: whether the page's own document is showing: a pooled page's previous document can
        #: still log while it unloads (set by the render result once its navigation commits)
        self.listening = False

    @property
    def records(self) -> list[ConsoleRecord]:
        return list(self._records.values())

    def add(self, kind: str, level: str, text: str, url: str = "", line: int = 0,
            column: int = 0) -> None:
        """One occurrence of a message."""
        text = _clean(text)
        key = (kind, level, text, url, line, column)
        record = self._records.get(key)
        if record is not None:
            record.count += 1
        elif len(self._records) < MAX_MESSAGES:
            self._records[key] = ConsoleRecord(kind, level, text, url, line, column)
        else:
            self.dropped += 1

    def on_console(self, message: ConsoleMessage) -> None:
        """``page.on("console")``."""
        if not self.listening:
            return
        # lineNumber and columnNumber are 0-based (SourceLocation's line and column are newer)
        location = cast("Mapping[str, Any]", message.location or {})
        url = str(location.get("url") or "")
        line = int(location.get("lineNumber") or 0)
        column = int(location.get("columnNumber") or 0)
        self.add("console", console_level(message.type), message.text, url,
                 line + 1 if url else 0, column + 1 if url else 0)

    def on_page_error(self, error: Any) -> None:
        """``page.on("pageerror")``: an uncaught exception (Playwright's ``Error``: ``name``,
        ``message``, ``stack``)."""
        if not self.listening:
            return
        stack = str(getattr(error, "stack", "") or "")
        name = str(getattr(error, "name", "") or "")
        message = str(getattr(error, "message", "") or "")
        first = stack.split("\n", 1)[0].strip() if stack else ""
        if not first or first.startswith("at "):
            first = f"{name}: {message}" if name else message
        self.add("exception", "error", first, *stack_location(stack))
