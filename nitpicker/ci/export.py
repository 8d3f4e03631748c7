"""The export formats, by name: what ``nitpicker export --format`` and ``nitpicker diff
--format`` write for a CI tool (:mod:`nitpicker.ci.sarif`, :mod:`~nitpicker.ci.junit`,
:mod:`~nitpicker.ci.markdown`, :mod:`~nitpicker.ci.github`)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Final

from nitpicker.ci.github import write_github
from nitpicker.ci.junit import write_junit
from nitpicker.ci.markdown import write_markdown
from nitpicker.ci.sarif import write_sarif

if TYPE_CHECKING:
    from collections.abc import Callable

    from nitpicker.ci.source import ExportSource

__all__ = ["EXPORT_FORMATS", "write_export"]

_WRITERS: Final[dict[str, Callable[[ExportSource, IO[str]], None]]] = {
    "sarif": write_sarif,
    "junit": write_junit,
    "markdown": write_markdown,
    "github": write_github,
}

EXPORT_FORMATS: Final = tuple(_WRITERS)
"""``sarif`` (code scanning), ``junit`` (test tabs), ``markdown`` (a pull-request comment),
``github`` (workflow-command annotations)."""


def write_export(format_: str, source: ExportSource, out: IO[str]) -> None:
    """``source``'s findings in ``format_`` (one of :data:`EXPORT_FORMATS`) to ``out``."""
    _WRITERS[format_](source, out)
