"""What an analyzer plugin reads and gives back: the records of an analysis.

A plugin sees a page as a :class:`Snapshot` (``each_page``) or a :class:`PageUrl`
(``each_url``) and answers with :class:`Findings`: :class:`PageValue` cells of its table and
:class:`Violation` rows. The archive reads the snapshots and stores the findings
(:mod:`nitpicker.archive.analysis_store`); the plugin contract,
:mod:`nitpicker.analyze.plugin`, hands them on to plugins, which import them from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["NEEDS_REVIEW", "STATUSES", "VIOLATION", "Findings", "PageUrl", "PageValue", "Scalar",
           "Snapshot", "Violation"]

VIOLATION = "violation"
"""A :class:`Violation`'s ``status``: the engine says the rule fails on the page."""
NEEDS_REVIEW = "needs-review"
"""A :class:`Violation`'s ``status`` (and its ``severity``): the engine could not decide
(axe's ``incomplete``); a person must look. Never counted as a failure: its priority in the
findings is the lowest, ``info``."""
STATUSES = (VIOLATION, NEEDS_REVIEW)

Scalar = str | int | float | bool | None


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

    ``severity`` is the plugin's own word (axe's impacts, ``error``/``warning``/``info``);
    ``location`` is ``"line:col"`` in the snapshot when the plugin knows it, else ``None``;
    ``element`` names the element found at fault when the plugin can (a CSS selector), else
    ``None``: it is what the finding's fingerprint follows across crawls
    (:mod:`nitpicker.query.fingerprint`), so give it when the ``code`` quotes more than the
    element itself.

    The optional facts an engine gives beside (axe does; all stored, migration
    ``0021_violation_details``): ``status`` :data:`VIOLATION` (the engine says the rule
    fails) or :data:`NEEDS_REVIEW` (it could not tell: a person must look, axe's
    ``incomplete``; ``severity`` is then :data:`NEEDS_REVIEW` too); ``impact`` the engine's own
    weight (axe's ``minor`` … ``critical``, also for a finding that needs review); ``tags`` the
    engine's classification of the rule (axe's ``wcag2aa``, ``best-practice`` …); ``help_url``
    where the rule is explained; ``summary`` why it fails there, in the engine's words (axe's
    failure summary: the contrast ratio and the colours).
    """

    validator: str
    severity: str
    rule: str
    message: str
    url: str
    code: str = ""
    location: str | None = None
    element: str | None = None
    status: str = VIOLATION
    impact: str | None = None
    tags: tuple[str, ...] = ()
    help_url: str | None = None
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class Findings:
    """What one plugin found on one page: table cells keyed by header key, and violations."""

    values: Mapping[str, PageValue] = field(default_factory=dict)
    violations: Sequence[Violation] = ()
