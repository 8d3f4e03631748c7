"""The query library: every question asked of an archive, over a read-only connection.

This package is the only place with SQL for reading an archive. The CLI, the MCP server,
the viewer and the reports call these functions.
"""

from __future__ import annotations

from nitpicker.query.connection import ArchiveOpenError, open_archive
from nitpicker.query.info import CrawlInfo, RunInfo, crawl_info, latest_run
from nitpicker.query.summary import Summary, summary

__all__ = [
    "ArchiveOpenError",
    "CrawlInfo",
    "RunInfo",
    "Summary",
    "crawl_info",
    "latest_run",
    "open_archive",
    "summary",
]
