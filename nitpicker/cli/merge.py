"""``nitpicker merge``: the shard archives of a distributed crawl into one archive."""

from __future__ import annotations

import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive.merge import merge_shards
from nitpicker.cli.output import fail

__all__ = ["app", "merge"]

app = typer.Typer()


@app.command()
def merge(
    shards: Annotated[list[Path], typer.Argument(help="The shard archives (one per worker).", show_default=False)],
    output: Annotated[str, typer.Option("--output", "-o", help="The merged archive (never overwritten; .nitpicker is appended), or a directory to write it into under the name a crawl would give it.", show_default=False)],
    keep_first: Annotated[bool, typer.Option("--keep-first", help="A page recorded in two shards: keep the first shard's copy (each is listed) instead of refusing.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Merge the shards of a distributed crawl (--frontier redis://…) into one archive.

    Pages are keyed by URL, ids remapped; anchors, redirects, images, resources, runs, trap
    events, snapshots and analysis are carried over. Shards of different crawls are refused;
    a page recorded in two shards is an error naming it (unless --keep-first).

    Example: nitpicker merge shard-*.nitpicker -o example
    """
    path = _output_path(output, shards)
    try:
        result = merge_shards(shards, path, keep_first=keep_first)
    except (OSError, sqlite3.OperationalError) as exc:  # a full disk, a read-only directory
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        fail(f"Cannot write the merged archive {path}: {detail}",
             verbose_detail=traceback.format_exc() if verbose else None)
    for url, kept, dropped in result.duplicates:
        print(f"Note: {url} recorded in two shards: kept {kept}, dropped {dropped}",
              file=sys.stderr)
    print(f"{path}: {len(shards)} shard(s), {result.pages} page rows, {result.recorded} "
          "recorded", file=sys.stderr)


def _output_path(output: str, shards: list[Path]) -> Path:
    """The merged archive's path: ``-o FILE`` with ``.nitpicker`` appended, or in the directory
    ``-o`` names (an existing one, or one written with a trailing ``/``) the name a crawl of
    the first shard's first root gets (``example.com-20250101120000000.nitpicker``)."""
    path = Path(output).expanduser()
    if output.endswith(("/", os.sep)) or path.is_dir():
        if not path.is_dir():
            fail(f"Output directory does not exist: {path}. Please create the directory "
                 "before running the command.")
        from nitpicker.crawl.config import default_output_path

        return default_output_path(_first_root(shards), path)
    if path.suffix != ".nitpicker":
        path = path.with_name(path.name + ".nitpicker")
    if not path.parent.is_dir():
        fail(f"Output directory does not exist: {path.parent}. Please create the directory "
             "before running the command.")
    return path


def _first_root(shards: list[Path]) -> str:
    """The first root of the first shard ("" when it cannot be read: the merge names why)."""
    from nitpicker.query import ArchiveOpenError, crawl_info, open_archive

    if not shards:
        return ""
    try:
        conn = open_archive(shards[0])
    except ArchiveOpenError:
        return ""
    try:
        info = crawl_info(conn)
    except (LookupError, ValueError, TypeError, sqlite3.DatabaseError):
        return ""
    finally:
        conn.close()
    return str(info.roots[0]) if info.roots else info.base_url
