"""A file of URLs for ``report --urls``: one a line (UTF-8), blank lines and ``#`` comments
ignored, read as ``crawl --list-file`` reads them (the same bounded reader); and the warning
for those an archive lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.url_file import read_url_lines

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["SHOWN", "missing_warning", "read_url_file"]

SHOWN: Final = 3
"""The URLs a warning names; it counts the others."""


def read_url_file(path: Path) -> list[str]:
    """The URLs of the file, in order, read by the one bounded reader of URL files
    (:func:`nitpicker.url_file.read_url_lines`); ``ValueError`` (one line naming the file)
    when it cannot be read, is not UTF-8 text, passes a limit or lists none."""
    return [url for _, url in read_url_lines(path, "the URL file")]


def missing_warning(path: Path, listed: int, missing: Sequence[str]) -> str:
    """``Warning: 2 of the 5 URLs of FILE are not in the archive: A, B`` (the first
    :data:`SHOWN`, then ``… and N more``)."""
    shown = ", ".join(missing[:SHOWN])
    if len(missing) > SHOWN:
        shown += f", … and {len(missing) - SHOWN} more"
    verb = "is" if len(missing) == 1 else "are"
    return (f"Warning: {len(missing)} of the {listed} URLs of {path} {verb} not in the archive:"
            f" {shown}")
