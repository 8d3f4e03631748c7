"""What ``nitpicker crawl`` checks around a run: the list file and the archive before it,
the summary and the exit code after it (shared with ``pipeline``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nitpicker.archive import ArchiveLock, ArchiveLockError, check_archive_file
from nitpicker.archive.writer import ArchiveError
from nitpicker.cli.output import fail, print_summary
from nitpicker.crawl.config import ConfigError
from nitpicker.query import ArchiveOpenError
from nitpicker.render.chromium import BrowserMissingError, require_chromium
from nitpicker.url_file import UrlFileError, read_url_lines

if TYPE_CHECKING:
    from nitpicker.cli.runner import CrawlResult
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.session import CrawlCounters

__all__ = ["INPUT_ERRORS", "check_ready", "check_writable", "crawl_outcome", "exit_code",
           "read_list_file"]

INPUT_ERRORS = (ConfigError, ArchiveError, ArchiveOpenError, ArchiveLockError,
                BrowserMissingError)
"""What a crawl's bad input raises before anything is written: one ``Error:`` line each."""


def read_list_file(path: Path) -> list[str]:
    """URLs of a list file (UTF-8): one a line; blank lines and ``#`` comments are ignored;
    read within the bounds of :mod:`nitpicker.url_file`."""
    try:
        return [entry for _, entry in read_url_lines(path, "list file")]
    except UrlFileError as exc:
        raise ConfigError(str(exc)) from exc


def exit_code(counters: CrawlCounters, *, strict: bool, failed: bool = False) -> int:
    """0 clean; 1 a failed run or an in-scope fetch error; 2 only out-of-scope errors
    (1 with ``--strict``)."""
    if failed or counters.internal_errors:
        return 1
    if counters.external_errors:
        return 1 if strict else 2
    return 0


def check_ready(config: CrawlConfig) -> None:
    """The archive can be written and, for a rendering crawl, Chromium is there."""
    check_writable(config)
    if config.render:
        require_chromium()


def crawl_outcome(config: CrawlConfig, result: CrawlResult, *, verbose: bool,
                  silent: bool) -> int:
    """After a new crawl or a resume: the summary, and the exit code (:func:`exit_code`).

    A crawl that could not run or a failed run is one ``Error:`` line and exit 1 (raised).
    """
    if result.failure is not None:
        fail(result.failure, verbose_detail=result.traceback if verbose else None)
    if not silent:
        print_summary(Path(config.output), result)
    if result.run_failure is not None:
        fail(result.run_failure.message)
    return exit_code(result.counters, strict=config.strict)


def check_writable(config: CrawlConfig) -> None:
    """Fail before crawling when the archive cannot be written (exists, held, not an archive)."""
    path = Path(config.output)
    if config.resume:
        check_archive_file(path)
    elif path.exists():
        raise ConfigError(
            f"Output file already exists: {path} (use --resume to continue it, "
            "or choose another --output)"
        )
    lock = ArchiveLock(path)
    holder = lock.live_holder()
    if holder is not None:
        raise ArchiveLockError(lock.path, holder)
