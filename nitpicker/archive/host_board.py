"""HostBoard: the hosts given up on, told to and learnt from the other workers of one crawl.

Each crawler process has its own host breaker (:mod:`nitpicker.middlewares.host_breaker`).
With ``--workers N`` (the archive's frontier table) or a Redis frontier, a host one worker has
given up on would otherwise cost every other worker its own failures, and a timeout each.
Asking the shared store before each request would put a round trip on every request's path;
instead the board rides on the round trips the worker's frontier makes anyway:

- the breaker *publishes* a host it gives up on (its error and the seconds until its probe),
  and *withdraws* one that answers again; the board keeps them until the frontier's next
  exchange (:meth:`HostBoard.outgoing`), which writes them to the store;
- the same exchange reads the hosts given up on whose probe time is still ahead, the others'
  and this worker's, and hands them to :meth:`HostBoard.learn`; the breaker opens its breaker
  for the hosts it did not know (their URLs recorded untried with the host's error) the next
  time it looks (:attr:`HostBoard.version` changed).

A probe is local: when a learnt host's time is up, each worker that still has URLs of it sends
its own probe (one request a worker, not one a URL). A probe that fails is published again with
a new time, which moves the others' probes back; a host that answers any worker is withdrawn, so
that no worker learns it again, and each other worker finds it well with its own probe.

Which exchanges carry it: :meth:`~nitpicker.archive.shared_frontier.SharedFrontierStore.lease`
(the ``given_up_hosts`` table, migration ``0043_given_up_hosts``), and the Redis frontier's
``FLUSH`` and ``COUNTS`` scripts (the ``P:hosts`` hash, :mod:`nitpicker.crawl.redis_lua`); a
Redis worker that leases a new chunk when neither brought the hosts in the last half second
asks ``COUNTS`` first, since its leases, answered without them, may be all it exchanged while
it was idle. A
crawl of one process has a board that no frontier shares: publishing is then a no-op.

The frontier calls :meth:`outgoing` and :meth:`learn` from whichever thread makes the round trip
(the archive's writer thread, for the Redis frontier's ``FLUSH``); the breaker reads on the
reactor's thread. The board hands over whole snapshots under a lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["GivenUpHost", "HostBoard"]


@dataclass(frozen=True)
class GivenUpHost:
    """A host given up on, as the store holds it."""

    host: str
    """``host:port`` (:func:`~nitpicker.middlewares.host_breaker.host_key`)."""
    error: str
    """The host's last error, as recorded (``"Timeout: …"``)."""
    why: str
    """Why it was given up on (``"after 3 connection failures in a row"``)."""
    seconds: float
    """Seconds from the exchange until its probe may go."""
    until: float = 0.0
    """When that is, on the store's clock (read back from it; only compared: a host published
    again with a later time is learnt again)."""


class HostBoard:
    """The given-up hosts a worker publishes and learns (see the module's doc)."""

    def __init__(self) -> None:
        self.shared = False
        """Whether a shared frontier exchanges this board (set by the frontier)."""
        self.version = 0
        """Bumped when the learnt hosts change: the breaker looks again."""
        self._lock = threading.Lock()
        self._published: dict[str, GivenUpHost | None] = {}
        self._learnt: dict[str, GivenUpHost] = {}

    def publish(self, host: GivenUpHost) -> None:
        """Tell the other workers at the next exchange: ``host`` is given up on."""
        if self.shared:
            with self._lock:
                self._published[host.host] = host

    def withdraw(self, host: str) -> None:
        """Tell the other workers at the next exchange: ``host`` answers again."""
        if self.shared:
            with self._lock:
                self._published[host] = None

    def outgoing(self) -> tuple[list[GivenUpHost], list[str]]:
        """What to write at this exchange, taken off the board: hosts given up on, hosts
        withdrawn."""
        with self._lock:
            published, self._published = self._published, {}
        given_up = [host for host in published.values() if host is not None]
        return given_up, [key for key, host in published.items() if host is None]

    def has_outgoing(self) -> bool:
        """Whether the next exchange has something to write."""
        return bool(self._published)

    def learn(self, hosts: list[GivenUpHost]) -> None:
        """The hosts given up on as the store holds them now (their probe time ahead)."""
        learnt = {host.host: host for host in hosts}
        with self._lock:
            before = {key: host.until for key, host in self._learnt.items()}
            if before != {key: host.until for key, host in learnt.items()}:
                self.version += 1
            self._learnt = learnt

    def learnt(self) -> dict[str, GivenUpHost]:
        """The hosts given up on at the last exchange, by ``host:port``."""
        with self._lock:
            return self._learnt
