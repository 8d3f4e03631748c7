"""WorkerRole: what makes a crawler process one of ``nitpicker crawl --workers N``.

The coordinator (:mod:`nitpicker.cli.workers`) gives each worker process its role: its index
among the N, its owner token for the frontier's leases and their length, the shared page budget
of ``--max-pages`` (one counter in shared memory for all the workers) and the file of the shared
trap-cap counters. The crawl session (:class:`~nitpicker.crawl.session.CrawlSession`) holds it;
``None`` there is the ordinary single-process crawl.

Politeness is split, not coordinated per request: ``--parallels P`` becomes P // N concurrent
requests per worker (the remainder to the first ones), so the host never has more than P in
flight; ``--interval I`` becomes N × I per worker, so the host sees on average one request
every I ms (two workers' requests may come closer than I: the interval holds as a rate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DEFAULT_LEASE_SECONDS", "LeaseBudget", "WorkerRole"]

DEFAULT_LEASE_SECONDS = 60.0
"""How long a lease holds without renewal; a killed worker's rows come back after it."""


class LeaseBudget:
    """The URLs all workers together may still lease (``--max-pages``): a shared counter.

    ``value`` is a ``multiprocessing.Value('q')`` made by the coordinator: the URLs leased so
    far in this run, by every worker.
    """

    def __init__(self, limit: int, value: Any) -> None:
        self.limit = limit
        self._value = value

    def reserve(self, wanted: int) -> int:
        """Take up to ``wanted`` URLs of the budget; how many were granted."""
        with self._value.get_lock():
            granted = max(min(wanted, self.limit - int(self._value.value)), 0)
            self._value.value += granted
        return granted

    def give_back(self, unused: int) -> None:
        """Return URLs reserved but not leased (the frontier had fewer)."""
        if unused > 0:
            with self._value.get_lock():
                self._value.value -= unused

    @property
    def left(self) -> int:
        return max(self.limit - int(self._value.value), 0)


@dataclass(frozen=True)
class WorkerRole:
    """One worker's place in a ``--workers N`` crawl."""

    index: int
    """0 … N-1; worker 0 also reads the sitemaps."""
    count: int
    owner: str
    """The token its frontier leases carry."""
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    budget: LeaseBudget | None = None
    """The shared ``--max-pages`` budget; ``None`` when unlimited."""
    trap_counts: Path | None = None
    """The shared trap-cap counters' file (``--dedupe-cap``); ``None`` when the cap is off."""

    def parallels(self, total: int) -> int:
        """This worker's share of ``--parallels`` (the shares add up to ``total``)."""
        return total // self.count + (1 if self.index < total % self.count else 0)

    def interval_ms(self, total: int) -> int:
        """This worker's delay between requests, so that all of them keep ``total`` on average."""
        return total * self.count
