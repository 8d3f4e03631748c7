"""``nitpicker merge``: the shard archives of a distributed crawl into one archive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive.merge import MergeError, merge_shards
from nitpicker.cli.output import fail

__all__ = ["app", "merge"]

app = typer.Typer()


@app.command()
def merge(
    shards: Annotated[list[Path], typer.Argument(help="The shard archives (one per worker).", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The merged archive (never overwritten; .nitpicker is appended).", show_default=False)],
    keep_first: Annotated[bool, typer.Option("--keep-first", help="A page recorded in two shards: keep the first shard's copy (each is listed) instead of refusing.")] = False,
) -> None:
    """Merge the shards of a distributed crawl (--frontier redis://…) into one archive.

    Pages are keyed by URL, ids remapped; anchors, redirects, images, resources, runs, trap
    events, snapshots and analysis are carried over. Shards of different crawls are refused;
    a page recorded in two shards is an error naming it (unless --keep-first).

    Example: nitpicker merge shard-*.nitpicker -o example
    """
    if output.suffix != ".nitpicker":
        output = output.with_name(output.name + ".nitpicker")
    try:
        result = merge_shards(shards, output, keep_first=keep_first)
    except MergeError as exc:
        fail(str(exc))
    for url, kept, dropped in result.duplicates:
        print(f"Note: {url} recorded in two shards: kept {kept}, dropped {dropped}",
              file=sys.stderr)
    print(f"{output}: {len(shards)} shard(s), {result.pages} page rows, {result.recorded} "
          "recorded", file=sys.stderr)
