"""Recrawl: ``nitpicker recrawl FILE URL…`` fetches again URLs an archive already has.

The run reopens the archive as ``--resume`` does, with its stored options
(:func:`nitpicker.crawl.config_builder.recrawl_config`: only the runtime options are this
run's), and records a run of kind ``recrawl``. At its start the URLs listed go back to the
frontier, each with its depth and follow mode (:func:`recrawl_plan`), whatever their frontier
rows say: two listed pages that link only to each other are both fetched, neither skipped as
"known". Each is recorded over its own row (same id): status, metadata, headers, links,
images and snapshot replaced. The links they have that the archive did not know are queued as
any new link is, and crawled within the scope (their own new links too); links the archive
knows are not fetched again.

Refused before anything is written (:func:`check_recrawl`): a URL the archive does not have
(``nitpicker crawl --append`` adds new roots), one its crawl skips by ``--exclude`` or
``--exclude-url``, one out of scope in an archive crawled with ``--no-fetch-external``, and
an archive whose crawl has URLs not fetched yet (``--resume`` it first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nitpicker.crawl.config import ConfigError, validate_url
from nitpicker.items import FollowMode
from nitpicker.policy.excludes import Excludes
from nitpicker.policy.links import LinkResolver
from nitpicker.policy.urls import frontier_key
from nitpicker.query.failed import pending_urls
from nitpicker.query.recrawl import RecrawlTarget, recrawl_targets

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from nitpicker.crawl.config import CrawlConfig

__all__ = ["RecrawlPlan", "check_recrawl", "normalised_urls", "recrawl_plan"]

_SHOWN = 3
"""URLs a refusal names before "and N more"."""


@dataclass(frozen=True)
class RecrawlPlan:
    """The URLs of a recrawl the archive has (in the order given), and those it has not."""

    targets: list[RecrawlTarget] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pending: int = 0
    """URLs queued and not fetched yet: a stopped crawl (``--resume`` it first)."""

    def frontier_entries(self) -> list[tuple[str, str, int, int]]:
        """(key, url, depth, mode) of the URLs to fetch again: the mode of their frontier row
        (a predicted page's is a full crawl), else by their scope."""
        entries = []
        for target in self.targets:
            mode = target["mode"]
            if mode is None or mode not in (FollowMode.FULL, FollowMode.METADATA):
                mode = FollowMode.METADATA if target["is_external"] else FollowMode.FULL
            entries.append((frontier_key(target["url"]), target["url"], target["depth"],
                            int(mode)))
        return entries


def normalised_urls(urls: Sequence[str], *, disable_queries: bool) -> list[str]:
    """The URLs as the archive keeps them, each once, in the order given; ``ConfigError``
    naming one that is not an http(s) URL."""
    return list(dict.fromkeys(validate_url(url, disable_queries=disable_queries)
                              for url in urls))


def recrawl_plan(conn: sqlite3.Connection, urls: Sequence[str]) -> RecrawlPlan:
    """What a recrawl of ``urls`` (normalised) fetches in the archive behind ``conn``."""
    targets = recrawl_targets(conn, urls)
    found = {target["url"] for target in targets}
    return RecrawlPlan(targets, [url for url in urls if url not in found], pending_urls(conn))


def check_recrawl(plan: RecrawlPlan, config: CrawlConfig, path: str) -> None:
    """``ConfigError`` naming what refuses the recrawl (see the module's docstring)."""
    if plan.missing:
        raise ConfigError(
            f"not in {path}: {_listed(plan.missing)} (a recrawl fetches again the URLs an "
            f"archive has; add new roots with: nitpicker crawl --append {path} URL…)")
    excludes = Excludes(globs=config.excludes, url_prefixes=config.exclude_urls,
                        keywords=config.exclude_keywords)
    resolver = LinkResolver(disable_queries=config.disable_queries)
    excluded = []
    for target in plan.targets:
        parsed = resolver.resolve(target["url"], target["url"])
        if parsed is not None and excludes.excludes_url(parsed):
            excluded.append(target["url"])
    if excluded:
        raise ConfigError(f"excluded by the archive's crawl (--exclude, --exclude-url): "
                          f"{_listed(excluded)}")
    if not config.fetch_external:
        outside = [target["url"] for target in plan.targets if target["is_external"]]
        if outside:
            raise ConfigError(f"out of scope, and {path} was crawled with --no-fetch-external: "
                              f"{_listed(outside)}")
    if plan.pending:
        raise ConfigError(f"{path} has {plan.pending} URL(s) not crawled yet: finish its crawl "
                          "with nitpicker crawl --resume first, then recrawl")


def _listed(urls: list[str]) -> str:
    more = len(urls) - _SHOWN
    return ", ".join(urls[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
