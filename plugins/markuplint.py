"""markuplint: HTML markup validation of every snapshot (SPEC §7.3).

One long-lived Node process (``plugins/node/markuplint-worker.mjs``) lints the snapshots the
host's threads send it. Output, per page:

- the ``markuplint`` column: the number of violations, its note one ``<message> (<rule>)``
  line per violation;
- one violation per finding: ``validator`` ``markuplint``, markuplint's severity, its rule id,
  ``code`` empty, ``location`` ``line:col`` in the snapshot.

Each of the process's ``threads`` (Node worker threads) builds one markuplint engine and
lints page after page with it (the config, rules and schemas are resolved once; a page is only
parsed and checked), so the process uses that many cores.

Settings: ``config`` (a markuplint config object; without one markuplint's defaults apply,
and no ``.markuplintrc`` is searched for), ``threads`` (worker threads of the one Node
process, default 2, at most 16), ``concurrency`` (requests in flight, default ``threads`` + 1:
the one more waits in the Node process, so a thread that finishes a page starts the next at once
instead of idling while the host records the page and sends another),
``timeout`` (seconds per page, default 120), ``recycle`` (pages a Node process lints before a
fresh one replaces it, default RECYCLE; 0: never).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from nitpicker_plugins._node import NodeWorker, find_node_modules
from nitpicker_plugins._settings import (
    node_package_version,
    object_setting,
    positive_int,
    timeout_setting,
    whole_int,
)

from nitpicker.analyze.plugin import Findings, PageValue, Violation

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nitpicker.analyze.plugin import Snapshot

__all__ = ["MarkuplintPlugin", "create"]

logger = logging.getLogger(__name__)

NAME = "markuplint"
VERSION = "1"


class MarkuplintPlugin:
    label = "markuplint: HTML markup validation"
    #: the estimate at the interactive choice: 1.0 s of CPU a 61 KB documentation page on
    #: two threads (docs/guide/analyze.md, markuplint's "Large pages"; 4 KB pages cost less)
    seconds_per_page = 0.5
    startup_seconds = 2.0

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = {"markuplint": "markuplint"}
        config = object_setting(settings, NAME, "config")
        threads = positive_int(settings, NAME, "threads", 2, most=16)
        self.concurrency = positive_int(settings, NAME, "concurrency", threads + 1)
        timeout = timeout_setting(settings, NAME, 120.0)
        recycle = whole_int(settings, NAME, "recycle", 200)
        node_modules = find_node_modules("markuplint")
        tool = node_package_version(node_modules, "markuplint")
        self.version = f"{VERSION}+markuplint-{tool}"
        self.worker = NodeWorker("markuplint-worker.mjs", {"config": config, "threads": threads},
                                 name=NAME, timeout=timeout, node_modules=node_modules,
                                 recycle_after=recycle or None)

    def open(self) -> None:
        self.worker.start()

    def close(self) -> None:
        self.worker.close()

    def each_page(self, snapshot: Snapshot) -> Findings:
        found = self.worker.request({"url": snapshot.url, "html": snapshot.html})
        violations = [
            Violation(validator=NAME, severity=str(item["severity"]), rule=str(item["rule"]),
                      message=str(item["message"]), url=snapshot.url, code="",
                      location=f"{item['line']}:{item['col']}")
            for item in found
        ]
        note = "\n".join(f"{v.message} ({v.rule})" for v in violations) or None
        return Findings(values={"markuplint": PageValue(len(violations), note)},
                        violations=violations)


def create(settings: Mapping[str, Any]) -> MarkuplintPlugin:
    """The entry point's factory (``nitpicker.analyze``)."""
    return MarkuplintPlugin(settings)
