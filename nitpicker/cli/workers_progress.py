"""The progress line of ``nitpicker crawl --workers N``: the workers' counters summed (rich)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from nitpicker.cli.progress import lanes

if TYPE_CHECKING:
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.session import CrawlCounters

__all__ = ["WorkersProgress"]


class WorkersProgress:
    """One line for all the workers: done, queued, errors, URLs per second."""

    def __init__(self, config: CrawlConfig, workers: int) -> None:
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[lanes]} · queued {task.fields[queued]}"
                       " · errors {task.fields[errors]}"
                       " · {task.fields[rate]:.1f} URLs/s · " f"{workers} workers"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task(  # the URL is printed as is, never read as markup
            escape(config.base_url), total=None, queued=0, errors=0, rate=0.0,
            lanes="site 0/0 · external 0/0",
        )
        self._started = time.monotonic()

    def start(self) -> None:
        self._started = time.monotonic()
        self.progress.start()

    def update(self, counters: CrawlCounters, queued: int, queued_external: int = 0) -> None:
        """The workers' counters summed; ``queued`` URLs not done in the frontier, of which
        ``queued_external`` are out-of-scope checks."""
        elapsed = max(time.monotonic() - self._started, 1e-6)
        self.progress.update(
            self.task,
            completed=counters.done,
            total=counters.done + queued,
            queued=queued,
            lanes=lanes(counters, queued - queued_external, queued_external),
            errors=counters.internal_errors + counters.external_errors,
            rate=counters.done / elapsed,
        )

    def note(self, line: str) -> None:
        """A line printed above the progress line."""
        self.progress.console.print(escape(line))

    def stop(self) -> None:
        self.progress.stop()
