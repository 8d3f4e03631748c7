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

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from nitpicker.errors import UserError

# The records a plugin reads and gives back live below the archive, which stores them; they are
# part of this contract, and imported from here by plugins.
from nitpicker.findings import (
    NEEDS_REVIEW,
    STATUSES,
    VIOLATION,
    Findings,
    PageUrl,
    PageValue,
    Snapshot,
    Violation,
)

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


class PluginSetupError(UserError):
    """What the user must fix before a plugin can run: a setting's type or value (``setting``
    names it), or a tool that is not installed (the message says how to install it).

    Raised by a plugin's factory, it stops ``nitpicker analyze`` before the archive is
    touched, whatever the other plugins are.
    """

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        #: the setting at fault, if one is
        self.setting = setting


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
