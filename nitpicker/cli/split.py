"""``nitpicker split``: the part of an archive within some scopes, as a new archive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive.split import split_archive
from nitpicker.cli.output import archive_output, outside_note

__all__ = ["app", "split"]

app = typer.Typer()


@app.command()
def split(
    archive: Annotated[Path, typer.Argument(help="The archive to take a part of.", show_default=False)],
    scopes: Annotated[list[str], typer.Argument(help="The scopes: URLs read as crawl roots (https://example.com/blog/ covers what lies under it).", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The new archive (never overwritten; .nitpicker is appended).", show_default=False)],
) -> None:
    """Write the part of an archive within one or more scopes to a new archive.

    Pages under the scopes keep everything they had; a page outside that they link to becomes
    an external row, as in a crawl of the scopes; the rest is left out. Nothing is fetched.

    Example: nitpicker split site.nitpicker https://example.com/blog/ -o blog
    """
    output = archive_output(output)
    result = split_archive(archive, scopes, output)
    if result.outside:
        print(outside_note(result.outside, output, result.append_root), file=sys.stderr)
    print(f"{output}: {len(result.roots)} scope(s), {result.kept} page rows kept, "
          f"{result.external} external rows for the links leaving them", file=sys.stderr)
