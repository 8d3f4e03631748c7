"""Accepted findings: a suppressions file (``.nitpicker-baseline.json``) lists findings by
their fingerprint, each with the reason it is accepted and an optional expiry date.

A suppressed finding is counted as suppressed and never trips a gate; once its ``expires``
date has passed (the date itself is still covered) the suppression is *expired* and the
finding gates again. The file::

    {
      "version": 1,
      "suppressions": [
        {"fingerprint": "3f2a…", "rule": "links/broken-external", "url": "https://…",
         "reason": "the partner fixes it in March", "expires": "2027-03-31"}
      ]
    }

``fingerprint`` (16 hex digits, :mod:`nitpicker.query.fingerprint`) and ``reason`` are
required; ``rule``, ``url`` and ``message`` only help the reader; ``expires`` is a date
``YYYY-MM-DD`` or ``null``. A file that is not that raises :class:`SuppressionsError`, whose
message names the file and the line (``.nitpicker-baseline.json:7: …``).

:func:`write_suppressions` writes one from an archive's findings (``nitpicker baseline``): one
entry a line, sorted, keeping the reason and expiry of an entry the previous file had.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from datetime import date
from json.decoder import JSONObject  # type: ignore[attr-defined]
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from nitpicker.query.findings import Finding

__all__ = ["DEFAULT_FILE", "FORMAT_VERSION", "Suppression", "Suppressions", "SuppressionsError",
           "find_suppressions", "write_suppressions"]

DEFAULT_FILE: Final = ".nitpicker-baseline.json"
"""The file read from the working directory when ``--suppressions`` is not given."""

FORMAT_VERSION: Final = 1

_FINGERPRINT: Final = re.compile(r"[0-9a-f]{16}")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_KEYS: Final = ("fingerprint", "rule", "url", "message", "reason", "expires")
_TOP_KEYS: Final = ("version", "archive", "created_at", "suppressions")


class SuppressionsError(UserError, ValueError):
    """A suppressions file that cannot be used: its message names the file and the line."""


@dataclass(frozen=True)
class Suppression:
    """One accepted finding."""

    fingerprint: str
    reason: str
    expires: date | None = None
    rule: str | None = None
    url: str | None = None
    message: str | None = None
    line: int = 0
    """Where it is in the file (0: not read from one)."""

    def expired(self, today: date) -> bool:
        """Past its ``expires`` date (that date itself is still covered)."""
        return self.expires is not None and today > self.expires

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"fingerprint": self.fingerprint}
        for key in ("rule", "url", "message"):
            if getattr(self, key):
                entry[key] = getattr(self, key)
        entry["reason"] = self.reason
        entry["expires"] = self.expires.isoformat() if self.expires else None
        return entry


class _Located(dict[str, Any]):
    """A JSON object with the line it starts on."""

    line = 0


class _LineDecoder(json.JSONDecoder):
    """The standard decoder, its objects :class:`_Located` (the pure-Python scanner calls
    ``parse_object`` with the object's position; the C one does not)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        newlines = [index for index, char in enumerate(text) if char == "\n"]

        def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[_Located, int]:
            value, end = JSONObject(s_and_end, *args)
            located = _Located(value)
            located.line = bisect.bisect_left(newlines, s_and_end[1]) + 1
            return located, end

        self.parse_object = parse_object
        self.scan_once = py_make_scanner(self)


class Suppressions:
    """The suppressions of one file, by fingerprint."""

    def __init__(self, entries: Iterable[Suppression], path: Path | None = None) -> None:
        self.path = path
        self.entries: dict[str, Suppression] = {entry.fingerprint: entry for entry in entries}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, fingerprint: str) -> Suppression | None:
        """The suppression of ``fingerprint``, expired or not."""
        return self.entries.get(fingerprint) if fingerprint else None

    @classmethod
    def load(cls, path: Path) -> Suppressions:
        """The file at ``path``; :class:`SuppressionsError` naming the line of what is wrong."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SuppressionsError(f"Suppressions file not found: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SuppressionsError(f"{path}: cannot read the suppressions file ({exc})") from exc
        try:
            document = _LineDecoder(text).decode(text)
        except json.JSONDecodeError as exc:
            raise SuppressionsError(f"{path}:{exc.lineno}: not JSON ({exc.msg}, column "
                                    f"{exc.colno})") from exc
        return cls(_entries(document, path), path)


def _entries(document: Any, path: Path) -> list[Suppression]:
    if not isinstance(document, _Located):
        raise SuppressionsError(f"{path}:1: the file must be a JSON object with \"version\": "
                                f"{FORMAT_VERSION} and \"suppressions\": [...]")
    unknown = [key for key in document if key not in _TOP_KEYS]
    if unknown:
        raise SuppressionsError(f"{path}:{document.line}: unknown key {unknown[0]!r}. The keys "
                                f"are: {', '.join(_TOP_KEYS)}")
    if document.get("version") != FORMAT_VERSION:
        raise SuppressionsError(f"{path}:{document.line}: \"version\" must be {FORMAT_VERSION}, "
                                f"got {document.get('version')!r}")
    listed = document.get("suppressions")
    if not isinstance(listed, list):
        raise SuppressionsError(f"{path}:{document.line}: \"suppressions\" must be a list")
    seen: dict[str, int] = {}
    entries = []
    for index, item in enumerate(listed):
        entry = _entry(item, path, index, document.line)
        if entry.fingerprint in seen:
            raise SuppressionsError(f"{path}:{entry.line}: fingerprint {entry.fingerprint} is "
                                    f"already accepted on line {seen[entry.fingerprint]}")
        seen[entry.fingerprint] = entry.line
        entries.append(entry)
    return entries


def _entry(item: Any, path: Path, index: int, top_line: int) -> Suppression:
    if not isinstance(item, _Located):
        raise SuppressionsError(f"{path}:{top_line}: suppression {index + 1} must be an object, "
                                f"got {item!r}")
    where = f"{path}:{item.line}"
    unknown = [key for key in item if key not in _KEYS]
    if unknown:
        raise SuppressionsError(f"{where}: unknown key {unknown[0]!r}. The keys are: "
                                f"{', '.join(_KEYS)}")
    fingerprint = item.get("fingerprint")
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint.lower()):
        raise SuppressionsError(f"{where}: \"fingerprint\" must be 16 hex digits (as nitpicker "
                                f"query FILE issue shows them), got {fingerprint!r}")
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise SuppressionsError(f"{where}: \"reason\" must say why the finding is accepted, "
                                f"got {reason!r}")
    for key in ("rule", "url", "message"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise SuppressionsError(f"{where}: \"{key}\" must be text, got {item[key]!r}")
    return Suppression(fingerprint.lower(), reason.strip(), _expires(item.get("expires"), where),
                       item.get("rule"), item.get("url"), item.get("message"), item.line)


def _expires(value: Any, where: str) -> date | None:
    if value is None:
        return None
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise SuppressionsError(f"{where}: \"expires\" must be a date YYYY-MM-DD or null, got "
                            f"{value!r}")


def find_suppressions(explicit: Path | None, cwd: Path | None = None) -> Suppressions | None:
    """The suppressions of ``--suppressions FILE`` (a file that is not there is an error), or
    else of :data:`DEFAULT_FILE` in the working directory when it is there (else ``None``)."""
    if explicit is not None:
        return Suppressions.load(explicit)
    default = (cwd or Path.cwd()) / DEFAULT_FILE
    if default.is_file():
        return Suppressions.load(Path(DEFAULT_FILE) if cwd is None else default)
    return None


def write_suppressions(findings: Iterable[Finding], out: IO[str], *, reason: str,
                       expires: date | None, previous: Suppressions | None = None,
                       archive: str | None = None, created_at: str | None = None
                       ) -> tuple[int, int]:
    """Every distinct fingerprint of ``findings`` as an accepted finding, one a line, sorted
    by rule, URL and fingerprint; an entry of ``previous`` keeps its reason and expiry. How
    many entries were written, and how many of them ``previous`` had."""
    entries: dict[str, Suppression] = {}
    kept_count = 0
    for finding in findings:
        fingerprint = finding["fingerprint"]
        if not fingerprint or fingerprint in entries:
            continue
        kept = previous.get(fingerprint) if previous is not None else None
        kept_count += kept is not None
        entries[fingerprint] = Suppression(
            fingerprint, kept.reason if kept else reason, kept.expires if kept else expires,
            finding["rule"], finding["url"], " ".join(finding["message"].split())[:200] or None)
    ordered = sorted(entries.values(), key=lambda e: (e.rule or "", e.url or "", e.fingerprint))
    head = {"version": FORMAT_VERSION, "archive": archive, "created_at": created_at}
    out.write("{\n" + "".join(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},\n"
                              for key, value in head.items() if value is not None))
    out.write('  "suppressions": [')
    for index, entry in enumerate(ordered):
        out.write(("\n" if index == 0 else ",\n")
                  + "    " + json.dumps(entry.as_json(), ensure_ascii=False))
    out.write("\n  ]\n}\n" if ordered else "]\n}\n")
    return len(ordered), kept_count
