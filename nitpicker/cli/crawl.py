"""``nitpicker crawl``: crawl a site into a ``.nitpicker`` archive.

The crawler (Scrapy, Twisted, Playwright) is imported inside the command, when it runs: the
other commands, and ``--help``, do not load it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nitpicker.cli.crawl_compare import (
    baseline_gates,
    check_baseline,
    gate_after_crawl,
    write_url_lists,
)
from nitpicker.cli.crawl_existing import crawl_append
from nitpicker.cli.crawl_existing import retry_failed as retry_failed_crawl
from nitpicker.cli.crawl_ready import check_ready, exit_code, has_credentials, read_list_file
from nitpicker.cli.flags import with_bundles
from nitpicker.cli.output import fail, print_summary
from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.crawl.config_builder import GivenOptions, new_config, resume_config
from nitpicker.query import ArchiveOpenError, DiffInputError

if TYPE_CHECKING:
    from nitpicker.cli.runner import CrawlResult

__all__ = ["CrawlFlags", "app", "check_ready", "crawl", "crawl_outcome",
           "exit_code", "new_crawl_config"]

app = typer.Typer()


@dataclass(frozen=True)
class CrawlFlags:
    """The options of a new crawl, shared by ``crawl`` and ``pipeline`` (:mod:`~nitpicker.cli.flags`).

    Every one but ``urls``, ``list_urls`` and ``list_file`` is a crawl option of
    :func:`given_options`.
    """

    urls: Annotated[list[str] | None, typer.Argument(help="Root URL(s): each is a start and a scope.", show_default=False)] = None
    list_urls: Annotated[list[str] | None, typer.Option("--list", help="Crawl only these URLs (list mode); repeatable.")] = None
    list_file: Annotated[Path | None, typer.Option("--list-file", help="Crawl only the URLs in this file, one a line.")] = None
    single: Annotated[bool, typer.Option("--single", help="Crawl only the root page; its links are checked metadata-only.")] = False
    recursive: Annotated[bool, typer.Option("--recursive/--no-recursive", help="Follow in-scope links.")] = True
    fetch_external: Annotated[bool, typer.Option("--fetch-external/--no-fetch-external", help="Check out-of-scope links (status and title).")] = True
    image: Annotated[bool, typer.Option("--image/--no-image", help="Record images.")] = True
    render: Annotated[bool, typer.Option("--render/--no-render", help="Render in-scope HTML pages in headless Chromium (--no-render: plain HTTP, much faster).")] = True
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Skip URLs whose path matches this glob (comma-separated allowed).")] = None
    exclude_keyword: Annotated[list[str] | None, typer.Option("--exclude-keyword", help="Skip pages whose HTML contains this text or /regex/flags.")] = None
    exclude_url: Annotated[list[str] | None, typer.Option("--exclude-url", help="Skip URLs starting with this prefix.")] = None
    disable_queries: Annotated[bool, typer.Option("--disable-queries", "-Q", help="Drop query strings from every URL.")] = False
    user_agent: Annotated[str | None, typer.Option("--user-agent", help="User-Agent header (default Nitpicker/<version>).")] = None
    header: Annotated[list[str] | None, typer.Option("--header", "-H", help="Extra request header 'Name: value' on in-scope requests only; repeatable. The archive keeps the name only.")] = None
    header_file: Annotated[Path | None, typer.Option("--header-file", help="Extra request headers from this file, one 'Name: value' a line (# comments), as repeated --header.", show_default=False)] = None
    ignore_robots: Annotated[bool, typer.Option("--ignore-robots", help="Do not fetch or obey robots.txt.")] = False
    parallels: Annotated[int, typer.Option("--parallels", "-P", help="Concurrent requests.")] = 10
    interval: Annotated[int, typer.Option("--interval", "-I", help="Minimum delay between requests, in ms.")] = 0
    retry: Annotated[int, typer.Option("--retry", help="Retries of a failed request.")] = 3
    max_pages: Annotated[int | None, typer.Option("--max-pages", help="Stop cleanly after this many URLs (resumable).")] = None
    max_duration: Annotated[float | None, typer.Option("--max-duration", help="Stop cleanly after this many seconds (resumable).")] = None
    max_archive_mb: Annotated[float | None, typer.Option("--max-archive-mb", help="Storage budget: fail the run (disk_full) before the archive grows past this size.")] = None
    dedupe_cap: Annotated[int, typer.Option("--dedupe-cap", help="Trap cap: after N pages with one metadata signature, stop queueing their links; 0 turns it off.")] = 100
    dedupe_age_window: Annotated[int, typer.Option("--dedupe-age-window", help="Newly discovered links after which a signature that never reached the cap is forgotten.")] = 5000
    dedupe_map_cap: Annotated[int, typer.Option("--dedupe-map-cap", help="Most signatures the trap cap keeps in memory.")] = 100_000
    sitemap: Annotated[bool, typer.Option("--sitemap/--no-sitemap", help="Seed the crawl from robots.txt Sitemap: lines and /sitemap.xml.")] = True
    predict_pagination: Annotated[bool, typer.Option("--predict-pagination/--no-predict-pagination", help="Fetch the pages predicted ahead of pager links (/page/2, ?page=3) at once; only those that answer are recorded.")] = True
    deny_private_networks: Annotated[bool, typer.Option("--deny-private-networks", help="Refuse loopback, private, link-local and metadata addresses (SSRF guard).")] = False
    inventory: Annotated[Path | None, typer.Option("--inventory", help="Also crawl the URLs in this file (one a line: a CMS export, server logs) and label them, to find pages nothing links to.")] = None
    inventory_label: Annotated[str, typer.Option("--inventory-label", help="A name for the --inventory file's audit record (query FILE inventory-runs).")] = ""
    image_file_size_threshold: Annotated[int | None, typer.Option("--image-file-size-threshold", help="Bytes above which an image file is oversized (query images --oversized lists them).", show_default=False)] = None
    max_excluded_depth: Annotated[int, typer.Option("--max-excluded-depth", help="Accepted for the original's scripts and stored; not enforced (the original never enforced it).")] = 10
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 (not 2) when only external URLs failed.")] = False


@app.command()
@with_bundles
def crawl(
    ctx: typer.Context,
    flags: CrawlFlags,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Archive path (.nitpicker is appended).")] = None,
    resume: Annotated[Path | None, typer.Option("--resume", "-R", help="Continue the interrupted crawl in this archive.")] = None,
    append: Annotated[Path | None, typer.Option("--append", "-A", help="Add the URLs as new roots to this archive and crawl on.")] = None,
    retry_failed: Annotated[Path | None, typer.Option("--retry-failed", help="Fetch this archive's failed URLs (no answer, 5xx) again, and what they newly link to.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Log every request; show tracebacks.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="No progress display or summary.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="The original's comparison: with two archive paths, write the URLs of their HTML pages to a.txt and b.txt (nitpicker diff compares much more).")] = False,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Once the crawl has ended, compare its archive with this earlier one and exit 1 when a --fail-on category is not empty.", show_default=False)] = None,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="With --baseline: the categories that fail the crawl (comma-separated), as nitpicker diff --fail-on takes them.", show_default=False)] = None,
    workers: Annotated[int, typer.Option("--workers", help="Crawler processes crawling into the one archive (--parallels and --interval are shared between them).")] = 1,
    frontier: Annotated[str | None, typer.Option("--frontier", help="redis://host:port/db[?crawl=NAME]: a distributed crawl's shared frontier; this process is one worker, recording into its own shard (-o).", show_default=False)] = None,
    coordinate: Annotated[bool, typer.Option("--coordinate", help="With --frontier: crawl nothing here; seed the roots and wait until the workers are done.")] = False,
    merge: Annotated[list[Path] | None, typer.Option("--merge", help="With --coordinate: the shards to merge into -o once the crawl is done; repeatable.", show_default=False)] = None,
) -> None:
    """Crawl a website into one .nitpicker archive (a SQLite file).

    Example: nitpicker crawl https://example.com/ -o example
    """
    urls = flags.urls or []
    if diff:
        _url_lists(urls, others={"--append": append, "--retry-failed": retry_failed,
                                 "--inventory": flags.inventory, "--resume": resume,
                                 "--baseline": baseline, "--fail-on": fail_on,
                                 "--workers": workers != 1, "--frontier": frontier,
                                 "--coordinate": coordinate, "--merge": merge})
    options = given_options(ctx)
    if frontier is not None or coordinate or merge:
        _crawl_shared(options, urls, frontier, coordinate=coordinate, merge=merge or [],
                      output=output, others={
                          "--list": flags.list_urls, "--list-file": flags.list_file,
                          "--resume": resume, "--append": append,
                          "--retry-failed": retry_failed, "--workers": workers != 1,
                          "--baseline": baseline, "--fail-on": fail_on},
                      verbose=verbose, silent=silent)
    try:
        gates = baseline_gates(baseline, fail_on)
    except ValueError as exc:
        fail(str(exc))
    except (ArchiveOpenError, DiffInputError) as exc:
        fail(f"--baseline: {exc}")
    if append is not None and retry_failed is not None:
        fail("--retry-failed and --append cannot be used together")
    if append is not None:
        if workers != 1:
            fail("--workers cannot be combined with --append (append with one process)")
        code = crawl_append(append, urls, options, list_urls=flags.list_urls,
                             list_file=flags.list_file, single=flags.single, resume=resume,
                             output=output, verbose=verbose, silent=silent, baseline=baseline)
        if baseline is not None and gates:
            code = gate_after_crawl(baseline, append, gates, silent=silent) or code
        raise typer.Exit(code)
    try:
        if retry_failed is not None:
            config = retry_failed_crawl(
                retry_failed, options, urls=urls,
                others=bool(flags.list_urls or flags.list_file or resume or output),
                silent=silent)
        else:
            config = _build_config(options, urls=urls, list_urls=flags.list_urls or [],
                                   list_file=flags.list_file, resume=resume, output=output)
        check_ready(config)
        if baseline is not None:
            check_baseline(baseline, Path(config.output))
        workers = _check_workers(workers, config, retry_failed=retry_failed is not None)
    except ValueError as exc:  # a ConfigError too; the other UserErrors: the group's line
        fail(str(exc))
    if workers > 1:
        from nitpicker.cli.workers import run_workers

        result = run_workers(config, workers, verbose=verbose, silent=silent)
    else:
        from nitpicker.cli.runner import run_crawl

        result = run_crawl(config, verbose=verbose, silent=silent)
    code = crawl_outcome(config, result, verbose=verbose, silent=silent)
    if baseline is not None and gates:
        code = gate_after_crawl(baseline, Path(config.output), gates, silent=silent) or code
    raise typer.Exit(code)


def new_crawl_config(ctx: typer.Context, flags: CrawlFlags, output: str | None) -> CrawlConfig:
    """The config of a new crawl from this command line (``pipeline``), ready to run.

    Raises a :class:`~nitpicker.errors.UserError` for bad input, before anything is written.
    """
    config = _build_config(given_options(ctx), urls=flags.urls or [],
                           list_urls=flags.list_urls or [], list_file=flags.list_file,
                           resume=None, output=output)
    check_ready(config)
    return config


def crawl_outcome(config: CrawlConfig, result: CrawlResult, *, verbose: bool,
                  silent: bool) -> int:
    """After a new crawl or a resume: the summary, and the exit code (:func:`exit_code`).

    A crawl that could not run or a failed run is one ``Error:`` line and exit 1 (raised).
    """
    if result.failure is not None:
        fail(result.failure, verbose_detail=result.traceback if verbose else None)
    if not silent:
        print_summary(Path(config.output), result)
    if result.run_failure is not None:
        fail(result.run_failure.message)
    return exit_code(result.counters, strict=config.strict)


def _url_lists(paths: list[str], others: dict[str, object]) -> None:
    """``--diff A B`` (SPEC §3.15.5): a.txt and b.txt, a pointer to ``nitpicker diff``, exit."""
    given = [name for name, value in others.items() if value]
    if given:
        fail(f"--diff cannot be used with {', '.join(given)}")
    if len(paths) != 2:
        fail("--diff takes exactly two file paths to compare")
    first, second = Path(paths[0]), Path(paths[1])
    try:
        counts = write_url_lists(first, second, Path.cwd())
    except OSError as exc:
        fail(f"Cannot write {exc.filename}: {exc.strerror}")
    print(f"Wrote a.txt ({counts[0]} URLs of {first}) and b.txt ({counts[1]} URLs of "
          f"{second}). For what changed between the two crawls (pages, links, metadata, "
          f"findings): nitpicker diff {first} {second}")
    raise typer.Exit(0)


def _crawl_shared(options: GivenOptions, urls: list[str], frontier: str | None, *,
                  coordinate: bool, merge: list[Path], output: str | None,
                  others: dict[str, object], verbose: bool, silent: bool) -> None:
    """``--frontier``: one worker of a distributed crawl, or (``--coordinate``) its
    coordinator (:mod:`nitpicker.cli.coordinate`). Exits."""
    from nitpicker.cli.runner import run_crawl
    from nitpicker.crawl.frontier_port import FrontierUnavailable
    from nitpicker.crawl.redis_frontier import (
        connect_frontier,
        crawl_id,
        parse_frontier_url,
        shard_name,
    )

    if frontier is None:
        fail("--coordinate and --merge need --frontier redis://host:port/db")
    if merge and not coordinate:
        fail("--merge goes with --coordinate (or use nitpicker merge SHARD… -o FILE)")
    given = [name for name, value in others.items() if value]
    if given:  # --workers N shares one archive; a distributed crawl's workers share Redis
        fail(f"--frontier cannot be used with {', '.join(given)}")
    if coordinate:
        from nitpicker.cli.coordinate import coordinate as run_coordinator

        if merge and not output:
            fail("--merge needs -o FILE (the merged archive)")
        config = _build_config(options, urls=urls, list_urls=[], list_file=None,
                               resume=None, output=None)
        merged = None
        if output:
            merged = Path(output if output.endswith(".nitpicker") else output + ".nitpicker")
        run_coordinator(config, frontier, shards=merge, output=merged, silent=silent)
        raise typer.Exit(0)
    try:
        config = _build_config(options, urls=urls, list_urls=[], list_file=None, resume=None,
                               output=output or shard_name(""))
        check_ready(config)
        settings = parse_frontier_url(frontier, crawl_id(config.roots))
    except ValueError as exc:  # ConfigError too
        fail(str(exc) if isinstance(exc, ConfigError) else f"--frontier: {exc}")
    try:
        connect_frontier(settings).close()  # unreachable: one line, before anything is written
    except FrontierUnavailable as exc:
        fail(str(exc))
    result = run_crawl(config, verbose=verbose, silent=silent, frontier=frontier)
    raise typer.Exit(crawl_outcome(config, result, verbose=verbose, silent=silent))


_OPTIONS = {
    "single": "single", "recursive": "recursive", "fetch_external": "fetch_external",
    "image": "image", "render": "render", "exclude": "excludes",
    "exclude_keyword": "exclude_keywords", "exclude_url": "exclude_urls",
    "disable_queries": "disable_queries", "user_agent": "user_agent", "header": "headers",
    "header_file": "header_file",
    "ignore_robots": "ignore_robots", "parallels": "parallels", "interval": "interval",
    "retry": "retry", "max_pages": "max_pages", "max_duration": "max_duration",
    "max_archive_mb": "max_archive_mb", "dedupe_cap": "dedupe_cap",
    "dedupe_age_window": "dedupe_age_window", "dedupe_map_cap": "dedupe_map_cap",
    "sitemap": "sitemap", "predict_pagination": "predict_pagination",
    "deny_private_networks": "deny_private_networks", "strict": "strict",
    "inventory": "inventory", "inventory_label": "inventory_label",
    "image_file_size_threshold": "image_file_size_threshold",
    "max_excluded_depth": "max_excluded_depth",
}
"""The flags that are crawl options: parameter name → ``CrawlConfig`` field."""


def given_options(ctx: typer.Context) -> GivenOptions:
    """This command line's crawl options: their values, the ones given, the flags as typed."""
    values: dict[str, Any] = {}
    given: set[str] = set()
    names = {"list_mode": "--list or --list-file", "resume": "--resume", "append": "--append",
             "retry_failed": "--retry-failed"}
    for param in ctx.command.params:
        option = _OPTIONS.get(param.name or "")
        if option is None:
            continue
        value = ctx.params[param.name or ""]
        values[option] = value
        source = ctx.get_parameter_source(param.name or "")
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            given.add(option)  # typed on the command line (or from the environment)
        off = value is False and param.secondary_opts
        names[option] = param.secondary_opts[0] if off else param.opts[0]
    return GivenOptions(values, frozenset(given), names)


def _build_config(options: GivenOptions, *, urls: list[str], list_urls: list[str],
                  list_file: Path | None, resume: Path | None,
                  output: str | None) -> CrawlConfig:
    if resume is not None:
        if output:
            raise ConfigError(
                "--output flag is not supported with --resume. "
                "The archive path is determined by the archive being resumed."
            )
        if list_urls or list_file or not all(has_credentials(url) for url in urls):
            raise ConfigError("--resume takes no URLs: the archive holds the crawl's roots "
                              "(only a root crawled with credentials is given again, with them)")
        if urls:
            options = options.with_values(roots=tuple(urls))
        return resume_config(resume.expanduser().resolve(), options)
    roots = list(urls)
    if list_file is not None:
        roots = read_list_file(list_file) + roots
    if list_urls:
        roots = list(list_urls) + roots
    if not roots:
        raise ConfigError("Give a URL to crawl, --list URL…, --list-file FILE or --resume FILE")
    new = options.with_values(roots=tuple(roots), list_mode=bool(list_urls or list_file),
                              output=output or "")
    return new_config(new, warn=_warn)


def _check_workers(workers: int, config: CrawlConfig, *, retry_failed: bool) -> int:
    """``--workers N``: at least 1; more than the cores is allowed, with a note; at most one
    worker per ``--parallels`` request (each needs one). Checked before any worker starts."""
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    if workers == 1:
        return 1
    if retry_failed:
        raise ConfigError("--workers cannot be combined with --retry-failed "
                          "(retry with one process)")
    from nitpicker.cli.workers import lease_seconds

    lease_seconds()  # a bad NITPICKER_LEASE_SECONDS: one line, before anything starts
    cores = os.cpu_count() or 1
    if workers > cores:
        print(f"Note: --workers {workers} is more than this machine's {cores} CPU core(s); "
              "the workers will share them", file=sys.stderr)
    if workers > config.parallels:
        print(f"Note: --workers {workers} is more than --parallels {config.parallels}; "
              f"running {config.parallels} workers, one request each", file=sys.stderr)
        workers = config.parallels
    return workers


def _warn(message: str) -> None:
    print(f"Warning: {message}", file=sys.stderr)
