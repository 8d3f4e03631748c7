"""The frontier's interface: what the scheduler, the redirect middleware, the pipeline and the
page recorder ask of the store that holds the crawl's queue of URLs.

Three stores implement it: :class:`~nitpicker.archive.frontier_store.FrontierStore` (the
archive's ``frontier`` table, one process),
:class:`~nitpicker.archive.shared_frontier.SharedFrontierStore` (the same table leased with an
owner and an expiry by the processes of ``crawl --workers N``) and
:class:`~nitpicker.crawl.redis_frontier.RedisFrontier` (a Redis database shared by the workers
of a distributed crawl). The names and signatures are FrontierStore's: a store is picked once,
when the crawl session opens (:meth:`nitpicker.archive.writer.ArchiveWriter.make_frontier`, or
:meth:`~nitpicker.archive.writer.ArchiveWriter.use_frontier` for Redis), and nothing on the hot
path asks which one it is.

Entries are ``(key, url, depth, mode)``: the protocol-agnostic frontier key
(:func:`nitpicker.policy.urls.frontier_key`), the normalised URL, its depth and its
:class:`~nitpicker.policy.follow.FollowMode`. A leased entry is ``(frontier id, url, depth, mode)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FrontierPort", "FrontierUnavailable", "LeasedEntry"]

LeasedEntry = tuple[int, str, int, int]
"""(frontier id, url, depth, mode)"""


class FrontierUnavailable(ConnectionError):
    """The shared frontier cannot be reached (or answered with an error): the run fails with
    ``error_code = network``; the entries it leased go back to pending when their lease
    expires."""


@runtime_checkable
class FrontierPort(Protocol):
    """The crawl's queue of URLs: add (deduplicated), lease, acknowledge, release, count."""

    @property
    def checks_leases(self) -> bool:
        """Whether a page is recorded only while this writer still :meth:`holds` its entry
        (``--workers N``: several writers lease one archive's table); a store whose leases
        all belong to one writer, or that settles duplicates later (Redis: ``merge``), says
        ``False``."""

    def holds(self, frontier_id: int) -> bool:
        """Whether this writer still holds the entry's lease (asked only when
        :attr:`checks_leases`, in the transaction that records its page)."""

    @property
    def pending(self) -> int:
        """Entries to wait for: pending ones (a shared store: and those other workers hold).
        Read per request: kept current without a round trip each time."""

    @property
    def pending_site(self) -> int:
        """Of :attr:`pending`, the entries of the site's lane (``FollowMode.METADATA`` is the
        checks' lane, leased after it): the scheduler leases again when one waits while the
        next entry it holds is a check."""

    @property
    def pending_checks(self) -> int:
        """Of :attr:`pending`, the entries only checked (the progress display's external
        queue)."""

    def forget(self) -> None:
        """The archive's open batch was rolled back: what was sent in it may be gone."""

    def add(self, entries: Iterable[tuple[str, str, int, int]]) -> int:
        """Queue (key, url, depth, mode) entries not yet known; how many were new (a shared
        store may answer 0 and queue them when the archive's batch commits)."""

    def lease(self, limit: int) -> list[LeasedEntry]:
        """Take up to ``limit`` pending entries: the site's first (``FollowMode.FULL``,
        predicted), then the checks (``FollowMode.METADATA``), each lane shallowest first."""

    def acknowledge(self, frontier_id: int) -> None:
        """The entry's URL is recorded (in the archive's open batch): done."""

    def claim(self, key: str, url: str, depth: int) -> bool:
        """Whether a request redirected to ``url`` may follow it (no other request has it)."""

    def release(self, key: str, *, fetch_again: bool = True) -> None:
        """A claimed entry whose redirect chain failed: pending again, or done."""

    def mark_done(self, key: str) -> None:
        """The entry with this key (pending or leased) is done: recorded as a redirect's hop or
        end."""

    def settle(self, key: str, url: str, depth: int, mode: int) -> bool:
        """A URL answered without a request of its own: whether this worker records it."""

    def drop_prediction(self, frontier_id: int) -> bool:
        """A predicted entry missed: dropped, or queued again as a full crawl (``True``)."""

    def release_leases(self) -> None:
        """Leased entries not fetched (a stopped run) go back to pending."""

    def requeue_leased(self) -> None:
        """Reopening an archive: entries a killed run had leased are pending again."""

    def pending_count(self) -> int:
        """Entries not done yet (pending and leased), counted in the store."""

    def repromote(self, urls: Iterable[str]) -> None:
        """Queue ``urls`` for a full crawl again, at depth 1 (``--append``)."""

    def requeue(self, entries: Iterable[tuple[str, str, int, int]]) -> None:
        """(key, url, depth, mode) entries pending again (``--retry-failed``)."""

    def has_pending_under(self, key_prefix: str) -> bool:
        """Whether an entry not done yet has a key starting with ``key_prefix``."""
