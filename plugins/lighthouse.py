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

Lighthouse is online by nature: it loads the live page, runs its scripts and fetches what
they ask for. With ``denyPrivateNetworks`` (``--deny-private-networks``) its browsers go through
a :class:`~nitpicker.render.guard_proxy.GuardProxy`, started with the first page, so neither
the page nor anything it loads reaches a loopback, private, link-local or metadata address; a
page whose own host is such an address is not audited at all (its four cells empty, the note
``Error: blocked by the private-network guard: …``).

Settings: ``concurrency`` (1–2, default 1), ``timeout`` (seconds per page, default 180),
``config`` (a Lighthouse config object, passed to Lighthouse as is), ``denyPrivateNetworks``
(default ``false``).
"""

from __future__ import annotations

import logging
import math
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_plugins._node import NodeWorker, find_node_modules
from nitpicker_plugins._settings import (
    SettingError,
    node_package_version,
    object_setting,
    positive_int,
    timeout_setting,
)

from nitpicker.analyze.plugin import Findings, PageValue
from nitpicker.policy.netguard import UnresolvableHostError, resolve_host
from nitpicker.render.chromium import CHROMIUM_ARGS, require_chromium
from nitpicker.render.guard_proxy import GuardProxy, browser_args

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
    label = "Lighthouse: performance audit"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = dict(CATEGORIES)
        self.concurrency = positive_int(settings, NAME, "concurrency", 1, most=2)
        #: the estimate at the interactive choice: ~16 s a page measured on a documentation
        #: site, two runs at once on two cores not quite twice as fast
        self.seconds_per_page = 16.0 if self.concurrency == 1 else 10.0
        self.startup_seconds = 3.0
        timeout = timeout_setting(settings, NAME, 180.0)
        config = object_setting(settings, NAME, "config")
        guarded = settings.get("denyPrivateNetworks", False)
        if not isinstance(guarded, bool):
            raise SettingError(f"{NAME}: setting 'denyPrivateNetworks' must be true or false, "
                               f"got {guarded!r}", setting="denyPrivateNetworks")
        #: the private-network guard of Lighthouse's browsers (started with the first page)
        self.guard = GuardProxy() if guarded else None
        self._guarding = threading.Lock()
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
        self._guard_browsers()
        self.worker.start()

    def close(self) -> None:
        self.worker.close()
        if self.guard is not None:
            self.guard.close()

    def _guard_browsers(self) -> None:
        """With the guard: start it and give its switches to the browsers, before the worker
        process (which launches them) starts; idempotent."""
        if self.guard is None:
            return
        with self._guarding:
            if self.guard.url is None:
                self.worker.settings["flags"] = [*CHROMIUM_ARGS, *browser_args(self.guard.start())]

    def each_page(self, snapshot: Snapshot) -> Findings:
        if self.guard is not None:
            self._guard_browsers()
            refusal = _refusal(self.guard, snapshot.url)
            if refusal is not None:
                note = f"Error: blocked by the private-network guard: {refusal}"
                return Findings(values={key: PageValue(None, note) for key in CATEGORIES})
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


def _refusal(guard: GuardProxy, url: str) -> str | None:
    """Why ``guard``'s policy refuses the page's own host, or ``None`` (a name that does not
    resolve is Lighthouse's to report)."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        host = parts.hostname or ""
        refusal = guard.check(host, port, resolve_host(host, port, guard.resolver))
    except (UnresolvableHostError, ValueError):
        return None
    return str(refusal) if refusal is not None else None


def create(settings: Mapping[str, Any]) -> LighthousePlugin:
    """The entry point's factory (``nitpicker.analyze``)."""
    return LighthousePlugin(settings)
