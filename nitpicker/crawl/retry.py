"""Retry failed URLs: ``nitpicker crawl --retry-failed FILE`` continues an archive by fetching
again only the URLs that failed (:mod:`nitpicker.query.failed`: no HTTP answer, or 5xx).

The run reopens the archive as ``--resume`` does, with its stored options
(:func:`nitpicker.crawl.config_builder.retry_failed_config`). At its start the failed URLs go
back to the frontier, each with its depth and follow mode (in scope: a full crawl;
out of scope: the metadata-only check); a retried page that now answers is recorded over its
old row (same id) and the links it has that the archive did not know are crawled as any new
link is. The trap cap starts from the signatures capped by earlier runs, as on ``--resume``,
and a failed URL in the bucket of a capped trap (its host and parent path, where the trap's
first page is) is left as it is: a trap capped before stays capped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nitpicker.items import FollowMode
from nitpicker.policy.trapcap import bucket_of
from nitpicker.policy.urls import frontier_key
from nitpicker.query.failed import FailedUrl, failed_urls, pending_urls, trap_first_urls

if TYPE_CHECKING:
    import sqlite3

__all__ = ["RetryPlan", "retry_plan"]


@dataclass(frozen=True)
class RetryPlan:
    """The failed URLs of an archive: those to fetch again, and those left (capped traps)."""

    retry: list[FailedUrl] = field(default_factory=list)
    capped: list[FailedUrl] = field(default_factory=list)
    pending: int = 0
    """URLs queued and not fetched yet: a stopped crawl (``--resume`` it first)."""

    def frontier_entries(self) -> list[tuple[str, str, int, int]]:
        """(key, url, depth, mode) of the URLs to fetch again."""
        return [
            (frontier_key(failed["url"]), failed["url"], failed["depth"] or 0,
             int(FollowMode.METADATA if failed["is_external"] else FollowMode.FULL))
            for failed in self.retry
        ]


def retry_plan(conn: sqlite3.Connection) -> RetryPlan:
    """What ``--retry-failed`` would fetch again in the archive behind ``conn``."""
    capped_buckets = {bucket_of(url) for url in trap_first_urls(conn)}
    retry: list[FailedUrl] = []
    capped: list[FailedUrl] = []
    for failed in failed_urls(conn):
        in_trap = not failed["is_external"] and bucket_of(failed["url"]) in capped_buckets
        (capped if in_trap else retry).append(failed)
    return RetryPlan(retry, capped, pending_urls(conn))
