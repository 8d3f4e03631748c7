"""The ``query`` sub-commands about the pages' content: ``grep PATTERN`` (search the stored
HTML snapshots), ``technologies`` and ``technology-pages`` (what ``nitpicker technologies``
detected).

Sub-commands of :mod:`nitpicker.cli.query` (which adds them to its group), in a module of
their own; ``grep`` has what the others do not: a positional PATTERN, and a progress bar on a
terminal while it reads every snapshot (:func:`nitpicker.query.grep.grep_snapshots`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from nitpicker.cli.output import fail
from nitpicker.cli.query_answer import Limit, Offset, Pretty, answer
from nitpicker.query.grep import GREP_SCOPES, count_snapshots, grep_snapshots
from nitpicker.query.technologies import get_technologies, list_technology_pages

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from nitpicker.query.grep import GrepResult

__all__ = ["grep", "technologies", "technology_pages"]


def grep(
    ctx: typer.Context,
    pattern: Annotated[str, typer.Argument(metavar="PATTERN", help="Text to find, or /a regular expression/ (Python syntax).", show_default=False)],
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i", help="Upper and lower case alike.")] = False,
    in_: Annotated[str, typer.Option("--in", help=f"What to search: {', '.join(GREP_SCOPES)} (the text a reader sees: no tags, scripts or styles).")] = "html",
    url_pattern: Annotated[str | None, typer.Option("--url-pattern", help="Only pages whose URL matches this SQL LIKE pattern (% any text, _ one character).", show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-l", help="Most matches to return (default 100).", show_default=False)] = None,
    offset: Annotated[int | None, typer.Option("--offset", "-o", help="Matches to skip (default 0).", show_default=False)] = None,
    pretty: Pretty = False,
) -> None:
    """Search the stored HTML snapshots: each match with its page, line, column and a snippet.

    Every snapshot is read, one at a time (a progress bar on a terminal); total counts every
    match, and pages_searched / pages_matched the snapshots.

    Example: nitpicker query site.nitpicker grep '/gtag\\(.UA-/' --url-pattern '%/blog/%'
    """
    if in_ not in GREP_SCOPES:
        fail(f"Invalid --in: {in_!r}. Must be one of: {', '.join(GREP_SCOPES)}")
    answer(ctx, _search, pretty=pretty, pattern=pattern, ignore_case=ignore_case, scope=in_,
           url_pattern=url_pattern, limit=limit, offset=offset)


def technologies(
    ctx: typer.Context,
    category: Annotated[str | None, typer.Option("--category", help="This category of the data set only (CMS, Analytics, JavaScript libraries, Web servers, CDN, …; any case).", show_default=False)] = None,
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The technologies the pages use, most pages first, with their categories and versions
    (run: nitpicker technologies FILE; run is null until then).

    Example: nitpicker query site.nitpicker technologies --category CMS --pretty
    """
    answer(ctx, get_technologies, pretty=pretty, category=category, limit=limit, offset=offset)


def technology_pages(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", help="The technology (WordPress, jQuery; any case).", show_default=False)],
    limit: Limit = None,
    offset: Offset = None,
    pretty: Pretty = False,
) -> None:
    """The pages one technology was found on, with its version and what gave it away.

    Example: nitpicker query site.nitpicker technology-pages --name jQuery
    """
    answer(ctx, list_technology_pages, pretty=pretty, name=name, limit=limit, offset=offset)


def _search(conn: sqlite3.Connection, pattern: str, *, ignore_case: bool, scope: str,
            url_pattern: str | None = None, limit: int = 100, offset: int = 0) -> GrepResult:
    """The search, with a progress bar on stderr when it is a terminal: snapshots read, of
    how many, at what rate."""
    import time

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    def run(on_progress: Callable[[int], None] | None = None) -> GrepResult:
        return grep_snapshots(conn, pattern, ignore_case=ignore_case, scope=scope,
                              url_pattern=url_pattern, limit=limit, offset=offset,
                              on_progress=on_progress)

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        return run()
    total = count_snapshots(conn, url_pattern)
    with Progress(TextColumn("grep"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("snapshots · {task.fields[rate]}/s"), console=console,
                  transient=True) as progress:
        task = progress.add_task("grep", total=total, rate=0)
        started = time.monotonic()

        def advance(done: int) -> None:
            elapsed = time.monotonic() - started
            progress.update(task, completed=done, rate=round(done / elapsed) if elapsed else 0)

        return run(advance)
