"""``nitpicker crawl URL… --frontier redis://… --coordinate``: seed a distributed crawl and wait.

The coordinator crawls nothing itself: it names the crawl in the shared frontier (its roots),
queues the roots, then shows the frontier's counts (pending, leased, done) until no URL is
pending or leased, while the workers (Scrapyd jobs, ``scrapy crawl`` or ``nitpicker crawl
--frontier`` processes on any machine) crawl into their shards. ``--merge SHARD…`` then merges
the shards it can read into ``-o``.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from nitpicker.archive.frontier_port import FrontierUnavailable
from nitpicker.cli.output import fail
from nitpicker.crawl.redis_frontier import (
    RedisFrontier,
    connect_frontier,
    crawl_id,
    parse_frontier_url,
)
from nitpicker.items import FollowMode
from nitpicker.policy.urls import frontier_key

if TYPE_CHECKING:
    from pathlib import Path

    from nitpicker.crawl.config import CrawlConfig

__all__ = ["coordinate"]

POLL_SECONDS = 1.0
SHARD_WAIT_SECONDS = 120.0
"""How long ``--merge`` waits for the workers to close their shards once the crawl is done."""


def coordinate(config: CrawlConfig, url: str, *, shards: list[Path], output: Path | None,
               silent: bool, poll: float = POLL_SECONDS) -> None:
    """Seed, wait, (merge); one ``Error:`` line and exit 1 when the frontier cannot be used."""
    try:
        settings = parse_frontier_url(url, crawl_id(config.roots))
    except ValueError as exc:
        fail(f"--frontier: {exc}")
    try:
        frontier = RedisFrontier(connect_frontier(settings), settings)
        frontier.join(config.roots)
        counts = frontier.refresh()
        if counts.done and not counts.pending and not counts.leased:
            fail(f"the crawl {settings.crawl!r} in {settings.shown} is finished already "
                 f"({counts.done} URLs done): name a new one with ?crawl=NAME")
        frontier.add((frontier_key(root), root, 0, int(FollowMode.FULL)) for root in config.roots)
        frontier.committed()
        if not silent:
            print(f"Seeded {len(config.roots)} root(s) into {settings.shown}, crawl "
                  f"{settings.crawl!r}: schedule workers with -a frontier={url}", file=sys.stderr)
        last = None
        while True:
            counts = frontier.refresh()
            shown = (counts.pending, counts.leased, counts.done)
            if not silent and shown != last:
                print(f"pending {counts.pending}, leased {counts.leased}, done {counts.done}",
                      file=sys.stderr, flush=True)
                last = shown
            if not counts.pending and not counts.leased and counts.done:
                break
            time.sleep(poll)
    except (FrontierUnavailable, ValueError) as exc:
        fail(str(exc))
    if shards and output is not None:
        from nitpicker.archive.lock import ArchiveLock
        from nitpicker.archive.merge import merge_shards

        deadline = time.monotonic() + SHARD_WAIT_SECONDS
        while time.monotonic() < deadline and any(
                not shard.exists() or ArchiveLock(shard).live_holder() is not None
                for shard in shards):
            time.sleep(poll)  # the last workers are still closing their shards

        result = merge_shards(shards, output)
        if not silent:
            print(f"{output}: {len(shards)} shard(s), {result.pages} page rows, "
                  f"{result.recorded} recorded", file=sys.stderr)
