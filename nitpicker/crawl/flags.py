"""Every flag of ``nitpicker crawl``, declared once: :data:`FLAGS`.

One row a flag: its name, how it is spelled, its type on the command line and its help. From
this table, and nowhere else:

- the command line is made: the Typer parameters of ``crawl``, and of ``pipeline`` for the
  roots and the crawl options (:mod:`nitpicker.cli.crawl_flags`), hence ``--help`` and the
  generated ``docs/reference/cli.md``;
- a crawl option reaches :class:`~nitpicker.crawl.config_builder.GivenOptions` under its
  name, which is the :class:`~nitpicker.crawl.config.CrawlConfig` field it sets; its default
  is that field's (a repeatable flag's is "none given");
- the modes (:mod:`nitpicker.crawl.modes`) spell the flags they refuse or need.

A flag is of one :data:`KINDS`: ``roots`` (what to crawl, shared with ``pipeline``),
``option`` (a crawl option: a ``CrawlConfig`` field, shared with ``pipeline``; ``header_file``
is read into ``headers`` by the builder), ``run`` (``crawl``'s own: the archive, the mode, how
the run is shown).

No Typer here: the crawl layer knows the flags' names and spellings, the CLI makes them
parameters.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from nitpicker.crawl.config import CrawlConfig

__all__ = ["FLAGS", "KINDS", "Flag", "flag", "flags_of", "spelling"]

Kind = Literal["roots", "option", "run"]
KINDS: Final = ("roots", "option", "run")

_CONFIG_DEFAULT: Final[Any] = object()
"""A crawl option's default: its ``CrawlConfig`` field's."""


@dataclass(frozen=True)
class Flag:
    """One flag of ``nitpicker crawl``."""

    name: str
    """The parameter's name; for a crawl option the ``CrawlConfig`` field it sets."""
    opts: tuple[str, ...]
    """As Typer takes them: ``("--parallels", "-P")``, ``("--render/--no-render",)``; none for
    the positional URLs (an argument)."""
    type: Any
    """The type on the command line (a repeatable flag: ``list[…] | None``)."""
    help: str
    kind: Kind = "option"
    default: Any = _CONFIG_DEFAULT
    show_default: bool = True

    @property
    def is_argument(self) -> bool:
        return not self.opts

    @property
    def is_repeatable(self) -> bool:
        return any(typing.get_origin(kind) is list
                   for kind in (self.type, *typing.get_args(self.type)))

    @property
    def value_default(self) -> Any:
        """Its value when not given: the one stated; else, for a crawl option, its
        ``CrawlConfig`` field's default; else (a repeatable flag, a default that is computed)
        none."""
        if self.default is not _CONFIG_DEFAULT:
            return self.default
        field = _CONFIG_FIELDS.get(self.name)
        if self.kind != "option" or self.is_repeatable or field is None:
            return None
        return None if field.default is dataclasses.MISSING else field.default

    def spelled(self, value: Any = True) -> str:
        """How a message names it: ``--render``, ``--no-render`` when ``value`` is False and
        the flag has a negative form, ``URLs`` for the positional URLs."""
        if self.is_argument:
            return "URLs"
        on, _, off = self.opts[0].partition("/")
        return off if value is False and off else on


_CONFIG_FIELDS = {field.name: field for field in dataclasses.fields(CrawlConfig)}

FLAGS: Final[tuple[Flag, ...]] = (
    # -- the roots: what to crawl --------------------------------------------------------------
    Flag("urls", (), list[str] | None, "Root URL(s): each is a start and a scope.", "roots",
         show_default=False),
    Flag("list_urls", ("--list",), list[str] | None,
         "Crawl only these URLs (list mode); repeatable.", "roots"),
    Flag("list_file", ("--list-file",), Path | None,
         "Crawl only the URLs in this file, one a line.", "roots"),
    # -- the crawl options: CrawlConfig fields -------------------------------------------------
    Flag("single", ("--single",), bool,
         "Crawl only the root page; its links are checked metadata-only."),
    Flag("recursive", ("--recursive/--no-recursive",), bool, "Follow in-scope links."),
    Flag("fetch_external", ("--fetch-external/--no-fetch-external",), bool,
         "Check out-of-scope links (status and title)."),
    Flag("image", ("--image/--no-image",), bool, "Record images."),
    Flag("render", ("--render/--no-render",), bool,
         "Render in-scope HTML pages in headless Chromium (--no-render: plain HTTP, much "
         "faster)."),
    Flag("excludes", ("--exclude",), list[str] | None,
         "Skip URLs whose path matches this glob (comma-separated allowed)."),
    Flag("exclude_keywords", ("--exclude-keyword",), list[str] | None,
         "Skip pages whose HTML contains this text or /regex/flags."),
    Flag("exclude_urls", ("--exclude-url",), list[str] | None,
         "Skip URLs starting with this prefix."),
    Flag("disable_queries", ("--disable-queries", "-Q"), bool,
         "Drop query strings from every URL."),
    Flag("user_agent", ("--user-agent",), str | None,
         "User-Agent header (default Nitpicker/<version>)."),
    Flag("headers", ("--header", "-H"), list[str] | None,
         "Extra request header 'Name: value' on in-scope requests only; repeatable. The "
         "archive keeps the name only."),
    Flag("header_file", ("--header-file",), Path | None,
         "Extra request headers from this file, one 'Name: value' a line (# comments), as "
         "repeated --header.", show_default=False),
    Flag("extract", ("--extract",), list[str] | None,
         "Read a value from every in-scope HTML page: NAME=css:SELECTOR, NAME=xpath:EXPR or "
         "NAME=regex:PATTERN; repeatable (and [crawl.extract] in nitpicker.toml)."),
    Flag("ignore_robots", ("--ignore-robots",), bool, "Do not fetch or obey robots.txt."),
    Flag("parallels", ("--parallels", "-P"), int, "Concurrent requests."),
    Flag("interval", ("--interval", "-I"), int, "Minimum delay between requests, in ms."),
    Flag("retry", ("--retry",), int, "Retries of a failed request."),
    Flag("max_pages", ("--max-pages",), int | None,
         "Stop cleanly after this many URLs (resumable)."),
    Flag("max_duration", ("--max-duration",), float | None,
         "Stop cleanly after this many seconds (resumable)."),
    Flag("max_archive_mb", ("--max-archive-mb",), float | None,
         "Storage budget: fail the run (disk_full) before the archive grows past this size."),
    Flag("dedupe_cap", ("--dedupe-cap",), int,
         "Trap cap: after N pages with one metadata signature, stop queueing their links; 0 "
         "turns it off."),
    Flag("dedupe_age_window", ("--dedupe-age-window",), int,
         "Newly discovered links after which a signature that never reached the cap is "
         "forgotten."),
    Flag("dedupe_map_cap", ("--dedupe-map-cap",), int,
         "Most signatures the trap cap keeps in memory."),
    Flag("sitemap", ("--sitemap/--no-sitemap",), bool,
         "Seed the crawl from robots.txt Sitemap: lines and /sitemap.xml."),
    Flag("predict_pagination", ("--predict-pagination/--no-predict-pagination",), bool,
         "Fetch the pages predicted ahead of pager links (/page/2, ?page=3) at once; only "
         "those that answer are recorded."),
    Flag("host_breaker", ("--host-breaker/--no-host-breaker",), bool,
         "Give up on a host after 3 connection failures in a row (a dead host costs one "
         "timeout, not one per URL): its other URLs are recorded with the same error, "
         "untried; one probe a minute may bring it back."),
    Flag("deny_private_networks", ("--deny-private-networks",), bool,
         "Refuse loopback, private, link-local and metadata addresses (SSRF guard)."),
    Flag("inventory", ("--inventory",), Path | None,
         "Also crawl the URLs in this file (one a line: a CMS export, server logs) and label "
         "them, to find pages nothing links to.", default=None),
    Flag("inventory_label", ("--inventory-label",), str,
         "A name for the --inventory file's audit record (query FILE inventory-runs)."),
    Flag("image_file_size_threshold", ("--image-file-size-threshold",), int | None,
         "Bytes above which an image file is oversized (query images --oversized lists them).",
         show_default=False),
    Flag("max_excluded_depth", ("--max-excluded-depth",), int,
         "Accepted for the original's scripts and stored; not enforced (the original never "
         "enforced it)."),
    Flag("strict", ("--strict",), bool, "Exit 1 (not 2) when only external URLs failed."),
    # -- crawl's own: the archive, the mode, how the run is shown ------------------------------
    Flag("output", ("--output", "-o"), str | None, "Archive path (.nitpicker is appended).",
         "run"),
    Flag("resume", ("--resume", "-R"), Path | None,
         "Continue the interrupted crawl in this archive.", "run"),
    Flag("append", ("--append", "-A"), Path | None,
         "Add the URLs as new roots to this archive and crawl on.", "run"),
    Flag("retry_failed", ("--retry-failed",), Path | None,
         "Fetch this archive's failed URLs (no answer, 5xx) again, and what they newly link to.",
         "run"),
    Flag("like", ("--like",), Path | None,
         "Crawl as this earlier archive's crawl did: its roots and options (any given here "
         "replaces its own), into a new archive (-o).", "run", show_default=False),
    Flag("verbose", ("--verbose",), bool, "Log every request; show tracebacks.", "run",
         default=False),
    Flag("silent", ("--silent",), bool, "No progress display or summary.", "run",
         default=False),
    Flag("diff", ("--diff",), bool,
         "The original's comparison: with two archive paths, write the URLs of their HTML pages "
         "to a.txt and b.txt (nitpicker diff compares much more).", "run", default=False),
    Flag("baseline", ("--baseline",), Path | None,
         "The earlier archive the new-* gates of --fail-on compare this crawl with.", "run",
         show_default=False),
    Flag("fail_on", ("--fail-on",), str | None,
         "Once the crawl has ended, exit 3 when one of these gates (comma-separated) trips: "
         "broken-links, 4xx, 5xx, issues:PRIORITY, violations:SEVERITY, check:ID, or with "
         "--baseline new-broken-links, new-4xx, new-5xx, removed-pages, new-violations; "
         "NAME>N trips over N.", "run", show_default=False),
    Flag("suppressions", ("--suppressions",), Path | None,
         "The accepted findings the gates do not count (default: .nitpicker-baseline.json "
         "when there is one).", "run", show_default=False),
    Flag("workers", ("--workers",), int,
         "Crawler processes crawling into the one archive (--parallels and --interval are "
         "shared between them).", "run", default=1),
    Flag("frontier", ("--frontier",), str | None,
         "redis://host:port/db[?crawl=NAME]: a distributed crawl's shared frontier; this "
         "process is one worker, recording into its own shard (-o).", "run",
         show_default=False),
    Flag("coordinate", ("--coordinate",), bool,
         "With --frontier: crawl nothing here; seed the roots and wait until the workers are "
         "done.", "run", default=False),
    Flag("merge", ("--merge",), list[Path] | None,
         "With --coordinate: the shards to merge into -o once the crawl is done; repeatable.",
         "run", show_default=False),
)

_BY_NAME = {entry.name: entry for entry in FLAGS}


def flag(name: str) -> Flag:
    """The flag of this name (``KeyError`` for none: a programming error)."""
    return _BY_NAME[name]


def flags_of(*kinds: Kind) -> tuple[Flag, ...]:
    """The flags of these kinds, in the table's order (the order ``--help`` shows)."""
    return tuple(entry for entry in FLAGS if entry.kind in kinds)


def spelling(name: str) -> str:
    """How a message names the flag ``name``: ``--list``, ``--retry-failed``, ``URLs``."""
    return _BY_NAME[name].spelled()


def _check_table() -> None:
    """Each crawl option is a ``CrawlConfig`` field (or ``header_file``, the builder's); a
    run flag or a root states its default. A mistake here is a programming error at import."""
    for entry in FLAGS:
        if entry.kind == "option" and entry.name not in _CONFIG_FIELDS | {"header_file": None}:
            raise ValueError(f"crawl option {entry.name!r} is no CrawlConfig field")
    if len(_BY_NAME) != len(FLAGS):
        raise ValueError("a crawl flag is declared twice")


_check_table()
