"""``nitpicker crawl`` over an existing archive: ``--append`` (a backup, the crawl, the
archive restored when it fails) and ``--retry-failed`` (its plan; nothing to retry is exit 0).
The flags either is not combined with are refused before, by the modes table
(:mod:`nitpicker.crawl.modes`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from nitpicker.archive import ArchiveLock, check_archive_file
from nitpicker.cli.crawl_compare import check_baseline
from nitpicker.cli.crawl_flags import build_config
from nitpicker.cli.crawl_ready import INPUT_ERRORS, check_ready, exit_code
from nitpicker.cli.output import fail, print_summary
from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.crawl.modes import mode

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.cli.crawl_flags import CrawlFlags
    from nitpicker.crawl.config_builder import GivenOptions

__all__ = ["crawl_append", "retry_failed"]


def crawl_append(path: Path, options: GivenOptions, flags: CrawlFlags, *, verbose: bool,
                 silent: bool, baseline: Path | None = None) -> int:
    """``--append FILE URL…``: crawl on with more roots; the archive is restored on failure.

    The archive's lock is taken before the backup and held until the backup is restored or
    discarded: an append that finds the archive held changes nothing.
    """
    from nitpicker.cli.runner import run_crawl
    from nitpicker.crawl.append import ArchiveBackup

    try:
        path = path.expanduser().resolve()
        check_archive_file(path)
        if baseline is not None:
            check_baseline(baseline, path)
        config = build_config(mode("append"), options, flags, archive=path)
        check_ready(config)
    except (*INPUT_ERRORS, ValueError) as exc:
        fail(str(exc))
    lock = ArchiveLock(path)
    lock.acquire()
    try:
        backup = ArchiveBackup(path, lock)
        try:
            backup.take()
            result = run_crawl(config, verbose=verbose, silent=silent, lock=lock)
        except KeyboardInterrupt:  # before the crawl started: the archive is as it was
            backup.discard()
            raise
        run_failure = result.run_failure
        problem = result.failure or (
            f"{run_failure.code} ({run_failure.phase} phase): {run_failure.detail}"
            if run_failure else None
        )
        if problem is not None:
            backup.restore(problem)
            fail(f"append failed, the archive was restored as it was: {problem}")
        backup.discard()
    finally:
        lock.release()
    if not silent:
        print_summary(path, result)
    return exit_code(result.counters, strict=config.strict)


def retry_failed(path: Path, options: GivenOptions, flags: CrawlFlags, *,
                 silent: bool) -> CrawlConfig:
    """``--retry-failed FILE``: the run's config; exit 0 at once when nothing failed."""
    from nitpicker.crawl.retry import retry_plan
    from nitpicker.query import open_archive

    path = path.expanduser().resolve()
    check_archive_file(path)
    # a flag that would change the crawl: refused
    config = build_config(mode("retry-failed"), options, flags, archive=path)
    conn = open_archive(path)
    try:
        plan = retry_plan(conn)
    finally:
        conn.close()
    if not plan.retry:
        if not silent:
            left = (f" ({len(plan.capped)} failed URL(s) under capped traps are left as they are)"
                    if plan.capped else "")
            print(f"Nothing to retry: {path} has no failed URLs{left}")
        raise typer.Exit(0)
    if plan.pending:
        raise ConfigError(f"{path} has {plan.pending} URL(s) not crawled yet: finish its crawl "
                          "with --resume first, then --retry-failed")
    return config
