"""``nitpicker concat``: the archives of different crawls into one archive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive.concat import concat_archives
from nitpicker.archive.transfer import TransferError
from nitpicker.cli.output import fail

__all__ = ["app", "concat", "output_path", "outside_note"]

app = typer.Typer()

_SHOWN_OUTSIDE = 3


def output_path(output: Path) -> Path:
    """``-o`` with ``.nitpicker`` appended when it lacks it (as ``crawl`` and ``merge`` do)."""
    return output if output.suffix == ".nitpicker" else output.with_name(output.name + ".nitpicker")


def outside_note(urls: list[str], output: Path, root: str) -> str:
    """The ``Note:`` on URLs under the new roots that no archive fetched in full."""
    shown = ", ".join(urls[:_SHOWN_OUTSIDE])
    more = len(urls) - _SHOWN_OUTSIDE
    return (f"Note: {len(urls)} URL(s) under the roots were recorded external (metadata only): "
            f"{shown}" + (f" and {more} more" if more > 0 else "")
            + f"; fetch them in full with: nitpicker crawl --append {output} {root}")


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
    output = output_path(output)
    try:
        result = concat_archives(archives, output)
    except TransferError as exc:
        fail(str(exc))
    if result.outside:
        print(outside_note(result.outside, output, result.append_root), file=sys.stderr)
    print(f"{output}: {len(archives)} archive(s), {len(result.roots)} root(s), {result.pages} "
          f"page rows, {result.recorded} recorded, {result.newer_kept} recorded by more than "
          "one (the fuller or newer kept)", file=sys.stderr)
