"""Lighthouse: the four category scores of every page, measured on the live URL (SPEC §7.3).

Lighthouse loads the page itself (scripts, images, timing), so it audits ``snapshot.url`` on
the live site, not the snapshot. One long-lived Node process
(``plugins/node/lighthouse-worker.mjs``) keeps one headless Debian Chromium per concurrent
page (``concurrency`` 1 or 2: Lighthouse measures timing, and more parallel runs on two cores
would measure each other) and reuses it from page to page.

Output, per page: the columns ``performance``, ``accessibility``, ``best-practices``, ``seo``,
each ``round(score × 100)``, its note one ``<audit title>: <audit description>`` line per audit
of the category that lost points. When Lighthouse cannot audit the page, all four are empty
(``None``) with the note ``Error: <reason>``; a category Lighthouse could not score is empty
with the reason in its note.

Settings: ``concurrency`` (1–2, default 1), ``timeout`` (seconds per page, default 180),
``config`` (a Lighthouse config object, passed to Lighthouse as is).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from nitpicker_plugins._node import NodeWorker, find_node_modules
from nitpicker_plugins._settings import (
    node_package_version,
    object_setting,
    positive_int,
    timeout_setting,
)

from nitpicker.analyze.plugin import Findings, PageValue
from nitpicker.render.chromium import CHROMIUM_ARGS, require_chromium

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nitpicker.analyze.plugin import Snapshot

__all__ = ["CATEGORIES", "LighthousePlugin", "create"]

logger = logging.getLogger(__name__)

NAME = "lighthouse"
VERSION = "1"

#: header key → column title (the original's)
CATEGORIES = {
    "performance": "Performance",
    "accessibility": "Accessibility",
    "best-practices": "Best Practices",
    "seo": "SEO",
}


def score_value(score: float) -> int:
    """``Math.round(score * 100)``: halves round up, as the original's JavaScript did."""
    return math.floor(score * 100 + 0.5)


class LighthousePlugin:
    label = "Lighthouse: パフォーマンス監査"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = dict(CATEGORIES)
        self.concurrency = positive_int(settings, NAME, "concurrency", 1, most=2)
        timeout = timeout_setting(settings, NAME, 180.0)
        config = object_setting(settings, NAME, "config")
        node_modules = find_node_modules("lighthouse")
        tool = node_package_version(node_modules, "lighthouse")
        self.version = f"{VERSION}+lighthouse-{tool}"
        chrome = require_chromium()
        self.worker = NodeWorker(
            "lighthouse-worker.mjs",
            {"chrome": chrome, "flags": CHROMIUM_ARGS, "concurrency": self.concurrency,
             "config": config},
            name=NAME, timeout=timeout, node_modules=node_modules, env={"CHROME_PATH": chrome})

    def open(self) -> None:
        self.worker.start()

    def close(self) -> None:
        self.worker.close()

    def each_page(self, snapshot: Snapshot) -> Findings:
        answer = self.worker.request({"url": snapshot.url})
        if answer.get("error"):
            note = f"Error: {answer['error']}"
            logger.info("lighthouse could not audit %s: %s", snapshot.url, answer["error"])
            return Findings(values={key: PageValue(None, note) for key in CATEGORIES})
        categories = answer.get("categories") or {}
        reason = answer.get("runtimeError") or "Lighthouse gave no score"
        values: dict[str, PageValue] = {}
        for key in CATEGORIES:
            category = categories.get(key)
            if category is None or category.get("score") is None:
                values[key] = PageValue(None, f"Error: {reason}")
                continue
            note = "\n".join(f"{audit['title']}: {audit['description']}"
                             for audit in category["audits"]) or None
            values[key] = PageValue(score_value(category["score"]), note)
        return Findings(values=values)


def create(settings: Mapping[str, Any]) -> LighthousePlugin:
    """The entry point's factory (``nitpicker.analyze``)."""
    return LighthousePlugin(settings)
