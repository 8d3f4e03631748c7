"""``--header-file FILE``: request headers from a file, one ``Name: value`` a line.

The file is UTF-8 text; blank lines and lines starting with ``#`` are ignored. Each line is a
``--header`` (:func:`nitpicker.policy.request_headers.parse_header`): sent with in-scope
requests only, the archive keeping its name, never its value. The file is read when the
crawl's config is built (:mod:`nitpicker.crawl.config_builder`), for a new crawl and for a
``--resume``, ``--append`` or ``--retry-failed``, which need the headers given again; its
headers come after those of ``--header``. A line that is not a header is one ``Error:`` line
naming the file and the line, never the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.crawl.config import ConfigError
from nitpicker.policy.request_headers import HeaderError, parse_header

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["read_header_file"]


def read_header_file(path: Path) -> tuple[str, ...]:
    """The header lines of ``path``, each checked; ``ConfigError`` naming the file (and the
    line of one that is not a header)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read header file: {path} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Header file is not UTF-8 text: {path} (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start})"
        ) from exc
    headers: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            parse_header(line, label="header")
        except HeaderError as exc:
            raise ConfigError(f"Header file {path}, line {number}: {exc}") from exc
        headers.append(line)
    if not headers:
        raise ConfigError(f"No headers found in header file: {path}")
    return tuple(headers)
