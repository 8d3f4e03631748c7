"""GitHub Actions workflow commands: the findings as annotations of the job.

One line per failing finding, most urgent first: ``::error`` for ``critical`` and ``high``,
``::warning`` for ``medium``, ``::notice`` for ``low`` and ``info``, with ``file=`` the page
URL (``line=`` and ``col=`` when the analyzer knows them) and ``title=`` the rule and its
title; the message after ``::``. GitHub shows at most 10 errors and 10 warnings of a step
and 50 annotations of a job, so at most :data:`CAP` lines are written, then one
``::notice::`` counting the rest. Values are escaped as the runner reads them (``%``, CR and
LF; in properties ``:`` and ``,`` too): :func:`write_github`.
"""

from __future__ import annotations

import re
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nitpicker.ci.source import Entry, ExportSource

__all__ = ["CAP", "write_github"]

CAP: Final = 50

COMMANDS: Final = {"critical": "error", "high": "error", "medium": "warning", "low": "notice",
                   "info": "notice"}

_LOCATION: Final = re.compile(r"(\d+)(?::(\d+))?")


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _line(entry: Entry) -> str:
    finding = entry.finding
    properties = [f"file={_property(finding['url'])}"]
    found = _LOCATION.fullmatch((finding["location"] or "").strip())
    if found:
        properties.append(f"line={found.group(1)}")
        if found.group(2):
            properties.append(f"col={found.group(2)}")
    properties.append(f"title={_property(finding['rule'] + ': ' + finding['title'])}")
    message = " ".join(finding["message"].split()) or finding["title"]
    if finding["element"]:
        message += f" ({' '.join(finding['element'].split())})"
    return f"::{COMMANDS[finding['priority']]} {','.join(properties)}::{_data(message[:1000])}"


def write_github(source: ExportSource, out: IO[str]) -> None:
    """The workflow commands of ``source``'s failing findings, written to ``out``."""
    written = 0
    more = 0
    for entry in source.entries("priority"):
        if not entry.failing:
            continue
        if written < CAP:
            out.write(_line(entry) + "\n")
            written += 1
        else:
            more += 1
    if more:
        out.write(f"::notice title=nitpicker::{more} more finding{'' if more == 1 else 's'}: "
                  f"nitpicker query {_data(source.path.name)} issues\n")
