"""The command line of ``nitpicker crawl``, made from the flag table
(:data:`nitpicker.crawl.flags.FLAGS`): the option bundles, what a command line gave, and the
config of the mode it chose.

- :data:`CrawlFlags`: the roots and the crawl options, a bundle (:mod:`nitpicker.cli.flags`)
  ``crawl`` and ``pipeline`` both take; :data:`RunFlags`: ``crawl``'s own flags. Each field is
  a row of the table made a Typer parameter: its name, spelling, type, default and help.
- :func:`given_options`: the crawl options of a command line as the builder takes them.
- :func:`build_config`: the config of a crawl run one mode's way (:mod:`nitpicker.crawl.modes`).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nitpicker.cli.crawl_ready import check_ready, read_list_file
from nitpicker.crawl.config import ConfigError
from nitpicker.crawl.config_builder import RUNTIME_OPTIONS, GivenOptions
from nitpicker.crawl.flags import flag, flags_of, spelling
from nitpicker.crawl.modes import mode, refusal_of

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.flags import Flag
    from nitpicker.crawl.modes import Mode

__all__ = ["RECRAWL_OPTIONS", "CrawlFlags", "RecrawlFlags", "RunFlags", "build_config",
           "bundle_values", "given_options", "new_crawl_config"]

RECRAWL_OPTIONS = (*RUNTIME_OPTIONS, "headers", "header_file")
"""The crawl options ``nitpicker recrawl`` takes: how the run goes, and the secrets the archive
does not keep; every other option is the archive's."""


def _parameter(entry: Flag) -> Any:
    """The row as a Typer parameter: ``Annotated[type, typer.Option(...)]``."""
    if entry.is_argument:
        info = typer.Argument(help=entry.help, show_default=entry.show_default)
    else:
        info = typer.Option(*entry.opts, help=entry.help, show_default=entry.show_default)
    return Annotated[entry.type, info]


def _bundle(name: str, doc: str, entries: Sequence[Flag]) -> type:
    """A bundle (:func:`~nitpicker.cli.flags.with_bundles`) whose fields are these rows."""
    bundle = dataclasses.make_dataclass(
        name, [(entry.name, _parameter(entry), dataclasses.field(default=entry.value_default))
               for entry in entries], frozen=True)
    bundle.__doc__ = doc
    bundle.__module__ = __name__
    return bundle


if TYPE_CHECKING:  # made from the table when imported: to a type checker, any bundle
    CrawlFlags = Any
    RunFlags = Any
    RecrawlFlags = Any
else:
    CrawlFlags = _bundle("CrawlFlags", "The roots and the crawl options: what to crawl, how.",
                         flags_of("roots", "option"))
    RunFlags = _bundle("RunFlags", "crawl's own flags: the archive, the mode, the display.",
                       flags_of("run"))
    RecrawlFlags = _bundle("RecrawlFlags", "The crawl options recrawl takes.",
                           [flag(name) for name in RECRAWL_OPTIONS])


def bundle_values(*bundles: Any) -> dict[str, Any]:
    """The bundles' values by flag name."""
    return {field.name: getattr(bundle, field.name)
            for bundle in bundles for field in dataclasses.fields(bundle)}


def given_options(ctx: typer.Context) -> GivenOptions:
    """This command line's crawl options (those its command takes): their values, the ones
    given (typed on the command line, or from the environment), and how each is spelled for a
    message."""
    values: dict[str, Any] = {}
    given: set[str] = set()
    names = {name: spelling(name) for name in ("resume", "append", "retry_failed")}
    names["list_mode"] = f"{spelling('list_urls')} or {spelling('list_file')}"
    for entry in flags_of("option"):
        if entry.name not in ctx.params:
            continue
        values[entry.name] = value = ctx.params[entry.name]
        source = ctx.get_parameter_source(entry.name)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            given.add(entry.name)
        names[entry.name] = entry.spelled(value)
    return GivenOptions(values, frozenset(given), names)


def build_config(chosen: Mode, options: GivenOptions, flags: CrawlFlags, *,
                 archive: Path | None = None, output: str | None = None) -> CrawlConfig:
    """The config of a crawl run the ``chosen`` mode's way: from the archive (``--resume``, ``--append``,
    ``--retry-failed``: the URLs are roots given again, or added), from OLD's options
    (``--like OLD``: the roots given replace OLD's), or new from the roots
    (``--list`` URLs, then ``--list-file``'s, then the positional ones). ``ConfigError`` (and
    the builder's errors) for bad input."""
    urls = list(flags.urls or [])
    if chosen.name == "like":
        return chosen.build(_like_options(options, flags, urls, output), archive, warn=_warn)
    if chosen.reads_archive:
        if urls:
            options = options.with_values(roots=tuple(urls))
        return chosen.build(options, archive)
    roots = list(flags.list_urls or [])
    if flags.list_file is not None:
        roots += read_list_file(flags.list_file)
    roots += urls
    if not roots:
        raise ConfigError(refusal_of("fresh", "urls"))
    new = options.with_values(roots=tuple(roots), output=output or "",
                              list_mode=bool(flags.list_urls or flags.list_file))
    return chosen.build(new, warn=_warn)


def _like_options(options: GivenOptions, flags: CrawlFlags, urls: list[str],
                  output: str | None) -> GivenOptions:
    """``--like``'s options: the roots (and list mode) only when URLs or a list are given,
    they replace OLD's; the output when given."""
    listed = list(flags.list_urls or [])
    if flags.list_file is not None:
        listed += read_list_file(flags.list_file)
    given: dict[str, Any] = {"output": output} if output else {}
    if listed or urls:
        given.update(roots=tuple(listed + urls), list_mode=bool(listed))
    return options.with_values(**given) if given else options


def new_crawl_config(ctx: typer.Context, flags: CrawlFlags, output: str | None) -> CrawlConfig:
    """The config of a new crawl from this command line (``pipeline``), ready to run.

    Raises one of :data:`~nitpicker.cli.crawl_ready.INPUT_ERRORS` for bad input, before
    anything is written.
    """
    config = build_config(mode("fresh"), given_options(ctx), flags, output=output)
    check_ready(config)
    return config


def _warn(message: str) -> None:
    print(f"Warning: {message}", file=sys.stderr)
