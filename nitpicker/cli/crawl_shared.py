"""``nitpicker crawl --frontier redis://…``: one worker of a distributed crawl, recording into
its own shard; or, with ``--coordinate``, its coordinator (:mod:`nitpicker.cli.coordinate`).
The flags of a one-archive crawl are refused before, by the modes table
(:mod:`nitpicker.crawl.modes`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from nitpicker.cli.crawl_flags import build_config
from nitpicker.cli.crawl_ready import INPUT_ERRORS, check_ready, crawl_outcome
from nitpicker.cli.output import fail
from nitpicker.crawl.config import ConfigError

if TYPE_CHECKING:
    from nitpicker.cli.crawl_flags import CrawlFlags, RunFlags
    from nitpicker.crawl.config_builder import GivenOptions
    from nitpicker.crawl.modes import Mode

__all__ = ["crawl_shared"]


def crawl_shared(chosen: Mode, options: GivenOptions, flags: CrawlFlags,
                 run: RunFlags) -> NoReturn:
    """The worker, or (the ``coordinate`` mode) the coordinator; exits."""
    if chosen.name == "coordinate":
        _coordinate(chosen, options, flags, run)
    from nitpicker.archive.frontier_port import FrontierUnavailable
    from nitpicker.cli.runner import run_crawl
    from nitpicker.crawl.redis_frontier import (
        connect_frontier,
        crawl_id,
        parse_frontier_url,
        shard_name,
    )

    try:
        config = build_config(chosen, options, flags, output=run.output or shard_name(""))
        check_ready(config)
        settings = parse_frontier_url(run.frontier, crawl_id(config.roots))
    except ValueError as exc:  # ConfigError too
        fail(str(exc) if isinstance(exc, ConfigError) else f"--frontier: {exc}")
    except INPUT_ERRORS as exc:
        fail(str(exc))
    try:
        connect_frontier(settings).close()  # unreachable: one line, before anything is written
    except FrontierUnavailable as exc:
        fail(str(exc))
    result = run_crawl(config, verbose=run.verbose, silent=run.silent,
                       frontier=run.frontier)
    raise typer.Exit(crawl_outcome(config, result, verbose=run.verbose, silent=run.silent))


def _coordinate(chosen: Mode, options: GivenOptions, flags: CrawlFlags,
                run: RunFlags) -> NoReturn:
    from nitpicker.cli.coordinate import coordinate

    try:
        config = build_config(chosen, options, flags)
    except ConfigError as exc:
        fail(str(exc))
    output: str | None = run.output
    merged = None
    if output:
        merged = Path(output if output.endswith(".nitpicker") else output + ".nitpicker")
    coordinate(config, run.frontier, shards=run.merge or [], output=merged,
               silent=run.silent)
    raise typer.Exit(0)
