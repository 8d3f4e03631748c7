"""Markdown: a summary of the findings to post as a pull-request or merge-request comment.

A heading with the site and the counts; a table of the findings by priority; in a
comparison, how many are new, unchanged and fixed; the accepted and expired ones; then the
top :data:`TOP` failing findings, most urgent first, each with a link to its page; a line for
the rest. Every cell is cut to a bound, so the comment stays under :data:`MAX_CHARS` (GitHub
refuses a comment over 65,536 characters) however many findings there are: :func:`write_markdown`.
"""

from __future__ import annotations

import re
from typing import IO, TYPE_CHECKING, Final

from nitpicker.query.checks import PRIORITIES

if TYPE_CHECKING:
    from nitpicker.ci.source import Entry, ExportSource

__all__ = ["MAX_CHARS", "TOP", "write_markdown"]

TOP: Final = 20
"""The failing findings listed."""

MAX_CHARS: Final = 65_000

_CELL: Final = 160
"""The most characters of a cell's text (a URL's link text, a message)."""

_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>|#!~])")
_ICONS: Final = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🔵", "info": "⚪"}


def _text(value: str | None, limit: int = _CELL) -> str:
    """``value`` on one line, cut to ``limit`` characters, Markdown's specials escaped."""
    text = " ".join((value or "").split())
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return _SPECIAL.sub(r"\\\1", text)


def _link(url: str) -> str:
    label = _text(url, 80)
    if not url.startswith(("http://", "https://")) or len(url) > 2000:
        return label
    target = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")
    return f"[{label}]({target.replace('>', '%3E')})"


def _row(entry: Entry) -> str:
    finding = entry.finding
    where = finding["element"] or finding["location"] or ""
    new = " 🆕" if entry.state == "new" else ""
    return (f"| {_ICONS[finding['priority']]} {finding['priority']}{new} "
            f"| `{_text(finding['rule'], 80).replace('`', '')}` {_text(finding['title'], 80)} "
            f"| {_link(finding['url'])} | {_text(where, 80)} | {_text(finding['message'])} |")


def write_markdown(source: ExportSource, out: IO[str]) -> None:
    """The comment for ``source``'s findings, written to ``out``."""
    out.write(_render(source)[:MAX_CHARS])


def _render(source: ExportSource) -> str:
    summary = source.summary()
    site = _text(source.base_url or str(source.path), 200)
    counted = summary.findings - summary.suppressed
    lines = [f"## nitpicker: {counted} finding{'' if counted == 1 else 's'} on {site}", ""]
    if source.compared:
        lines += [(f"**{summary.new} new**, {summary.unchanged} unchanged, "
                  f"**{summary.fixed} fixed** since {_text(str(source.old_path), 200)}."), ""]
    lines += ["| priority | findings |", "|---|---:|"]
    lines += [f"| {_ICONS[name]} {name} | {summary.by_priority[name]} |" for name in PRIORITIES]
    lines.append("")
    if summary.suppressed:
        where = f" in `{_text(str(source.suppressions.path), 200)}`" if (
            source.suppressions is not None and source.suppressions.path) else ""
        lines += [(f"{summary.suppressed} accepted finding{'' if summary.suppressed == 1 else 's'}"
                  f"{where} not counted."), ""]
    if summary.expired:
        lines += [(f"⚠️ {summary.expired} finding{'' if summary.expired == 1 else 's'} whose "
                  "suppression expired count again."), ""]
    shown = 0
    rows = []
    for entry in source.entries("priority"):
        if not entry.failing:
            continue
        if shown == TOP:
            break
        rows.append(_row(entry))
        shown += 1
    label = "new findings" if source.compared else "findings"
    if rows:
        lines += [f"### The top {shown} {label}" if summary.failing > shown else f"### The {label}",
                  "", "| priority | issue | page | where | message |", "|---|---|---|---|---|",
                  *rows, ""]
        if summary.failing > shown:
            lines += [(f"… and {summary.failing - shown} more: `nitpicker query "
                      f"{_text(source.path.name, 200)} issues`"), ""]
    else:
        lines += [f"No {label}. ✅", ""]
    return "\n".join(lines)
