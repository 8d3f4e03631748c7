"""Reading a file of URLs the user names (``crawl --list-file``, ``crawl --inventory``,
``query … match-urls --urls``): UTF-8 text, one URL a line, blank lines and ``#`` comments
ignored, read within bounds.

The file is read a line at a time, never whole, and never past :data:`MAX_LINE_BYTES` a line
or :data:`MAX_FILE_BYTES` in all: ``/dev/zero``, ``/dev/urandom`` or a log of gigabytes is one
error line naming the file and the limit, not a process that reads until memory runs out.
A pipe works (``--list-file /dev/stdin``). A UTF-8 byte-order mark at the start is skipped.

A leaf module, like :mod:`nitpicker.messages`: the crawl's options and the CLI share it.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Final

from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_BYTES", "UrlFileError", "read_lines", "read_url_lines"]

MAX_LINE_BYTES: Final = 16 * 1024
"""The longest line (its bytes, without the line end): twice the longest URL an archive keeps
(8,190 characters, ``nitpicker.items.MAX_URL_LENGTH``), room for a comment after it."""

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
"""The largest file: about a million URLs of typical length."""


_BLOCK: Final = 256 * 1024
"""Bytes read at a time."""


class UrlFileError(UserError, ValueError):
    """The file cannot be read, is not UTF-8 text, holds no URL, or passes a limit; the
    message (one line) names the file, and the line or the limit."""


def _title(what: str) -> str:
    return what[:1].upper() + what[1:]


def read_lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of ``path`` that is not empty, without its line
    end (``\n`` or ``\r\n``); ``what`` names the file in errors (``list file``)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UrlFileError(f"Cannot read {what}: {path} ({exc.strerror or exc})") from exc
    with handle:
        number = 0
        offset = 0  # of the start of ``pending`` in the file
        pending = b""  # the bytes of a line not ended yet
        while True:
            try:
                block = handle.read(_BLOCK)
            except OSError as exc:  # a directory, an I/O error
                raise UrlFileError(f"Cannot read {what}: {path} ({exc.strerror or exc})") from exc
            if offset + len(pending) + len(block) > MAX_FILE_BYTES:
                raise UrlFileError(f"{_title(what)} {path}: larger than {MAX_FILE_BYTES:,} "
                                   f"bytes (the most a URL file may hold)")
            lines = (pending + block).split(b"\n")
            pending = lines.pop() if block else b""
            if not block and not lines[-1]:
                lines.pop()  # the file ended with its last line's \n
            for raw in lines:
                number += 1
                if raw:  # (a blank line costs no more than counting it)
                    yield number, _decoded(raw, number, offset, path, what)
                offset += len(raw) + 1
            if len(pending) > MAX_LINE_BYTES + 1:  # + 1: a \r before the \n
                raise UrlFileError(f"{_title(what)} {path}, line {number + 1}: longer than "
                                   f"{MAX_LINE_BYTES:,} bytes (the longest line a URL file "
                                   "may have)")
            if not block:
                return


def _decoded(raw: bytes, number: int, offset: int, path: Path, what: str) -> str:
    """One line's text: its ``\r`` and (on the first line) a byte-order mark taken off."""
    content = raw[:-1] if raw.endswith(b"\r") else raw
    if len(content) > MAX_LINE_BYTES:
        raise UrlFileError(f"{_title(what)} {path}, line {number}: longer than "
                           f"{MAX_LINE_BYTES:,} bytes (the longest line a URL file may have)")
    if number == 1 and content.startswith(codecs.BOM_UTF8):
        content = content[len(codecs.BOM_UTF8):]
        offset += len(codecs.BOM_UTF8)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UrlFileError(f"{_title(what)} is not UTF-8 text: {path} (byte "
                           f"0x{exc.object[exc.start]:02x} at offset {offset + exc.start})"
                           ) from exc


def read_url_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """``(line number, entry)`` of the lines that hold something once a ``#`` comment and the
    surrounding whitespace are taken off; :class:`UrlFileError` when none does."""
    entries = []
    for number, line in read_lines(path, what):
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append((number, entry))
    if not entries:
        raise UrlFileError(f"No URLs found in {what}: {path}")
    return entries
