"""What ``nitpicker export`` and ``nitpicker diff --format sarif|junit|markdown|github``
share: the checks of ``-o`` and ``--suppressions`` made before anything is read, and the
export written to stdout or to a file replaced only once complete."""

from __future__ import annotations

import os
import sys
import traceback
from typing import TYPE_CHECKING

from nitpicker.ci.export import write_export
from nitpicker.ci.source import UncheckedArchiveError, open_source
from nitpicker.ci.suppressions import SuppressionsError, find_suppressions
from nitpicker.cli.output import fail, replaced_text_file
from nitpicker.query.connection import ArchiveOpenError

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.ci.suppressions import Suppressions
    from nitpicker.query.diff import UrlMap

__all__ = ["check_output", "export_findings", "load_suppressions"]


def check_output(output: Path | None, archives: list[Path], what: str = "the archive") -> None:
    """``ValueError`` for an ``-o`` that cannot be written or would overwrite an archive
    (``what``: how the message names it)."""
    if output is None:
        return
    if not output.parent.is_dir():
        raise ValueError(f"Output directory does not exist: {output.parent}")
    if output.is_dir():
        raise ValueError(f"Output is a directory: {output}")
    if any(output.resolve() == archive.resolve() for archive in archives):
        raise ValueError(f"Output would overwrite {what}: {output}")


def load_suppressions(path: Path | None) -> Suppressions | None:
    """``--suppressions FILE``, else ``.nitpicker-baseline.json`` when there is one; a bad
    file is one ``Error:`` line naming its line."""
    try:
        return find_suppressions(path)
    except SuppressionsError as exc:
        fail(str(exc))


def export_findings(format_: str, archive: Path, output: Path | None, *,
                    suppressions: Suppressions | None, old: Path | None = None,
                    url_map: UrlMap | None = None, verbose: bool = False) -> None:
    """Write ``archive``'s findings in ``format_`` (compared with ``old``'s when given) to
    ``output`` (stdout: ``None``)."""
    detail = traceback.format_exc if verbose else (lambda: None)
    try:
        with open_source(archive, suppressions, old=old, url_map=url_map) as source:
            if output is None:
                write_export(format_, source, sys.stdout)
                sys.stdout.flush()
            else:
                with replaced_text_file(output) as handle:
                    write_export(format_, source, handle)
    except (ArchiveOpenError, UncheckedArchiveError) as exc:
        fail(str(exc), verbose_detail=detail())
    except BrokenPipeError:  # stdout closed early (| head): the rest is not wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as exc:
        fail(f"Cannot write {output}: {exc.strerror}", verbose_detail=detail())
