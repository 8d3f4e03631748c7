"""The crawl information of an archive: its roots, options and version."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

__all__ = ["CrawlInfo", "crawl_info"]


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


def crawl_info(conn: sqlite3.Connection) -> CrawlInfo:
    row = conn.execute(
        "SELECT version, name, base_url, roots, from_list, config, created_at FROM info WHERE id = 1"
    ).fetchone()
    if row is None:
        raise LookupError("the archive has no crawl information")
    version, name, base_url, roots, from_list, config, created_at = row
    return CrawlInfo(version, name, base_url, json.loads(roots), bool(from_list),
                     json.loads(config), config, created_at)
