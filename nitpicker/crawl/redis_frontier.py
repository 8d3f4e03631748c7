"""RedisFrontier: the crawl's queue of URLs in a Redis database shared by several workers.

Picked when the spider gets ``-a frontier=redis://host:port/db`` (or the setting / environment
variable ``NITPICKER_FRONTIER_URL``): each worker (a Scrapyd job, a ``scrapy crawl`` process)
records its pages into a shard archive of its own and takes its URLs from Redis, so that a URL
is fetched by one worker, and the shards merge into one archive (``nitpicker merge``).

How it keeps its promises (the keys and the scripts: :mod:`nitpicker.crawl.redis_lua`):

- **Deduplicated**: a frontier key is queued once for the whole crawl (``P:ids``).
- **Chunk-keyed leases**: a worker leases a chunk of up to ``NITPICKER_FRONTIER_CHUNK`` (200)
  pending URLs at once under a token ``<worker>:<n>`` (one round trip per chunk, not per URL),
  and hands them to the scheduler a few at a time.
- **The site first**: the site's entries and the out-of-scope checks wait in two queues; a
  chunk takes the site's first. When the next entry of this worker's chunk is a check and the
  site's queue is not empty, a new chunk is leased and its site entries go first.
- **Acknowledged after the shard commits**: a page's acknowledgement, the links it found and
  the redirect hops it marked done are buffered while the shard's batch is open and sent in
  one atomic script right after the batch commits (:meth:`committed`). A page is therefore
  never acknowledged before it is on disk.
- **At-least-once**: a worker killed between its commit and the acknowledgement (a window of
  one round trip) leaves pages recorded in its shard whose entries expire and are fetched again
  by another worker: the same URL in two shards, which ``nitpicker merge`` reports. A worker
  killed before the commit loses nothing: its leases expire and its entries are pending again.
- **Lease expiry**: a lease not renewed within ``NITPICKER_FRONTIER_LEASE_SECONDS`` (each
  acknowledgement and each lease call renews this worker's leases) is returned to pending by
  the next lease call of any worker.
- **Idempotent re-claims**: a call retried after a lost answer (Redis restarted, a network
  blip) re-receives exactly what the first call took; a spent token gets nothing.
- **Redis restarting**: calls are retried for ``NITPICKER_FRONTIER_RETRY_SECONDS``; past that
  the run fails with ``error_code = network`` and its leases expire.
- **Dead hosts given up on by all**: the hosts this worker's breaker gave up on (or found well
  again) go with the next ``FLUSH``, and each ``FLUSH`` and ``COUNTS`` answers with the hosts
  given up on by any worker (:attr:`RedisFrontier.board`, :mod:`nitpicker.archive.host_board`):
  no round trip of their own.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from nitpicker.archive.connection import serialised
from nitpicker.archive.frontier_port import FrontierUnavailable
from nitpicker.archive.frontier_store import remember_missed
from nitpicker.archive.host_board import GivenUpHost
from nitpicker.crawl import redis_lua
from nitpicker.crawl.redis_settings import (
    FrontierSettings,
    check_frontier_url,
    connect_frontier,
    crawl_id,
    first_line,
    parse_frontier_url,
    shard_name,
)
from nitpicker.items import FollowMode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import redis

    from nitpicker.archive.frontier_port import LeasedEntry
    from nitpicker.archive.host_board import HostBoard
    from nitpicker.archive.writer import ArchiveWriter

__all__ = ["FrontierCounts", "FrontierSettings", "RedisFrontier", "check_frontier_url",
           "connect_frontier", "crawl_id",
           "parse_frontier_url", "shard_name"]

logger = logging.getLogger(__name__)

_KNOWN_KEYS_SIZE = 100_000
_PREDICTED = int(FollowMode.PREDICTED)
_CHECK = int(FollowMode.METADATA)
_RECENT_TOKENS = 4
"""Chunks whose leases are renewed after their last entry was handed out (in flight by now)."""
_IDLE_POLL = 0.2
"""Seconds between two lease calls that found nothing (the crawl's tail, others still busy)."""
_COUNTS_EVERY = 0.5
"""Seconds a read of :attr:`RedisFrontier.pending` may be old."""


@dataclass
class FrontierCounts:
    """The crawl's entries by state, as Redis counts them."""

    pending: int = 0
    leased: int = 0
    done: int = 0
    checks: int = 0
    """Of :attr:`pending`, the out-of-scope checks (``FollowMode.METADATA``)."""


class RedisFrontier:
    """The frontier of one worker of a distributed crawl (see the module's doc)."""

    def __init__(self, client: redis.Redis, settings: FrontierSettings,
                 archive: ArchiveWriter | None = None) -> None:
        self._client = client
        self.settings = settings
        self._prefix = settings.prefix
        self._archive = archive
        self._mutex: Any = archive.mutex if archive is not None else _NoLock()
        self._ttl_ms = int(settings.lease_seconds * 1000)
        self._scripts = {name: client.register_script(getattr(redis_lua, name))
                         for name in ("LEASE", "FLUSH", "CLAIM", "RELEASE", "RELEASE_TOKENS",
                                      "DROP", "COUNTS")}
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._chunks = 0
        self._claims = 0
        self._tokens: list[str] = []
        """Lease tokens this worker holds (renewed by each call, released at close)."""
        self._chunk: deque[LeasedEntry] = deque()
        self._chunk_tokens: deque[str] = deque()
        """The lease token of each entry of :attr:`_chunk`."""
        self._acks: list[int] = []
        self._done_keys: list[str] = []
        self._adds: list[tuple[str, str, int, int]] = []
        self._known_keys: dict[str, None] = {}
        self._missed_keys: dict[str, None] = {}
        self.counts = FrontierCounts()
        self._counted_at = 0.0
        self._learnt_at = 0.0
        """When a ``FLUSH`` or ``COUNTS`` last brought the given-up hosts (``LEASE`` does not)."""
        self._idle_until = 0.0
        self.on_unavailable: Callable[[FrontierUnavailable], None] | None = None
        """Called (on the reactor's thread) when a lease call fails for good: the run fails."""
        self.board: HostBoard | None = None
        """The hosts given up on, exchanged by ``FLUSH`` and ``COUNTS`` (set by the session)."""

    def attach(self, archive: ArchiveWriter) -> None:
        """Work for ``archive`` (the worker's shard): its batch is committed before a chunk is
        leased, its mutex guards this worker's buffers."""
        self._archive = archive
        self._mutex = archive.mutex

    # -- talking to Redis -------------------------------------------------------------------

    def _run(self, name: str, *args: Any) -> Any:
        """Run one script, retried while Redis is unreachable (every script is idempotent)."""
        import redis

        deadline = time.monotonic() + self.settings.retry_seconds
        while True:
            try:
                return self._scripts[name](keys=[self._prefix], args=list(args))
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if time.monotonic() >= deadline:
                    raise FrontierUnavailable(
                        f"the frontier at {self.settings.shown} is unreachable: "
                        f"{first_line(exc)}") from exc
                logger.warning("frontier unreachable, retrying: %s", first_line(exc))
                time.sleep(0.2)
            except redis.RedisError as exc:
                raise FrontierUnavailable(
                    f"the frontier at {self.settings.shown} answered: {first_line(exc)}"
                ) from exc

    def _count(self, reply: list[Any]) -> None:
        self.counts = FrontierCounts(int(reply[0]), int(reply[1]), int(reply[2]), int(reply[3]))
        self._counted_at = time.monotonic()

    def refresh(self) -> FrontierCounts:
        """The counts, asked of Redis now."""
        reply = self._run("COUNTS")
        self._count(reply)
        self._learn(reply[4])
        return self.counts

    def _learn(self, raw: bytes | str) -> None:
        """The given-up hosts a ``FLUSH`` or ``COUNTS`` answered with, to the board."""
        if self.board is None:
            return
        self._learnt_at = time.monotonic()
        self.board.learn([GivenUpHost(str(host), str(error), str(why), float(ms) / 1000,
                                      float(at))
                          for host, error, why, ms, at in json.loads(raw)])

    # -- the crawl's identity ---------------------------------------------------------------

    def join(self, roots: Iterable[str]) -> None:
        """Join the crawl named in the settings: its roots are these (the first worker or the
        coordinator records them); ``ValueError`` when the name holds another crawl."""
        import redis

        wanted = json.dumps(list(roots))
        key = f"{self._prefix}:meta"
        try:
            self._client.hsetnx(key, "roots", wanted)
            self._client.hsetnx(key, "created_at", str(time.time()))
            raw = self._client.hget(key, "roots")
        except redis.RedisError as exc:
            raise FrontierUnavailable(
                f"cannot reach the frontier at {self.settings.shown}: {first_line(exc)}"
            ) from exc
        stored = raw.decode() if isinstance(raw, bytes) else raw
        if stored is not None and stored != wanted:
            raise ValueError(
                f"the frontier {self.settings.shown} crawl {self.settings.crawl!r} has other "
                f"roots ({stored}): name this crawl with ?crawl=NAME")

    # -- the port ---------------------------------------------------------------------------

    checks_leases: ClassVar[bool] = False
    """A page is recorded whatever became of its lease: asking Redis per page would cost a
    round trip; a page recorded by two workers is in two shards, which ``merge`` reports."""

    def holds(self, frontier_id: int) -> bool:
        """Not asked (:attr:`checks_leases` is off)."""
        return True

    @property
    def pending(self) -> int:
        """Entries to wait for: this worker's chunk, its unsent batch, and every entry not
        done in Redis (pending, or leased by a worker that may still queue links)."""
        if time.monotonic() - self._counted_at >= _COUNTS_EVERY:
            try:
                self.refresh()
            except FrontierUnavailable as exc:
                logger.warning("%s", exc)
                self._counted_at = time.monotonic()
        counts = self.counts
        unsent = 1 if (self._acks or self._adds or self._done_keys) else 0
        return len(self._chunk) + counts.pending + counts.leased + unsent

    @property
    def pending_site(self) -> int:
        """Entries of the site pending in Redis (as last counted)."""
        counts = self.counts
        return max(counts.pending - counts.checks, 0)

    @property
    def pending_checks(self) -> int:
        """Out-of-scope checks pending in Redis (as last counted)."""
        return self.counts.checks

    def forget(self) -> None:
        """The shard's batch was rolled back: what it would have sent is dropped (its leases
        expire, its entries are fetched again)."""
        self._acks.clear()
        self._done_keys.clear()
        self._adds.clear()
        self._known_keys.clear()

    def add(self, entries: Iterable[tuple[str, str, int, int]]) -> int:
        """Queue entries when the shard's batch commits; 0 (the count is Redis's)."""
        known = self._known_keys
        fresh = [entry for entry in entries if entry[0] not in known]
        missed = self._missed_keys
        if missed:
            fresh = [e for e in fresh if e[3] != _PREDICTED or e[0] not in missed]
        if not fresh:
            return 0
        if len(known) + len(fresh) > _KNOWN_KEYS_SIZE:
            known.clear()
        known.update(dict.fromkeys(entry[0] for entry in fresh))
        self._adds.extend(fresh)
        return 0

    def acknowledge(self, frontier_id: int) -> None:
        """Done when the shard's batch commits."""
        self._acks.append(frontier_id)

    def mark_done(self, key: str) -> None:
        """Done when the shard's batch commits."""
        self._done_keys.append(key)

    @serialised
    def committed(self) -> None:
        """The shard's batch is on disk: send its acknowledgements and links, in one script."""
        board = self.board
        if not (self._acks or self._adds or self._done_keys
                or (board is not None and board.has_outgoing())):
            return
        job: dict[str, Any] = {"ttl": self._ttl_ms, "renew": self._held_tokens,
                               "acks": self._acks, "done": self._done_keys, "add": self._adds}
        if board is not None:
            given_up, well = board.outgoing()
            job["give_up"] = [[h.host, h.error, h.why, int(h.seconds * 1000)] for h in given_up]
            job["well"] = well
        reply = self._run("FLUSH", json.dumps(job, separators=(",", ":")))
        self._acks, self._done_keys, self._adds = [], [], []
        self._count(reply)
        self._learn(reply[5])

    @serialised
    def lease(self, limit: int) -> list[LeasedEntry]:
        """Up to ``limit`` entries of this worker's chunk; a new chunk from Redis when it is
        empty (the shard's open batch committed first, so that its links are in Redis)."""
        if limit <= 0:
            return []
        chunk = self._chunk
        if not chunk or (chunk[0][3] == _CHECK and self.pending_site > 0):
            if time.monotonic() < self._idle_until:
                return self._hand_out(limit)
            try:
                self._lease_chunk()
            except FrontierUnavailable as exc:
                self._idle_until = float("inf")
                if self.on_unavailable is None:
                    raise
                self.on_unavailable(exc)
                return []
            if not chunk:
                self._idle_until = time.monotonic() + _IDLE_POLL
                return []
            self._learn_before_hand_out()
        return self._hand_out(limit)

    def _learn_before_hand_out(self) -> None:
        """Ask for the given-up hosts (``COUNTS``) before a new chunk's URLs go out, unless a
        ``FLUSH`` or ``COUNTS`` brought them in the last :data:`_COUNTS_EVERY` seconds: a
        worker that was idle (its leases came back empty, and ``LEASE`` answers with the
        counts but not the hosts) would otherwise fetch a given-up host's robots.txt itself.
        One round trip a chunk at most."""
        board = self.board
        if board is None or not board.shared or (
                time.monotonic() - self._learnt_at < _COUNTS_EVERY):
            return
        try:
            self.refresh()
        except FrontierUnavailable as exc:
            logger.warning("%s", exc)

    def _hand_out(self, limit: int) -> list[LeasedEntry]:
        chunk, tokens = self._chunk, self._chunk_tokens
        count = min(limit, len(chunk))
        for _ in range(count):
            self._renewing(tokens.popleft())
        return [chunk.popleft() for _ in range(count)]

    def _renewing(self, token: str) -> None:
        """An entry of ``token``'s chunk is handed out: the token is among the recent ones."""
        recent = self._tokens
        if recent and recent[-1] == token:
            return
        if token in recent:
            recent.remove(token)
        recent.append(token)
        del recent[:-_RECENT_TOKENS]

    @property
    def _held_tokens(self) -> list[str]:
        """The tokens to renew: those of entries not handed out yet, and the recent ones."""
        return list(dict.fromkeys([*self._chunk_tokens, *self._tokens]))

    def _lease_chunk(self) -> None:
        if self._archive is not None:
            self._archive.commit()  # sends the batch's acknowledgements and links
        token = f"{self.worker}:{self._chunks}"
        reply = self._run("LEASE", token, self.settings.chunk, self._ttl_ms, *self._held_tokens)
        self._count(reply)
        rows: list[LeasedEntry] = []
        for i in range(4, len(reply), 2):
            _key, url, depth, mode = json.loads(reply[i + 1])
            rows.append((int(reply[i]), str(url), int(depth), int(mode)))
        if rows:
            rows.sort(key=lambda row: (row[3] == _CHECK, row[2], row[0]))
            site = [row for row in rows if row[3] != _CHECK]
            checks = rows[len(site):]
            chunk, tokens = self._chunk, self._chunk_tokens
            chunk.extendleft(reversed(site))  # before the checks held
            tokens.extendleft([token] * len(site))
            chunk.extend(checks)
            tokens.extend([token] * len(checks))
            self._chunks += 1

    def _claim(self, key: str, url: str, depth: int, mode: int) -> bool:
        token = f"{self.worker}:c{self._claims}"
        self._claims += 1
        return bool(self._run("CLAIM", key, url, depth, mode, token, self._ttl_ms))

    @serialised
    def claim(self, key: str, url: str, depth: int) -> bool:
        """A redirect's in-scope target: whether this request may follow it (it then holds the
        target's entry, acknowledged when the page at the end of the chain is committed)."""
        return self._claim(key, url, depth, int(FollowMode.FULL))

    def release(self, key: str, *, fetch_again: bool = True) -> None:
        """A claimed entry whose redirect chain failed: pending again, or done."""
        self._run("RELEASE", key, 1 if fetch_again else 0)

    def settle(self, key: str, url: str, depth: int, mode: int) -> bool:
        """A URL a page's resources answered: this worker records it when no one has it
        (its entry is then held, and done when the shard commits)."""
        if self._claim(key, url, depth, mode):
            self._done_keys.append(key)
            return True
        return False

    def drop_prediction(self, frontier_id: int) -> bool:
        """A predicted entry that missed: queued again as a full crawl when this shard has a
        page row for its URL already, else gone (its key may be queued afresh by a link)."""
        import redis

        try:
            raw = self._client.hget(f"{self._prefix}:rows", frontier_id)
        except redis.RedisError as exc:
            raise FrontierUnavailable(
                f"the frontier at {self.settings.shown} is unreachable: {first_line(exc)}"
            ) from exc
        if raw is None:
            return False
        key, url, _, _ = json.loads(raw)
        page = None
        if self._archive is not None:
            page = self._archive.conn.execute(
                "SELECT 1 FROM pages WHERE url = ?", (url,)).fetchone()
        requeued = bool(self._run("DROP", frontier_id, 1 if page else 0))
        if not requeued:
            remember_missed(self._known_keys, self._missed_keys, key)
        return requeued

    @serialised
    def release_leases(self) -> None:
        """This worker's chunks, fetched or not, go back (what is not done is pending again)."""
        held = self._held_tokens
        self._chunk.clear()
        self._chunk_tokens.clear()
        if held:
            self._count(self._run("RELEASE_TOKENS", *held))
            self._tokens = []

    def requeue_leased(self) -> None:
        """Nothing to do: leases of dead workers expire by themselves."""

    def pending_count(self) -> int:
        """Entries not done in the whole crawl (the last counts when Redis is unreachable)."""
        try:
            counts = self.refresh()
        except FrontierUnavailable:
            counts = self.counts
        return counts.pending + counts.leased

    def repromote(self, urls: Iterable[str]) -> None:
        raise NotImplementedError("--append is not available with a shared frontier")

    def requeue(self, entries: Iterable[tuple[str, str, int, int]]) -> None:
        raise NotImplementedError("--retry-failed is not available with a shared frontier")

    def has_pending_under(self, key_prefix: str) -> bool:
        """Whether an entry not done has a key starting with ``key_prefix`` (the shard's open
        batch first sent, so that its links count)."""
        import redis

        if self._archive is not None:
            self._archive.commit()
        prefix = key_prefix.encode()
        try:
            found = self._client.zrangebylex(
                f"{self._prefix}:open", b"[" + prefix, b"(" + prefix + b"\xff", start=0, num=1)
        except redis.RedisError:
            return True  # cannot tell: keep the bucket
        return bool(found)


class _NoLock:
    """The mutex of a frontier used without an archive (the coordinator)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
