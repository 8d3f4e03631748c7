"""Where a distributed crawl's Redis frontier is: its URL parsed and checked, the crawl's name
in the database, a worker's shard file name, and a checked client
(:mod:`nitpicker.crawl.redis_frontier` is the frontier itself)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from nitpicker.archive.frontier_port import FrontierUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterable

    import redis

__all__ = ["FrontierSettings", "check_frontier_url", "connect_frontier", "crawl_id",
           "first_line", "parse_frontier_url", "shard_name"]

_SCHEMES = ("redis", "rediss", "unix")


def crawl_id(roots: Iterable[str]) -> str:
    """The default name of a crawl in the frontier's database: a digest of its roots (workers
    given the same roots join the same crawl)."""
    return hashlib.sha1(json.dumps(list(roots)).encode(), usedforsecurity=False).hexdigest()[:12]


def shard_name(job: str) -> str:
    """The file name of a worker's shard: ``shard-<Scrapyd job id>.nitpicker`` (host and
    process id when the worker is no Scrapyd job)."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", job) or f"{socket.gethostname()}-{os.getpid()}"
    return f"shard-{name}.nitpicker"


@dataclass(frozen=True)
class FrontierSettings:
    """Where the shared frontier is and how it leases."""

    url: str
    """The Redis URL, without ``crawl=``."""
    crawl: str
    """The crawl's name in the database: its keys start with ``nitpicker:<crawl>:``."""
    lease_seconds: float = 60.0
    chunk: int = 200
    retry_seconds: float = 30.0

    @property
    def prefix(self) -> str:
        return f"nitpicker:{self.crawl}"

    @property
    def shown(self) -> str:
        """The URL as shown in messages (no password)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def parse_frontier_url(raw: str, default_crawl: str, **options: Any) -> FrontierSettings:
    """``redis://host:port/db[?crawl=NAME]`` as settings; ``ValueError`` naming the bad value."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a Redis URL: {raw!r} ({exc})") from exc
    if parts.scheme not in _SCHEMES or (parts.scheme != "unix" and not parts.hostname):
        raise ValueError(f"not a Redis URL: {raw!r} (expected redis://host:port/db)")
    path = parts.path.strip("/")
    if parts.scheme != "unix" and path and not path.isdigit():
        raise ValueError(f"not a Redis URL: {raw!r} (the database is a number: redis://host:{port or 6379}/0)")
    query = parse_qsl(parts.query)
    crawl = next((v for k, v in query if k == "crawl"), "") or default_crawl
    rest = urlencode([(k, v) for k, v in query if k != "crawl"])
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    return FrontierSettings(url, crawl, **options)


def check_frontier_url(raw: str) -> None:
    """``ConfigError`` (one line naming it) unless ``raw`` is a Redis URL."""
    from nitpicker.crawl.config import ConfigError

    try:
        parse_frontier_url(raw, "check")
    except ValueError as exc:
        raise ConfigError(f"frontier: {exc}") from exc


def connect_frontier(settings: FrontierSettings) -> redis.Redis:
    """A client of the frontier's database, checked with a PING; ``FrontierUnavailable`` (one
    line naming the URL) when Redis cannot be reached."""
    import redis

    try:
        client = redis.Redis.from_url(settings.url, socket_timeout=10, socket_connect_timeout=5)
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        raise FrontierUnavailable(
            f"cannot reach the frontier at {settings.shown}: {first_line(exc)}") from exc
    return client


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
