"""``nitpicker pipeline URL …``: crawl, analyze and report in one command (SPEC §2.4).

The options are those of ``crawl``, ``analyze`` and ``report``, defined once in their bundles
(:class:`~nitpicker.cli.crawl.CrawlFlags`, :class:`~nitpicker.cli.analyze.PluginFlags`,
:class:`~nitpicker.cli.report.ReportFlags`; see :mod:`nitpicker.cli.flags`), so ``-o`` is the
report's path and ``--archive`` the archive's. Every option is checked before anything is
written — the crawl's, the plugins (never asked for: with neither ``--plugin`` nor ``--all``,
every configured plugin runs), the report's format and credentials, and that the report's path
is free — so a bad flag never wastes a crawl. Then each step runs with its own progress display
under a one-line heading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nitpicker.cli.analyze import (
    AnalysisInterrupted,
    PluginFlags,
    configure_logging,
    plan_plugins,
    run_plugins,
)
from nitpicker.cli.crawl import CrawlFlags, crawl_outcome, new_crawl_config
from nitpicker.cli.crawl_compare import baseline_gates, check_baseline, gate_after_crawl
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail
from nitpicker.cli.report import ReportFlags, ReportPlan, plan_report, write_planned
from nitpicker.query import ArchiveOpenError, DiffInputError, latest_run, open_archive
from nitpicker.report import check_output

__all__ = ["app", "final_exit", "pipeline"]

app = typer.Typer()

STEPS = {
    "crawl": "📡 [pipeline] Step 1/3: Crawling...",
    "analyze": "🔍 [pipeline] Step 2/3: Analyzing...",
    "report": "📊 [pipeline] Step 3/3: Reporting...",
    "no report": "📊 [pipeline] Step 3/3: Skipped (no --format, --output or --sheet given)",
    "done": "✅ [pipeline] All steps completed.",
}
"""The heading of each step (SPEC §2.4's texts), printed on stderr unless ``--silent``."""


@app.command()
@with_bundles
def pipeline(
    ctx: typer.Context,
    crawl_flags: CrawlFlags,
    plugin_flags: PluginFlags,
    report_flags: ReportFlags,
    archive: Annotated[str | None, typer.Option("--archive", help="Archive path (.nitpicker is appended); default: named after the site, as crawl's --output.", show_default=False)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Log every request and page error; show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No step headings, progress displays or summaries.")] = False,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="The earlier archive the new-* gates of --fail-on compare the new archive with.", show_default=False)] = None,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="Once the report is written, exit 3 when one of these gates (comma-separated) trips, as crawl --fail-on takes them (violations:SEVERITY counts the analysis too).", show_default=False)] = None,
    suppressions: Annotated[Path | None, typer.Option("--suppressions", help="The accepted findings the gates do not count (default: .nitpicker-baseline.json when there is one).", show_default=False)] = None,
) -> None:
    """Crawl a website, run the analyzer plugins over it and write its report, in one command.

    Without --format, --output or --sheet the report step is skipped. Exit 2 (and no analysis)
    when only out-of-scope URLs failed, 1 when an in-scope URL failed (--strict: any URL), 3
    when a --fail-on gate tripped.

    Example: nitpicker pipeline https://example.com/ --format html -o report.html
    """
    verbose = verbose and not silent
    config = new_crawl_config(ctx, crawl_flags, archive)
    path = Path(config.output)
    try:
        gates = baseline_gates(baseline, fail_on, suppressions)
        if baseline is not None:
            check_baseline(baseline, path)
    except ValueError as exc:
        fail(str(exc))
    except (ArchiveOpenError, DiffInputError) as exc:
        fail(f"--baseline: {exc}")
    plugins = plan_plugins(plugin_flags, interactive=False, verbose=verbose,
                           deny_private_networks=crawl_flags.deny_private_networks)
    report = _plan_report(report_flags, path)

    from nitpicker.cli.runner import run_crawl

    _heading("crawl", silent)
    result = run_crawl(config, verbose=verbose, silent=silent)
    crawl_code = crawl_outcome(config, result, verbose=verbose, silent=silent)
    if _stopped_by_signal(path):
        from nitpicker.cli import interrupted

        interrupted(f"Interrupted: the crawl stopped; analyze and report skipped. The archive "
                    f"is kept: nitpicker crawl --resume {path}")
    if crawl_code:
        fail(f"the crawl had fetch errors (exit {crawl_code}): analyze and report skipped; "
             f"the archive is {path}", code=crawl_code)

    _heading("analyze", silent)
    configure_logging(verbose=verbose, silent=silent)  # Scrapy's logging is done
    try:
        analyze_code = run_plugins(path, plugins, force=False, silent=silent, verbose=verbose)
    except AnalysisInterrupted as stop:
        from nitpicker.cli import interrupted

        interrupted(f"Interrupted: the analysis stopped; report skipped. The archive and its "
                    f"{stop.done} page analyses finished are kept: nitpicker analyze {path} "
                    "continues")

    if report is None:
        _heading("no report", silent)
    else:
        _heading("report", silent)
        write_planned(report, path, silent=silent, verbose=verbose, announce=not silent)
    code = gate_after_crawl(gates, path, final_exit(crawl=crawl_code, analyze=analyze_code),
                            silent=silent)
    if not code:
        _heading("done", silent)
    raise typer.Exit(code)


def final_exit(*, crawl: int, analyze: int) -> int:
    """The exit code of a pipeline whose every step ran: 1 when a plugin failed or could not be
    made (the report was written all the same), else the crawl's (0: a crawl with fetch errors
    ends the pipeline before this)."""
    return 1 if analyze else crawl


def _plan_report(flags: ReportFlags, archive: Path) -> ReportPlan | None:
    """The report step's plan, or ``None`` when no report is asked for; an existing output path
    is refused now, before the crawl."""
    if not flags.given:
        if flags.sheet:
            fail("--only chooses the report's sheets: give --format, --output or --sheet too")
        return None
    plan = plan_report(flags, archive, ask=False)
    if plan.path is not None:
        if plan.path.resolve() in _archive_files(archive):
            fail(f"-o is the archive this pipeline writes: {plan.path} (the report needs "
                 "another path, or the archive another --archive)")
        check_output(plan.path, plan.reporter)
    return plan


def _archive_files(archive: Path) -> set[Path]:
    """The archive's file and the files SQLite and the lock keep beside it."""
    path = archive.resolve()
    return {path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", ".lock"))}


def _stopped_by_signal(archive: Path) -> bool:
    """The crawl's run ended ``stopped`` by Ctrl-C or SIGTERM (``killed``)."""
    try:
        conn = open_archive(archive)
    except ArchiveOpenError:
        return False
    try:
        run = latest_run(conn)
    finally:
        conn.close()
    return run is not None and run["error_code"] == "killed"


def _heading(step: str, silent: bool) -> None:
    if not silent:
        typer.echo(STEPS[step], err=True)
