"""How a run ended: the closed vocabulary of run statuses and error codes.

Every crawl or resume is a row in the archive's ``runs`` table. ``status`` is one of
``running``, ``finished``, ``stopped`` (ended on purpose or by a signal; resumable) and
``failed``. A run that did not finish carries an ``error_code`` from :data:`ERROR_CODES`,
an ``error_detail`` and the ``phase`` it was in, so failures aggregate in plain SQL::

    SELECT error_code, count(*) FROM runs GROUP BY error_code;
"""

from __future__ import annotations

import errno
import sqlite3
from dataclasses import dataclass
from typing import Final

from nitpicker.archive.frontier_port import FrontierUnavailable

__all__ = [
    "ERROR_CODES",
    "PHASES",
    "RunFailure",
    "classify_exception",
    "outcome_of_close",
]

ERROR_CODES: Final[dict[str, str]] = {
    "page_limit": "stopped: --max-pages reached (resumable)",
    "deadline": "stopped: --max-duration reached (resumable)",
    "killed": "stopped by SIGINT/SIGTERM (resumable)",
    "timeout": "stopped by Scrapy's CLOSESPIDER_TIMEOUT",
    "memory": "failed: out of memory (MemoryError, or Scrapy's MEMUSAGE_LIMIT_MB)",
    "disk_full": "failed: the disk (or the archive's size budget) is full",
    "db_error": "failed: the archive could not be written",
    "browser_crash": "failed: the browser crashed and could not be relaunched",
    "network": "failed: no URL could be fetched at all (an append: none of its new roots)",
    "outage": "failed: a network outage outlasted NITPICKER_OUTAGE_GIVE_UP (resumable)",
    "too_large": "failed: every URL fetched was larger than the body size limit (DOWNLOAD_MAXSIZE)",
    "instance_lost": "failed: the process died without closing its run (found later)",
    "workers_lost": "failed: the worker processes of --workers N died with URLs left (resumable)",
    "unknown": "failed: any other error",
}
"""Every ``runs.error_code`` value, with what it means."""

PHASES: Final = ("open", "crawl", "close")
"""``runs.phase``: where a failed run was."""

_STOP_REASONS: Final = {
    "max_pages": "page_limit",
    "max_duration": "deadline",
    "shutdown": "killed",
    "cancelled": "killed",
    "closespider_timeout": "timeout",
    "memusage_exceeded": "memory",
}


@dataclass(frozen=True)
class RunFailure:
    """Why a run failed."""

    code: str
    detail: str
    phase: str = "crawl"

    def __post_init__(self) -> None:
        assert self.code in ERROR_CODES, self.code
        assert self.phase in PHASES, self.phase

    @property
    def message(self) -> str:
        """One line for the user: ``run failed (disk_full, close phase): <detail>``."""
        return f"run failed ({self.code}, {self.phase} phase): {self.detail}"


def classify_exception(exc: BaseException, phase: str = "crawl") -> RunFailure:
    """The failure an exception means (disk full, database error, memory, …)."""
    detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(exc, MemoryError):
        return RunFailure("memory", detail, phase)
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        if "full" in text:
            return RunFailure("disk_full", detail, phase)
        return RunFailure("db_error", detail, phase)
    if isinstance(exc, FrontierUnavailable):
        return RunFailure("network", detail, phase)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return RunFailure("disk_full", detail, phase)
    return RunFailure("unknown", detail, phase)


def outcome_of_close(reason: str, *, pending: int, failure: RunFailure | None,
                     fetched: int, fetch_errors: int,
                     too_large: int = 0) -> tuple[str, str | None, str | None]:
    """``(status, error_code, error_detail)`` of a run that closed with Scrapy ``reason``.

    ``too_large``: fetch errors that were bodies larger than ``DOWNLOAD_MAXSIZE`` (the server
    answered: no network failure)."""
    if failure is not None:
        return "failed", failure.code, failure.detail
    if reason == "finished" and pending == 0:
        if fetched and fetched == fetch_errors:
            if too_large == fetch_errors:
                return "failed", "too_large", (f"all {fetched} URL(s) were larger than the "
                                               "download max size (DOWNLOAD_MAXSIZE)")
            larger = f" ({too_large} of them too large)" if too_large else ""
            return "failed", "network", f"all {fetched} URL(s) failed to fetch{larger}"
        return "finished", None, None
    code = _STOP_REASONS.get(reason)
    if code is not None:
        return "stopped", code, f"Scrapy close reason: {reason}"
    if reason == "finished":
        return "stopped", "unknown", f"closed with {pending} URL(s) left in the frontier"
    return "failed", "unknown", f"Scrapy close reason: {reason}"
