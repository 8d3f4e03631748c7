"""``nitpicker analyze FILE``: run the analyzer plugins over an archive's snapshots.

Which plugins (SPEC §2.2): ``--all`` → every configured one; ``--plugin NAME`` → those
(any installed plugin); otherwise every configured one when stdin or stdout is not a terminal,
and an interactive choice when both are. The plugins, the config and the runner live in
:mod:`nitpicker.analyze`; the archive writes in :mod:`nitpicker.archive.analysis_store`.
"""

from __future__ import annotations

import logging
import signal
import sqlite3
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nitpicker.analyze.config import (
    OVERRIDE_FLAGS,
    cli_overrides,
    load_config,
    plugin_name,
)
from nitpicker.analyze.discovery import OPT_IN, PluginLoadError, discover, load_plugin
from nitpicker.analyze.estimate import estimate_seconds, format_estimate
from nitpicker.analyze.runner import PluginRun, RunSummary, analyze_plugin
from nitpicker.archive.analysis_store import AnalysisStore, write_failure
from nitpicker.archive.writer import check_archive_file
from nitpicker.cli.analyze_scope import check_pages, page_estimate, restrict
from nitpicker.cli.choice import choose_many, is_terminal
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail
from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.metadata import EntryPoint

    from rich.console import Console

__all__ = ["AnalysisInterrupted", "PluginFlags", "PluginPlan", "analyze", "app",
           "configure_logging", "plan_plugins", "run_plugins", "select_plugins"]

logger = logging.getLogger(__name__)

app = typer.Typer()


class AnalysisInterrupted(Exception):
    """Ctrl-C (or SIGTERM) stopped the analysis; the archive is closed, unlocked, and keeps the
    ``done`` page analyses that finished. The command says so in its own words
    (:func:`nitpicker.cli.interrupted`): the root group's "nothing was written" would be false."""

    def __init__(self, done: int) -> None:
        super().__init__(f"{done} page analyses finished")
        self.done = done


class SelectionError(UserError):
    """``--plugin`` names a plugin that is not installed, or nothing is left to run."""


def select_plugins(*, all_: bool, named: Sequence[str], configured: Sequence[str],
                   known: Sequence[str], interactive: bool,
                   labels: Mapping[str, str] | None = None) -> list[str]:
    """The plugins to run, in order (SPEC §2.2's priority). At the interactive choice the
    opt-in plugins (:data:`~nitpicker.analyze.discovery.OPT_IN`) are listed too, but Enter
    never picks them: only their number or name does."""
    if all_:
        return list(configured)
    if named:
        wanted = [plugin_name(name) for name in named]
        unknown = [raw for raw, name in zip(named, wanted, strict=True) if name not in known]
        if unknown:
            raise SelectionError(
                f"Unknown plugin(s): {', '.join(unknown)}. Known plugins: {', '.join(known)}")
        return list(dict.fromkeys(wanted))
    if not interactive:
        return list(configured)
    choices = [*configured, *(name for name in OPT_IN if name in known and name not in configured)]
    left_out = [name for name in choices if name in OPT_IN]
    prompt = ("Plugins (e.g. 1 3; Enter for all" + (f" but {', '.join(left_out)}" if left_out
                                                    else "") + ")")
    return choose_many("What do you analyze?", choices, prompt, labels=labels,
                       name_of=plugin_name, typed_order=True,
                       defaults=[name for name in choices if name not in OPT_IN])


@dataclass(frozen=True)
class PluginFlags:
    """Which plugins, with which settings: shared by ``analyze`` and ``pipeline``
    (:mod:`~nitpicker.cli.flags`)."""

    all_: Annotated[bool, typer.Option("--all", help="Run every configured plugin, without asking.")] = False
    plugin: Annotated[list[str] | None, typer.Option("--plugin", help="Run this plugin (repeatable): axe, markuplint, textlint, search, main-contents, lighthouse, or an installed one.", show_default=False)] = None
    search_keywords: Annotated[list[str] | None, typer.Option("--search-keywords", help="search: the keywords (repeatable; /regex/flags allowed).", show_default=False)] = None
    search_scope: Annotated[str | None, typer.Option("--search-scope", help="search: only inside the element this CSS selector finds.", show_default=False)] = None
    main_content_selector: Annotated[str | None, typer.Option("--main-content-selector", help="main-contents: the CSS selector tried first for the main content.", show_default=False)] = None
    axe_lang: Annotated[str | None, typer.Option("--axe-lang", help="axe: the language of its messages (BCP 47, e.g. ja).", show_default=False)] = None
    axe_preset: Annotated[str | None, typer.Option("--axe-preset", help="axe: which rules: all (axe's defaults, best practices included), wcag-a or wcag-aa (WCAG 2.x rules only).", show_default=False)] = None
    axe_tags: Annotated[str | None, typer.Option("--axe-tags", help="axe: run the rules with any of these axe tags, comma-separated (e.g. wcag2a,wcag2aa,wcag21aa), instead of the preset's.", show_default=False)] = None
    online: Annotated[bool, typer.Option("--online", help="axe: fetch the stylesheets a snapshot names from any host (offline by default: only the page's own, recorded by the crawl).")] = False
    sample: Annotated[int | None, typer.Option("--sample", help="Analyse N pages of each template cluster, and every page no cluster covers.", metavar="N", show_default=False)] = None
    pages: Annotated[list[str] | None, typer.Option("--pages", help="Analyse only the pages whose URL matches this glob (* any text; repeatable).", metavar="URL-PATTERN", show_default=False)] = None


@dataclass(frozen=True)
class PluginPlan:
    """The plugins made for a run, how many of the selected ones could not be made, and the
    pages they analyse (``--sample``, ``--pages``: :mod:`nitpicker.query.analysis_scope`)."""

    runs: list[PluginRun]
    load_errors: int
    sample: int | None = None
    pages: tuple[str, ...] = ()


@app.command()
@with_bundles
def analyze(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    flags: PluginFlags,
    force: Annotated[bool, typer.Option("--force", help="Analyse again pages already analysed with the same plugin version and settings.")] = False,
    deny_private_networks: Annotated[bool, typer.Option("--deny-private-networks", help="The browsers of axe and Lighthouse reach no loopback, private, link-local or metadata address.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Log each page's errors; show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress display or summary.")] = False,
) -> None:
    """Run analyzer plugins over an archive's HTML snapshots and store what they find.

    Findings go into the archive: nitpicker query FILE violations, nitpicker query FILE
    page-values --plugin NAME. A re-run skips the pages each plugin has already analysed.

    Example: nitpicker analyze site.nitpicker --plugin search --search-keywords "lorem"
    """
    verbose = verbose and not silent
    configure_logging(verbose=verbose, silent=silent)
    check_archive_file(file)
    interactive = is_terminal()
    plan = plan_plugins(flags, interactive=interactive, verbose=verbose,
                        deny_private_networks=deny_private_networks,
                        pages=page_estimate(file, sample=flags.sample, pages=flags.pages) if interactive else None)
    try:
        code = run_plugins(file, plan, force=force, silent=silent, verbose=verbose)
    except AnalysisInterrupted as stop:
        from nitpicker.cli import interrupted

        interrupted(f"Interrupted: the {stop.done} page analyses finished are kept; run the same "
                    "command again to continue")
    raise typer.Exit(code)


def configure_logging(*, verbose: bool, silent: bool) -> None:
    """Plugin logs on stderr: every page's errors with ``--verbose``, none with ``--silent``.

    Replaces any handler already there (``pipeline``: the crawl's, whose level is Scrapy's).
    """
    logging.basicConfig(level=logging.DEBUG if verbose else logging.ERROR if silent
                        else logging.WARNING, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr, force=True)


def plan_plugins(flags: PluginFlags, *, interactive: bool, verbose: bool,
                 deny_private_networks: bool = False, pages: int | None = None) -> PluginPlan:
    """The plugins to run, made (SPEC §2.2's selection; the choice is asked only when
    ``interactive`` and neither ``--all`` nor ``--plugin`` is given). Bad input (the config,
    an unknown plugin, none that can be made) is one ``Error:`` line and exit 1 (raised).
    ``deny_private_networks``: the browsers of the plugins that run one are guarded;
    ``pages``: how many pages the run would analyse, for each plugin's estimated time at the
    choice."""
    if flags.sample is not None and flags.sample < 1:
        fail(f"Invalid --sample: {flags.sample}. Must be a whole number ≥ 1")
    points = discover()
    known = list(points)
    config = load_config(Path.cwd(), known)
    configured = [entry.name for entry in config.plugins]
    overrides = cli_overrides(search_keywords=flags.search_keywords,
                              search_scope=flags.search_scope,
                              main_content_selector=flags.main_content_selector,
                              axe_lang=flags.axe_lang, axe_preset=flags.axe_preset,
                              axe_tags=flags.axe_tags, online=flags.online,
                              deny_private_networks=deny_private_networks)
    interactive = interactive and not flags.all_ and not flags.plugin
    listed = [*configured, *(name for name in OPT_IN if name in points and name not in configured)]
    labels = _labels(listed, points, config.settings_of, overrides, pages) if interactive else {}
    names = select_plugins(all_=flags.all_, named=flags.plugin or [], configured=configured,
                           known=known, interactive=interactive, labels=labels)
    if not names:
        fail("No plugins to run: the config enables none and --plugin names none"
             + (f" ({config.source})" if config.source else ""))
    missing = [name for name in names if name not in points]
    if missing:  # configured bundled plugins absent from this installation
        fail(f"Plugin(s) not installed: {', '.join(missing)}. Known plugins: {', '.join(known)}")
    runs, load_errors = _load(names, points, config.settings_of, overrides, verbose=verbose,
                              source=config.source)
    if not runs:
        fail(f"No plugin could be loaded ({load_errors} failed; see above)")
    return PluginPlan(runs, load_errors, flags.sample, tuple(flags.pages or ()))


def run_plugins(file: Path, plan: PluginPlan, *, force: bool, silent: bool,
                verbose: bool) -> int:
    """Run the plan over the archive ``file``; the exit code (1 when a plugin failed or could
    not be made). A held or unreadable archive is one ``Error:`` line (raised); Ctrl-C or
    SIGTERM raises :class:`AnalysisInterrupted` once the archive is closed."""
    if plan.pages:
        check_pages(file, plan.pages)
    store = AnalysisStore.open(file)
    try:
        if plan.sample is not None or plan.pages:
            restrict(store, plan.sample, plan.pages, silent=silent)
        summaries = _run_all(store, plan.runs, force=force, silent=silent, verbose=verbose)
    except sqlite3.Error as exc:  # a corrupt file, a full disk: the archive's fault
        fail(write_failure(file, exc),
             verbose_detail=traceback.format_exc() if verbose else None)
    failed = plan.load_errors + sum(1 for s in summaries if s.outcome == "failed")
    return 1 if failed else 0


def _labels(names: Sequence[str], points: Mapping[str, EntryPoint], file_settings: Any,
            overrides: Mapping[str, Mapping[str, Any]], pages: int | None) -> dict[str, str]:
    """Each plugin's label for the interactive choice (making a plugin starts no engine),
    with its estimated time over ``pages`` and, for an opt-in one, that Enter leaves it out;
    one that cannot be made says so there, and again when it is chosen."""
    labels: dict[str, str] = {}
    for name in names:
        if name not in points:
            continue
        settings = {**file_settings(name), **overrides.get(name, {})}
        try:
            plugin = load_plugin(points[name], settings)
        except PluginLoadError:
            labels[name] = "(cannot be loaded)"
            continue
        notes = []
        seconds = estimate_seconds(plugin, pages) if pages is not None else None
        if seconds is not None and pages is not None:
            notes.append(format_estimate(seconds, pages))
        if name in OPT_IN:
            notes.append("opt-in: type its number")
        labels[name] = str(plugin.label) + (f" ({'; '.join(notes)})" if notes else "")
    return labels


def _load(names: Sequence[str], points: Mapping[str, EntryPoint],
          file_settings: Any, overrides: Mapping[str, Mapping[str, Any]], *,
          verbose: bool, source: Path | None = None) -> tuple[list[PluginRun], int]:
    """Make every selected plugin; each one that cannot be made is one ``Error:`` line.

    A factory's :class:`~nitpicker.analyze.plugin.PluginSetupError` (a bad setting, a Node
    tool not installed) is the user's to fix: the command stops there, exit 1, before the
    archive is opened, whatever the other plugins are."""
    runs: list[PluginRun] = []
    errors = 0
    setup_errors = 0
    for name in names:
        settings = {**file_settings(name), **overrides.get(name, {})}
        try:
            runs.append(PluginRun(name, load_plugin(points[name], settings), settings))
        except PluginLoadError as exc:
            errors += 1
            if verbose and exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__, file=sys.stderr)
            message = str(exc)
            if exc.setup is not None and exc.setup.setting is not None:
                setting = exc.setup.setting
                message += (f"; fix {OVERRIDE_FLAGS.get((name, setting), 'the command line')}"
                            if setting in overrides.get(name, {})
                            else f"; fix it in {source.name} (plugins.analyze.{name}.{setting})"
                            if source is not None else "")
            setup_errors += exc.setup is not None
            print(f"Error: {message}", file=sys.stderr)
    if setup_errors:
        raise typer.Exit(1)
    return runs, errors



def _run_all(store: AnalysisStore, runs: Sequence[PluginRun], *, force: bool, silent: bool,
             verbose: bool) -> list[RunSummary]:
    from rich.console import Console  # the progress display: imported only to run

    from nitpicker.cli.analyze_progress import RichProgress, SilentProgress

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    summaries: list[RunSummary] = []
    from nitpicker.cli import sigterm_stops_like_ctrl_c

    sigterm_stops_like_ctrl_c()
    # Ctrl-C is Python's KeyboardInterrupt again: after pipeline's crawl, Scrapy's shutdown
    # handler is still installed and would swallow it (its reactor is gone)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The live display only on a terminal: elsewhere (a log, a pipe) the summary lines say it
    progress = RichProgress(console) if console.is_terminal and not silent else SilentProgress()
    try:
        with progress:
            for run in runs:
                summary = analyze_plugin(store, run, force=force, progress=progress)
                summaries.append(summary)
                if not silent:
                    _print_summary(console, summary)
                elif summary.outcome == "failed":
                    print(f"Error: plugin {summary.name} failed: {summary.detail}",
                          file=sys.stderr)
    except KeyboardInterrupt:
        store.close()
        raise AnalysisInterrupted(progress.done(run.name for run in runs)) from None
    except sqlite3.Error:  # the archive cannot be written (a full disk): nothing more to commit
        store.abandon()
        raise
    except BaseException:
        store.close()
        raise
    store.close()
    if not silent:
        errors = sum(s.errors for s in summaries)
        reviews = sum(s.reviews for s in summaries)
        scope = store.scope
        sampled = (f" on {scope['selected']} of {scope['of']} pages"
                   + (f" (a sample: {scope['sample']} per template)" if scope["sample"] else "")
                   if scope is not None else "")
        console.print(f"Analysed with {len(summaries)} plugin(s){sampled}: "
                      f"{sum(s.violations for s in summaries)} violations, "
                      + (f"{reviews} needing review, " if reviews else "")
                      + f"{sum(s.values for s in summaries)} values, {errors} page error(s).")
    return summaries


def _print_summary(console: Console, summary: RunSummary) -> None:
    from rich.markup import escape

    if summary.outcome == "failed":
        console.print(f"[red]Error:[/red] plugin {escape(summary.name)} failed: "
                      f"{escape(summary.detail or 'unknown error')}")
        return
    skipped = f", {summary.skipped} already analysed" if summary.skipped else ""
    if summary.urls is not None:
        skipped += f", {summary.urls} URLs"
    reviews = f", {summary.reviews} needing review" if summary.reviews else ""
    console.print(
        f"{escape(summary.name)}: {summary.done} pages{skipped}, {summary.violations} "
        f"violations{reviews}, {summary.values} values, {summary.errors} errors in "
        f"{summary.elapsed:.1f} s ({summary.rate:.1f} pages/s)")
    if summary.done and not summary.values and not summary.violations and not summary.reviews:
        # Violations count as data (the original warned for axe and textlint: SPEC §12 Q11)
        console.print(
            f"[yellow]Note:[/yellow] {escape(summary.name)} produced no data for "
            f"{summary.done} pages ({summary.errors} errors): check its settings")
