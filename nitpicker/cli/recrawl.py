"""``nitpicker recrawl FILE URL…``: fetch again URLs an archive already has, updating their
rows in place, and crawl what they newly link to (:mod:`nitpicker.crawl.recrawl`).

The run is the archive's crawl resumed with these URLs queued again: its options are the
archive's (:func:`nitpicker.crawl.config_builder.recrawl_config`), only the runtime options
and the secrets it does not keep are given (:data:`~nitpicker.cli.crawl_flags.RECRAWL_OPTIONS`,
rows of the crawl's flag table). The crawler is imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nitpicker.archive import check_archive_file
from nitpicker.cli.crawl_flags import RecrawlFlags, given_options
from nitpicker.cli.crawl_ready import INPUT_ERRORS, check_ready, crawl_outcome, read_list_file
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail
from nitpicker.crawl.config_builder import recrawl_config

__all__ = ["app", "recrawl"]

app = typer.Typer()


@app.command()
@with_bundles
def recrawl(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", show_default=False,
                                         help="The .nitpicker archive to update.")],
    flags: RecrawlFlags,
    urls: Annotated[list[str] | None, typer.Argument(
        metavar="[URL]...", show_default=False,
        help="URLs of the archive to fetch again (a root crawled with credentials: a URL under "
             "it, written with them).")] = None,
    list_file: Annotated[Path | None, typer.Option(
        "--list-file", show_default=False,
        help="More URLs to fetch again, from this file, one a line (# comments).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose",
                                          help="Log every request; show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent",
                                         help="No progress display or summary.")] = False,
) -> None:
    """Fetch again URLs the archive already has, and crawl what they newly link to.

    Each URL is recorded over its own row (status, metadata, links, snapshot: same id), even
    when the pages listed link only to each other; the links the archive did not know are
    crawled within the archive's scope, as its crawl would have. The run is the archive's
    crawl with its options (only --parallels, --interval, --retry, --max-pages,
    --max-duration, --max-archive-mb, --strict are this run's; its --header values are given
    again), recorded in its run log as a recrawl. Refused: a URL the archive does not have, an
    archive whose crawl cannot be reproduced or has URLs not crawled yet.

    Example: nitpicker recrawl site.nitpicker https://example.com/news/ https://example.com/
    """
    options = given_options(ctx)
    try:
        listed = list(urls or [])
        if list_file is not None:
            listed += read_list_file(list_file)
        path = file.expanduser().resolve()
        check_archive_file(path)
        config = recrawl_config(path, listed, options)
        _check_plan(path, config.recrawl)
        check_ready(config)
    except (*INPUT_ERRORS, ValueError) as exc:
        fail(str(exc))
    from nitpicker.cli.runner import run_crawl

    result = run_crawl(config, verbose=verbose, silent=silent)
    raise typer.Exit(crawl_outcome(config, result, verbose=verbose, silent=silent))


def _check_plan(path: Path, urls: tuple[str, ...]) -> None:
    """The URLs are the archive's, and it may be recrawled: ``ConfigError`` otherwise."""
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.recrawl import check_recrawl, recrawl_plan
    from nitpicker.query import crawl_info, open_archive

    conn = open_archive(path)
    try:
        plan = recrawl_plan(conn, urls)
        stored = CrawlConfig.from_json(crawl_info(conn).config_json, output=str(path))
    finally:
        conn.close()
    check_recrawl(plan, stored, str(path))
