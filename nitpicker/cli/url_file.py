"""A file of URLs for ``report --urls``: one a line (UTF-8), blank lines and ``#`` comments
ignored, as ``crawl --list-file`` reads them; and the warning for those an archive lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["SHOWN", "missing_warning", "read_url_file"]

SHOWN: Final = 3
"""The URLs a warning names; it counts the others."""


def read_url_file(path: Path) -> list[str]:
    """The URLs of the file, in order; ``ValueError`` (one line naming the file) when it cannot
    be read, is not UTF-8 text or lists none."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"Cannot read the URL file: {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"URL file is not UTF-8 text: {path} (byte"
                         f" 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    urls = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    urls = [url for url in urls if url]
    if not urls:
        raise ValueError(f"No URLs found in the URL file: {path}")
    return urls


def missing_warning(path: Path, listed: int, missing: Sequence[str]) -> str:
    """``Warning: 2 of the 5 URLs of FILE are not in the archive: A, B`` (the first
    :data:`SHOWN`, then ``… and N more``)."""
    shown = ", ".join(missing[:SHOWN])
    if len(missing) > SHOWN:
        shown += f", … and {len(missing) - SHOWN} more"
    verb = "is" if len(missing) == 1 else "are"
    return (f"Warning: {len(missing)} of the {listed} URLs of {path} {verb} not in the archive:"
            f" {shown}")
