"""The contract between ``nitpicker analyze`` and an analyzer plugin.

A plugin is found through the entry-point group ``nitpicker.analyze``. The entry point's name
is the plugin's name (``axe``, ``markuplint`` …) and its object is a *factory*: a callable that
takes the plugin's settings (a mapping, from the config file merged with CLI overrides) and
returns an :class:`AnalyzePlugin`.

The host's promises to a plugin:

- ``open()`` is called once before the first page and ``close()`` once after the last (also
  after Ctrl-C or an error), so a plugin starts its engine (a browser, a Node process) once.
- ``each_page`` is called for every internal HTML page that has a snapshot, from at most
  ``concurrency`` threads at once; ``each_url`` (if the plugin has one) for every URL, internal
  and external, from the host's main thread, after the pages: ``each_url(target: PageUrl) ->
  Findings | None``. Its findings are recorded beside ``each_page``'s for the same page.
- When a call raises, the host calls it once more for the same page (a plugin whose engine
  died restarts it on that call); a second failure is recorded as a plugin error for that page
  and the run goes on.
- Returning ``None`` means "nothing to record for this page".
- A factory that raises :class:`PluginSetupError` (a bad setting, a tool not installed) stops
  the whole command before the archive is opened: one ``Error:`` line with the message and
  where to fix it, exit 1. Any other exception of a factory fails that plugin only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ENTRY_POINT_GROUP",
    "NEEDS_REVIEW",
    "STATUSES",
    "VIOLATION",
    "AnalyzePlugin",
    "Findings",
    "PageUrl",
    "PageValue",
    "PluginFactory",
    "PluginSetupError",
    "Snapshot",
    "Violation",
]

ENTRY_POINT_GROUP = "nitpicker.analyze"

VIOLATION = "violation"
"""A :class:`Violation`'s ``status``: the engine says the rule fails on the page."""
NEEDS_REVIEW = "needs-review"
"""A :class:`Violation`'s ``status`` (and its ``severity``): the engine could not decide
(axe's ``incomplete``); a person must look. Never counted as a failure."""
STATUSES = (VIOLATION, NEEDS_REVIEW)

Scalar = str | int | float | bool | None


class PluginSetupError(Exception):
    """What the user must fix before a plugin can run: a setting's type or value (``setting``
    names it), or a tool that is not installed (the message says how to install it).

    Raised by a plugin's factory, it stops ``nitpicker analyze`` before the archive is
    touched, whatever the other plugins are.
    """

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        #: the setting at fault, if one is
        self.setting = setting


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One archived page as a plugin sees it: its final URL and its HTML snapshot.

    ``resources``: the URLs of the page's sub-resources (stylesheets, scripts, images …) that
    the crawl recorded, on a host the crawl crawled (one with an internal page): the only URLs
    a plugin that loads the snapshot in a browser may fetch while it is offline (the default).
    The archive keeps no bodies of sub-resources.
    """

    page_id: int
    url: str
    html: str
    resources: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class PageUrl:
    """One URL of the archive as ``each_url`` sees it: fetched, not a redirect source."""

    page_id: int
    url: str
    is_external: bool


@dataclass(frozen=True, slots=True)
class PageValue:
    """One cell of a plugin's per-page table (SPEC §7.1 ``TableValue``)."""

    value: Scalar
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Violation:
    """One finding on one page (SPEC §7.1 ``Violation``).

    ``severity`` is the plugin's own word (axe's impacts, ``error``/``warning``/``info``;
    :data:`NEEDS_REVIEW` for a finding the engine could not decide);
    ``location`` is ``"line:col"`` in the snapshot when the plugin knows it, else ``None``.

    The optional facts an engine gives beside (axe does; all stored, migration
    ``0019_violation_details``): ``status`` :data:`VIOLATION` (the engine says the rule
    fails) or :data:`NEEDS_REVIEW` (it could not tell: a person must look, axe's
    ``incomplete``); ``impact`` the engine's own weight (axe's ``minor`` … ``critical``, also
    for a finding that needs review); ``tags`` the engine's classification of the rule (axe's
    ``wcag2aa``, ``best-practice`` …); ``help_url`` where the rule is explained;
    ``selector`` the element at fault (a CSS selector); ``summary`` why it fails there, in
    the engine's words (axe's failure summary: the contrast ratio and the colours).
    """

    validator: str
    severity: str
    rule: str
    message: str
    url: str
    code: str = ""
    location: str | None = None
    status: str = "violation"
    impact: str | None = None
    tags: tuple[str, ...] = ()
    help_url: str | None = None
    selector: str | None = None
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class Findings:
    """What one plugin found on one page: table cells keyed by header key, and violations."""

    values: Mapping[str, PageValue] = field(default_factory=dict)
    violations: Sequence[Violation] = ()


@runtime_checkable
class AnalyzePlugin(Protocol):
    """An analyzer. ``each_url`` is optional: the host looks it up with ``getattr``."""

    #: shown in the interactive selection and the progress line
    label: str
    #: recorded with every run; a new version re-analyses pages analysed by an older one
    version: str
    #: report columns: header key → column title (keys of ``Findings.values``); may be empty
    headers: Mapping[str, str]
    #: pages in flight at once for this plugin (the host's pool size), at least 1
    concurrency: int

    def open(self) -> None: ...

    def close(self) -> None: ...

    def each_page(self, snapshot: Snapshot) -> Findings | None: ...


PluginFactory = Callable[[Mapping[str, Any]], AnalyzePlugin]
