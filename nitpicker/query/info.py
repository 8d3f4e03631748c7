"""Crawl information and runs of an archive."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

__all__ = ["CrawlInfo", "RunInfo", "crawl_info", "latest_run"]


@dataclass(frozen=True)
class CrawlInfo:
    version: str
    name: str
    base_url: str
    roots: list[str]
    from_list: bool
    config: dict[str, Any]
    config_json: str
    created_at: str


@dataclass(frozen=True)
class RunInfo:
    id: int
    kind: str
    pid: int
    started_at: str
    ended_at: str | None
    status: str
    stop_reason: str | None
    pages_done: int
    errors: int
    error_code: str | None
    error_detail: str | None


def crawl_info(conn: sqlite3.Connection) -> CrawlInfo:
    row = conn.execute(
        "SELECT version, name, base_url, roots, from_list, config, created_at FROM info WHERE id = 1"
    ).fetchone()
    if row is None:
        raise LookupError("the archive has no crawl information")
    version, name, base_url, roots, from_list, config, created_at = row
    return CrawlInfo(version, name, base_url, json.loads(roots), bool(from_list),
                     json.loads(config), config, created_at)


def latest_run(conn: sqlite3.Connection) -> RunInfo | None:
    row = conn.execute(
        "SELECT id, kind, pid, started_at, ended_at, status, stop_reason, pages_done, errors,"
        " error_code, error_detail FROM runs ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return RunInfo(*row) if row else None
