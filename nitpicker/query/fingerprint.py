"""The stable fingerprint of a finding: what stays the same when a page is crawled again and
parts of it unrelated to the finding change.

A finding's fingerprint is a 64-bit BLAKE2b of its rule id (``links/broken-internal``,
``axe/image-alt``), the page's URL and its **locator**, NUL-separated. The locator names
*where* on the page, never the page's other content:

- the finding's element when it has one (a CSS selector from axe, the target of a link, the
  ``src`` of an image), its runs of whitespace collapsed;
- else its snippet (``code``) reduced to its markup: the text between the tags dropped and
  whitespace collapsed, so ``<html lang="en"><head><title>Old</title>…`` (axe quotes a small
  page's whole ``<html>``) does not change when only the title does; a snippet that is not
  markup is kept as written, whitespace collapsed;
- else the message (``''`` and textlint's ``'-'`` are no code), whitespace collapsed.

The ``line:col`` location is never part of it (a finding whose line moved is the same
finding), nor the severity. Site checks give an element or nothing: their messages carry
counts that change (``linked 12 times``), so a check's locator is its element or ``''``.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3

__all__ = ["FINDING_FINGERPRINT_FUNCTION", "VIOLATION_FINGERPRINT_FUNCTION", "check_locator",
           "finding_fingerprint", "fingerprint_hex", "locator", "markup_outline",
           "register_fingerprint", "violation_fingerprint"]

FINDING_FINGERPRINT_FUNCTION: Final = "nitpicker_finding_fingerprint"
"""The SQL name of :func:`finding_fingerprint` (``rule, url, locator``)."""

VIOLATION_FINGERPRINT_FUNCTION: Final = "nitpicker_violation_fingerprint"
"""The SQL name of :func:`violation_fingerprint` (``validator, rule, url, element, code,
message``)."""

_NO_CODE: Final = frozenset({"", "-"})
_TEXT_BETWEEN_TAGS: Final = re.compile(r">[^<>]*<")


def _collapsed(text: str | None) -> str:
    return " ".join((text or "").split())


def markup_outline(code: str) -> str:
    """``code``'s tags without the text between them, whitespace collapsed: ``<p class="a">
    Hello <b>you</b></p>`` → ``<p class="a"><b></b></p>``. Text that is not markup (no
    ``<`` first and ``>`` last) comes back whitespace-collapsed only."""
    text = _collapsed(code)
    if not (text.startswith("<") and text.endswith(">")):
        return text
    return _TEXT_BETWEEN_TAGS.sub("><", text)


def locator(element: str | None, code: str | None, message: str | None) -> str:
    """Where an analyzer's finding is: its element, else its code's markup, else its
    message."""
    where = _collapsed(element)
    if where:
        return where
    outline = markup_outline(code or "")
    return outline if outline not in _NO_CODE else _collapsed(message)


def check_locator(element: str | None) -> str:
    """Where a site check's finding is: its element, or ``''`` for the page itself."""
    return _collapsed(element)


def finding_fingerprint(rule: str | None, url: str | None, where: str | None) -> int:
    """The fingerprint of the finding of ``rule`` on ``url`` at ``where`` (a signed 64-bit
    integer, as SQLite stores it)."""
    text = "\0".join((rule or "", url or "", where or ""))
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def fingerprint_hex(fingerprint: int | None) -> str:
    """A stored fingerprint as users read it: 16 hex digits (``''`` for ``None``: a violation
    written before its fingerprint was, until ``nitpicker check``)."""
    if fingerprint is None:
        return ""
    return int(fingerprint).to_bytes(8, "big", signed=True).hex()


def violation_fingerprint(validator: str | None, rule: str | None, url: str | None,
                          element: str | None, code: str | None, message: str | None) -> int:
    """The fingerprint of an analyzer's violation: its rule id is ``validator/rule``."""
    return finding_fingerprint(f"{validator or ''}/{rule or ''}", url,
                               locator(element, code, message))


def _check_fingerprint(rule: str | None, url: str | None, element: str | None) -> int:
    return finding_fingerprint(rule, url, check_locator(element))


def register_fingerprint(conn: sqlite3.Connection) -> None:
    """Register both fingerprints as deterministic SQL functions on ``conn``: a check's
    ``(rule, url, element)``, a violation's ``(validator, rule, url, element, code,
    message)`` (registering changes nothing in the file)."""
    conn.create_function(FINDING_FINGERPRINT_FUNCTION, 3, _check_fingerprint,
                         deterministic=True)
    conn.create_function(VIOLATION_FINGERPRINT_FUNCTION, 6, violation_fingerprint,
                         deterministic=True)
