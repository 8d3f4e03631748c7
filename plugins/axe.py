"""axe: accessibility audit of every snapshot with axe-core in a real browser (SPEC §7.3).

One Chromium (the crawl's, ``nitpicker.render.chromium``) with a bounded set of reused pages
(``concurrency``) audits the snapshots the host's threads hand it; Playwright's asyncio API
runs on one thread of its own (:class:`~nitpicker_plugins._browser.BrowserEngine`). Each
snapshot is loaded *at its page URL*: the browser asks for the URL and gets the snapshot, so
relative links, ``<base>`` and stylesheets resolve as on the site. The snapshot's scripts do
not run (the document is served with ``Content-Security-Policy: script-src 'none'``, axe is
injected by the browser's DevTools). The browser is offline: it fetches only the page's own
stylesheets (recorded by the crawl for that page, on a host the crawl crawled), once per run
(they decide the layout, which colour contrast needs); nothing else, on no host.

Output: no columns; one violation per element of each axe result, from ``violations`` **and**
``incomplete``, kept apart as axe keeps them: ``status`` ``violation`` (axe's
``violations``: the rule fails; ``severity`` its impact, ``minor``/``moderate``/``serious``/
``critical``) or ``needs-review`` (axe's ``incomplete``: axe could not tell, a person must
look; ``severity`` ``needs-review``, never a failure's: the lowest priority in the findings).
Each carries ``validator`` ``axe``, ``rule`` the rule id, ``impact``, ``tags`` (the rule's:
``wcag2aa``, ``best-practice`` …), ``help_url``, ``element`` axe's CSS selector of the element
(its ``target``; what the finding's fingerprint follows from one crawl to the next),
``summary`` axe's failure summary of the element (for colour contrast: the ratio, the
foreground and background colours, the font, the ratio expected), ``code`` the element's HTML
as axe quotes it, ``message`` ``<description> <help>(<helpUrl>)``. When axe itself fails on a
page, one violation ``UNKNOWN_RULE`` carries the error. (Version 1 gave one violation per rule,
its elements' HTML one per line, and no element: a new element failing a rule made the rule's
whole finding "new" in ``nitpicker diff``.)

Which rules: ``preset`` ``all`` (the default: axe's default rules, best practices included)
or ``wcag-a`` / ``wcag-aa`` (the rules tagged WCAG 2.0–2.2 level A, or A and AA: no best
practice); ``tags`` (a list of axe tags, ``--axe-tags``) runs the rules with any of them
instead of the preset's.

Settings: ``lang`` (axe's messages in ``axe-core/locales/<lang>.json``, a BCP 47 tag, e.g.
``ja``, ``pt-BR``; a tag axe has no file for takes its language's, ``ja-JP`` → ``ja``; ``en``
is axe's own English; a language axe does not have is a :class:`SettingError` listing those
it has), ``concurrency`` (pages audited at
once, default 2), ``timeout`` (seconds per page, default 60), ``styles`` (fetch the site's
stylesheets, default ``true``), ``rules`` (axe rule id → ``true``/``false``, e.g.
``{"color-contrast": false}`` for the original's behaviour; merged over
:data:`DEFAULT_RULES`), ``online`` (stylesheets from any host the snapshot names, redirects
followed; default ``false``, ``--online``), ``denyPrivateNetworks`` (every request of the
browser through the private-network guard; default ``false``, ``--deny-private-networks``),
``preset`` and ``tags`` (above).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from nitpicker_plugins._browser import BrowserEngine
from nitpicker_plugins._node import find_node_modules
from nitpicker_plugins._settings import (
    SettingError,
    node_package_version,
    object_setting,
    positive_int,
    string_list_setting,
    string_setting,
    timeout_setting,
)

from nitpicker.analyze.plugin import NEEDS_REVIEW, VIOLATION, Findings, Violation
from nitpicker.render.chromium import require_chromium
from nitpicker.render.guard_proxy import GuardProxy

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from nitpicker.analyze.plugin import Snapshot

__all__ = ["AxePlugin", "create"]

logger = logging.getLogger(__name__)

NAME = "axe"
VERSION = "3"  # 3: one finding per element, needs-review apart, axe's facts; 2: offline

#: rules switched from axe's defaults: frames are not loaded (a snapshot is one document), so
#: ``frame-tested`` would flag every ``<iframe>`` as "not tested"
DEFAULT_RULES = {"frame-tested": False}

#: the presets: a name → the axe tags whose rules run (``None``: axe's default rules)
PRESETS: dict[str, tuple[str, ...] | None] = {
    "all": None,
    "wcag-a": ("wcag2a", "wcag21a"),
    "wcag-aa": ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"),
}

#: runs in the page after axe is there: the results the plugin records, small enough to send
AUDIT = """async ([locale, rules, tags]) => {
  try {
    if (locale) axe.configure({ locale });
    const options = { resultTypes: ['violations', 'incomplete'], iframes: false };
    if (rules) options.rules = rules;
    if (tags) options.runOnly = { type: 'tag', values: tags };
    const found = await axe.run(document, options);
    const brief = (status) => (result) => ({
      status, id: result.id, impact: result.impact, tags: result.tags,
      description: result.description, help: result.help, helpUrl: result.helpUrl,
      nodes: result.nodes.map((node) => ({
        html: node.html ?? '', impact: node.impact ?? null,
        target: (node.target ?? []).flat(Infinity).join(' '),
        summary: node.failureSummary ?? null,
      })),
    });
    return { results: [...found.violations.map(brief('violation')),
                       ...found.incomplete.map(brief('needs-review'))] };
  } catch (error) {
    return { error: String(error && error.message || error) };
  }
}"""


class AxePlugin:
    label = "axe: accessibility check"
    #: the estimate at the interactive choice (bench/analyze_engines.py: 1.23 pages/s)
    seconds_per_page = 0.8
    startup_seconds = 2.0

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.headers: dict[str, str] = {}
        self.concurrency = positive_int(settings, NAME, "concurrency", 2)
        self.timeout = timeout_setting(settings, NAME, 60.0)
        styles = _switch(settings, "styles", default=True)
        online = _switch(settings, "online", default=False)
        guarded = _switch(settings, "denyPrivateNetworks", default=False)
        rules = object_setting(settings, NAME, "rules")
        node_modules = find_node_modules("axe-core")
        tool = node_package_version(node_modules, "axe-core")
        self.version = f"{VERSION}+axe-core-{tool}"
        self.locale = _locale(node_modules, string_setting(settings, NAME, "lang"))
        self.rules = {rule: {"enabled": bool(on)}
                      for rule, on in {**DEFAULT_RULES, **(rules or {})}.items()}
        script = (node_modules / "axe-core" / "axe.min.js").read_text("utf-8")
        #: the tags whose rules run (``None``: axe's default rules)
        self.tags = _run_only(settings, script)
        self.engine = BrowserEngine(
            chromium=require_chromium(),
            init_script=script,
            pages=self.concurrency, timeout=self.timeout, styles=styles, online=online,
            guard=GuardProxy() if guarded else None)

    def open(self) -> None:
        self.engine.start()

    def close(self) -> None:
        self.engine.close()

    def each_page(self, snapshot: Snapshot) -> Findings:
        answer = self.engine.evaluate(snapshot.url, snapshot.html, AUDIT,
                                      [self.locale, self.rules, self.tags], snapshot.resources)
        if "error" in answer:
            return Findings(violations=[Violation(
                validator=NAME, severity="error", rule="UNKNOWN_RULE",
                message=str(answer["error"]), url=snapshot.url)])
        return Findings(violations=[
            _violation(result, node, snapshot.url)
            for result in answer["results"]
            for node in result["nodes"]
            if result["status"] == NEEDS_REVIEW or (node["impact"] or result["impact"])
        ])


def _violation(result: Mapping[str, Any], node: Mapping[str, Any], url: str) -> Violation:
    """One element of one axe result, as axe means it: a failure at its impact, or a
    finding that needs review (never a failure's severity)."""
    impact = node["impact"] or result["impact"]
    status = NEEDS_REVIEW if result["status"] == NEEDS_REVIEW else VIOLATION
    return Violation(
        validator=NAME, severity=NEEDS_REVIEW if status == NEEDS_REVIEW else str(impact),
        rule=result["id"] or "UNKNOWN_RULE", code=str(node["html"] or node["target"]),
        message=f"{result['description'] or ''} {result['help'] or ''}({result['helpUrl'] or ''})",
        url=url, status=status, impact=impact or None,
        tags=tuple(str(tag) for tag in result["tags"] or ()),
        help_url=result["helpUrl"] or None, element=node["target"] or None,
        summary=node["summary"] or None)


def _run_only(settings: Mapping[str, Any], script: str) -> list[str] | None:
    """The tags whose rules run: ``tags`` if given, else the ``preset``'s (``None``: axe's
    default rules). A tag axe does not know is a :class:`SettingError` (axe itself would only
    log it and run no rule for it)."""
    preset = string_setting(settings, NAME, "preset") or "all"
    if preset not in PRESETS:
        raise SettingError(f"{NAME}: setting 'preset' must be one of {', '.join(PRESETS)}, "
                           f"got {preset!r}", setting="preset")
    tags = string_list_setting(settings, NAME, "tags")
    if not tags:
        chosen = PRESETS[preset]
        return list(chosen) if chosen is not None else None
    known = set(re.findall(r'"([^"]+)"', " ".join(re.findall(r"tags:\[([^\]]*)\]", script))))
    unknown = [tag for tag in tags if tag not in known]
    if unknown:
        examples = ", ".join(tag for tag in sorted(known) if re.fullmatch(
            r"wcag2\d?a+|best-practice|section508|EN-301-549|ACT|experimental", tag))
        raise SettingError(f"{NAME}: setting 'tags': axe has no rule tagged "
                           f"{', '.join(map(repr, unknown))}; its tags include {examples}",
                           setting="tags")
    return list(dict.fromkeys(tags))


def _switch(settings: Mapping[str, Any], name: str, *, default: bool) -> bool:
    value = settings.get(name, default)
    if not isinstance(value, bool):
        raise SettingError(f"{NAME}: setting {name!r} must be true or false, got {value!r}",
                           setting=name)
    return value


def _locale(node_modules: Path, lang: str | None) -> dict[str, Any] | None:
    """axe's messages in ``lang`` (``None`` or ``en``: English, axe's own), found among the
    files axe ships (a path is never built from the setting)."""
    if lang is None:
        return None
    files = {path.stem: path for path in (node_modules / "axe-core" / "locales").glob("*.json")
             if not path.stem.startswith("_")}  # _template.json is no language
    by_tag = {_tag(stem): path for stem, path in files.items()}
    tag = _tag(lang)
    language = tag.split("-", 1)[0]
    if language == "en":
        return None
    path = by_tag.get(tag) or by_tag.get(language)
    if path is None:
        raise SettingError(
            f"{NAME}: setting 'lang': axe has no messages in {lang!r}; it has en, "
            f"{', '.join(sorted(stem.replace('_', '-') for stem in files))}", setting="lang")
    locale: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return locale


def _tag(name: str) -> str:
    """A BCP 47 tag compared as axe's file names are written: ``pt_BR`` and ``pt-br`` alike."""
    return name.strip().replace("_", "-").lower()


def create(settings: Mapping[str, Any]) -> AxePlugin:
    """The entry point's factory (``nitpicker.analyze``)."""
    return AxePlugin(settings)
