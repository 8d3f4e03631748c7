"""``nitpicker crawl``: crawl a site into a ``.nitpicker`` archive.

Its flags are the rows of :data:`nitpicker.crawl.flags.FLAGS`, made Typer parameters in
:mod:`nitpicker.cli.crawl_flags`; its modes (a fresh crawl, ``--resume``, ``--append``…) the
rows of :data:`nitpicker.crawl.modes.MODES`, which refuse the flags a mode is not combined
with, choose the mode and build its config. This module runs the mode chosen.

The crawler (Scrapy, Twisted, Playwright) is imported inside the command, when it runs: the
other commands, and ``--help``, do not load it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from nitpicker.cli.crawl_compare import (
    baseline_gates,
    check_baseline,
    gate_after_crawl,
    url_lists,
)
from nitpicker.cli.crawl_existing import crawl_append, retry_failed
from nitpicker.cli.crawl_flags import (
    CrawlFlags,
    RunFlags,
    build_config,
    bundle_values,
    given_options,
    new_crawl_config,
)
from nitpicker.cli.crawl_ready import INPUT_ERRORS, check_ready, crawl_outcome, exit_code
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail
from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.crawl.modes import chosen_mode, given_flags, modes_help, refusal, refusal_of
from nitpicker.query import ArchiveOpenError, DiffInputError

__all__ = ["CrawlFlags", "app", "check_ready", "crawl", "crawl_outcome",
           "exit_code", "new_crawl_config"]

app = typer.Typer()

HELP = f"""Crawl a website into one .nitpicker archive (a SQLite file), one of these ways:

{modes_help()}

Example: nitpicker crawl https://example.com/ -o example
"""


@app.command(help=HELP)
@with_bundles
def crawl(ctx: typer.Context, flags: CrawlFlags, run: RunFlags) -> None:
    """Crawl a website into one .nitpicker archive (:data:`HELP`: the help, with the modes)."""
    given = given_flags(bundle_values(flags, run))
    line = refusal(given)
    if line is not None:
        fail(line)
    chosen = chosen_mode(given)
    if chosen.name == "diff":
        url_lists(flags.urls or [])
    options = given_options(ctx)
    if chosen.name in ("frontier", "coordinate"):
        from nitpicker.cli.crawl_shared import crawl_shared

        crawl_shared(chosen, options, flags, run)
    try:
        gates = baseline_gates(run.baseline, run.fail_on, run.suppressions)
    except ValueError as exc:
        fail(str(exc))
    except (ArchiveOpenError, DiffInputError) as exc:
        fail(f"--baseline: {exc}")
    if chosen.name == "append":
        code = crawl_append(run.append, options, flags, verbose=run.verbose, silent=run.silent,
                            baseline=run.baseline)
        raise typer.Exit(gate_after_crawl(gates, run.append, code, silent=run.silent))
    try:
        if chosen.name == "retry-failed":
            config = retry_failed(run.retry_failed, options, flags, silent=run.silent)
        else:
            archive = run.like if chosen.name == "like" else run.resume
            config = build_config(chosen, options, flags, archive=archive, output=run.output)
        check_ready(config)
        if run.baseline is not None:
            check_baseline(run.baseline, Path(config.output))
        workers = _check_workers(run.workers, config, retry_failed=chosen.name == "retry-failed")
    except (*INPUT_ERRORS, ValueError) as exc:
        fail(str(exc))
    if workers > 1:
        from nitpicker.cli.workers import run_workers

        result = run_workers(config, workers, verbose=run.verbose, silent=run.silent)
    else:
        from nitpicker.cli.runner import run_crawl

        result = run_crawl(config, verbose=run.verbose, silent=run.silent)
    code = crawl_outcome(config, result, verbose=run.verbose, silent=run.silent)
    raise typer.Exit(gate_after_crawl(gates, Path(config.output), code, silent=run.silent))


def _check_workers(workers: int, config: CrawlConfig, *, retry_failed: bool) -> int:
    """``--workers N``: at least 1; more than the cores is allowed, with a note; at most one
    worker per ``--parallels`` request (each needs one). Checked before any worker starts."""
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    if workers == 1:
        return 1
    if retry_failed:  # refused by the modes table before; kept for callers that skip it
        raise ConfigError(refusal_of("retry-failed", "workers"))
    from nitpicker.cli.workers import lease_seconds

    lease_seconds()  # a bad NITPICKER_LEASE_SECONDS: one line, before anything starts
    cores = os.cpu_count() or 1
    if workers > cores:
        print(f"Note: --workers {workers} is more than this machine's {cores} CPU core(s); "
              "the workers will share them", file=sys.stderr)
    if workers > config.parallels:
        print(f"Note: --workers {workers} is more than --parallels {config.parallels}; "
              f"running {config.parallels} workers, one request each", file=sys.stderr)
        workers = config.parallels
    return workers
