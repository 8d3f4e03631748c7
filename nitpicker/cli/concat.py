"""``nitpicker concat``: the archives of different crawls into one archive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive.concat import concat_archives
from nitpicker.cli.output import archive_output, outside_note

__all__ = ["app", "concat"]

app = typer.Typer()


@app.command()
def concat(
    archives: Annotated[list[Path], typer.Argument(help="The archives (two or more), of any crawls.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The new archive (never overwritten; .nitpicker is appended).", show_default=False)],
) -> None:
    """Concatenate the archives of different crawls (sections, sites, dates) into one archive.

    Roots are the union of theirs; one row per URL: a page recorded in full wins over one
    recorded metadata-only, then the newer observation. Runs, analysis and child rows are
    kept. Nothing is fetched. (Shards of one distributed crawl: nitpicker merge.)

    Example: nitpicker concat blog.nitpicker docs.nitpicker -o site
    """
    output = archive_output(output)
    result = concat_archives(archives, output)
    if result.outside:
        print(outside_note(result.outside, output, result.append_root), file=sys.stderr)
    print(f"{output}: {len(archives)} archive(s), {len(result.roots)} root(s), {result.pages} "
          f"page rows, {result.recorded} recorded, {result.newer_kept} recorded by more than "
          "one (the fuller or newer kept)", file=sys.stderr)
