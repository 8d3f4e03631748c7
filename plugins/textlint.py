"""textlint: proofreading of every snapshot's text, with Japanese rules by default (SPEC §7.3).

One long-lived Node process (``plugins/node/textlint-worker.mjs``) builds the linter once
(textlint-plugin-html reads the HTML's text) and lints the snapshots the host's threads send
it. Output: no columns; one violation per finding: ``validator`` ``textlint``, severity
``warning`` or ``error``, the rule id, ``code`` ``-``, ``location`` ``line:col`` in the
snapshot.

Settings: ``rules`` (rule id → ``true`` | ``false`` | options, merged over
:data:`DEFAULT_RULES`; ``false`` turns a default off; a rule ``x`` is loaded from the npm
package ``textlint-rule-x``), ``concurrency`` (requests in flight, default 2), ``timeout``
(seconds per page, default 120; the first page also waits for the dictionaries to load),
``recycle`` (pages a Node process lints before a fresh one replaces it, default 500; 0:
never): the process grows by about 1 MB a page, from ~2 GB once the dictionaries are loaded.
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

from nitpicker.analyze.plugin import Findings, Violation

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nitpicker.analyze.plugin import Snapshot

__all__ = ["DEFAULT_RULES", "TextlintPlugin", "create"]

logger = logging.getLogger(__name__)

NAME = "textlint"
VERSION = "1"

#: the original's Japanese rule set (SPEC §7.3); each is a package in package.json
DEFAULT_RULES: dict[str, Any] = {
    "no-nfd": True,
    "max-ten": {"max": 3},
    "spellcheck-tech-word": True,
    "web-plus-db": True,
    "no-mix-dearu-desumasu": {"preferInHeader": "", "preferInBody": "", "preferInList": "",
                              "strict": False},
    "no-doubled-joshi": True,
    "no-double-negative-ja": True,
    "no-hankaku-kana": True,
    "ja-no-abusage": True,
    "no-mixed-zenkaku-and-hankaku-alphabet": True,
    "no-dropping-the-ra": True,
    "no-doubled-conjunctive-particle-ga": True,
    "no-doubled-conjunction": True,
    "ja-no-mixed-period": True,
    "max-appearence-count-of-words": True,
    "ja-hiragana-keishikimeishi": True,
    "ja-hiragana-fukushi": True,
    "ja-hiragana-hojodoushi": True,
    "ja-unnatural-alphabet": True,
    "@textlint-ja/textlint-rule-no-insert-dropping-sa": True,
    "prefer-tari-tari": True,
    "@textlint-ja/no-synonyms": True,
}

_SEVERITIES = {"warning", "error"}


class TextlintPlugin:
    label = "textlint: テキスト校正"
    #: the estimate at the interactive choice (bench/analyze_engines.py: 3.94 pages/s, and
    #: the dictionaries loaded once)
    seconds_per_page = 0.25
    startup_seconds = 30.0

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = {}
        rules = {**DEFAULT_RULES, **(object_setting(settings, NAME, "rules") or {})}
        self.concurrency = positive_int(settings, NAME, "concurrency", 2)
        timeout = timeout_setting(settings, NAME, 120.0)
        recycle = whole_int(settings, NAME, "recycle", 500)
        node_modules = find_node_modules("textlint")
        tool = node_package_version(node_modules, "textlint")
        self.version = f"{VERSION}+textlint-{tool}"
        self.worker = NodeWorker("textlint-worker.mjs", {"rules": rules},
                                 name=NAME, timeout=timeout, node_modules=node_modules,
                                 recycle_after=recycle or None)

    def open(self) -> None:
        self.worker.start()

    def close(self) -> None:
        self.worker.close()

    def each_page(self, snapshot: Snapshot) -> Findings:
        found = self.worker.request({"url": snapshot.url, "html": snapshot.html})
        return Findings(violations=[
            Violation(validator=NAME,
                      severity=item["severity"] if item["severity"] in _SEVERITIES else "error",
                      rule=str(item["rule"]), message=str(item["message"]), url=snapshot.url,
                      code="-", location=f"{item['line']}:{item['col']}")
            for item in found
        ])


def create(settings: Mapping[str, Any]) -> TextlintPlugin:
    """The entry point's factory (``nitpicker.analyze``)."""
    return TextlintPlugin(settings)
