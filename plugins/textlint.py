"""textlint: proofreading of every snapshot's text, with the rule set of the page's language
(SPEC §7.3; issue 29, item 4).

One long-lived Node process (``plugins/node/textlint-worker.mjs``) builds one linter per
language, the first time a page of that language comes (textlint-plugin-html reads the HTML's
text), and lints the snapshots the host's threads send it. A page's language is its
``<html lang>``, else detected from its text (``plugins/_language.py``): Japanese pages get
the original's Japanese rules (``rules``), English pages an English set (``englishRules``),
pages of any other language (or none found) no prose rule at all: a rule written for one
language reads another's sentences wrong (the Japanese set flagged every English sentence
with a kanji in it for not ending in 。). The Japanese dictionaries are loaded only when a
Japanese page comes. Output: no columns; one violation per finding: ``validator``
``textlint``, severity ``warning`` or ``error``, the rule id, ``code`` ``-``, ``location``
``line:col`` in the snapshot.

Settings: ``rules`` (the Japanese set: rule id → ``true`` | ``false`` | options, merged over
:data:`DEFAULT_RULES`; ``false`` turns a default off; a rule ``x`` is loaded from the npm
package ``textlint-rule-x``), ``englishRules`` (the English set, the same shape, merged over
:data:`DEFAULT_ENGLISH_RULES`), ``concurrency`` (requests in flight, default 2), ``timeout``
(seconds per page, default 120; the first page also waits for the dictionaries to load),
``recycle`` (pages a Node process lints before a fresh one replaces it, default 500; 0:
never): the process grows by about 1 MB a page, from ~2 GB once the dictionaries are loaded.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from nitpicker_plugins._language import page_language
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

__all__ = ["DEFAULT_ENGLISH_RULES", "DEFAULT_RULES", "TextlintPlugin", "create"]

logger = logging.getLogger(__name__)

NAME = "textlint"
VERSION = "2"  # 2: rules by the page's language

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

#: the English set: each a package in package.json (pinned in package-lock.json)
DEFAULT_ENGLISH_RULES: dict[str, Any] = {
    # passive voice, weasel words, "so" at the start, clichés … (write-good's checks)
    "write-good": True,
    # product and technical terms as their makers spell them (JavaScript, GitHub, …)
    "terminology": True,
    # the common misspellings Wikipedia lists (recieve, seperate, …)
    "common-misspellings": True,
}

_SEVERITIES = {"warning", "error"}


class TextlintPlugin:
    label = "textlint: text proofreading"
    #: the estimate at the interactive choice (bench/analyze_engines.py: 3.94 pages/s, and
    #: the dictionaries loaded once)
    seconds_per_page = 0.25
    startup_seconds = 30.0

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = {}
        rules = {
            "ja": {**DEFAULT_RULES, **(object_setting(settings, NAME, "rules") or {})},
            "en": {**DEFAULT_ENGLISH_RULES,
                   **(object_setting(settings, NAME, "englishRules") or {})},
        }
        #: the languages with at least one rule on
        self.languages = frozenset(lang for lang, chosen in rules.items()
                                   if any(on is not False for on in chosen.values()))
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
        lang = page_language(snapshot.html)
        if lang not in self.languages:  # no rule set for this language: nothing to read
            return Findings()
        found = self.worker.request({"url": snapshot.url, "html": snapshot.html, "lang": lang})
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
