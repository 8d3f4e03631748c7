"""The modes of ``nitpicker crawl``, as data: :data:`MODES`.

A mode is a way a crawl runs — a fresh crawl, ``--like``, ``--resume``, ``--append``,
``--retry-failed``, ``--diff``, ``--frontier``, ``--coordinate`` — or a modifier of one
(``--list``, ``--single``, ``--workers``, ``--baseline``, ``--merge``). (A recrawl of some
URLs of an archive is a command of its own, ``nitpicker recrawl``, with the runtime options
only: :mod:`nitpicker.cli.recrawl`.) One row each: the flags that select it, its line
in the help, its rules (the flags it refuses, the flags it needs) and, for a way a crawl runs,
the builder its config comes from. From this table, and nowhere else:

- the refusals: :func:`refusal` walks the rows in order and gives the first broken rule's one
  line, before any file is read (an option given with a mode that keeps the archive's options
  is the builder's to judge: "cannot change with --resume");
- the mode that runs (:func:`chosen_mode`) and its config (:meth:`Mode.build`);
- the modes in ``nitpicker crawl --help`` (:func:`modes_help`).

A flag (:mod:`nitpicker.crawl.flags`) counts as given when its value is neither its default
nor empty (``--workers 1`` and ``-o ''`` are not given). Two facts are not flags: ``urls``, a positional URL given, and
``bare_urls``, a URL given without credentials (a mode that takes its roots from the archive
takes back only a root crawled with credentials, given again with them).
"""

from __future__ import annotations

import logging
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from nitpicker.crawl.config_builder import (
    append_config,
    like_config,
    new_config,
    resume_config,
    retry_failed_config,
)
from nitpicker.crawl.flags import flag, spelling
from nitpicker.policy.request_headers import credentials_of
from nitpicker.policy.urls import parse_url
from nitpicker.policy.userinfo import typed_url

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.crawl.config_builder import GivenOptions

    Builder = Callable[[GivenOptions, Path | None, Callable[[str], None]], CrawlConfig]

__all__ = ["BARE_URLS", "MODES", "Mode", "Rule", "chosen_mode", "given_flags", "mode",
           "modes_help", "refusal", "refusal_of"]

logger = logging.getLogger(__name__)

BARE_URLS: Final = "bare_urls"
"""Not a flag: a positional URL given without credentials."""

_NOT_WITH: Final = "{mode} cannot be used with {given}"


@dataclass(frozen=True)
class Rule:
    """One refusal of a mode: any of ``flags`` given (``needs``: none of them given).

    ``message`` is the one line, with ``{mode}`` (the mode's flag), ``{given}`` (the rule's
    flags given), ``{flags}`` (all of them: ``a, b or c``) and any flag's name (``{output}``)
    standing for their spelling.
    """

    flags: tuple[str, ...]
    message: str = _NOT_WITH
    needs: bool = False

    def broken(self, given: Collection[str]) -> list[str] | None:
        """The rule's flags given when the rule is broken, else ``None``."""
        hit = [name for name in self.flags if name in given]
        return (None if hit else []) if self.needs else (hit or None)

    def line(self, mode: str, given: list[str]) -> str:
        return self.message.format_map(_Spellings(mode=mode, given=_listed(given, ", "),
                                                  flags=_listed(self.flags, " or ")))


def refuse(*flags: str, message: str = _NOT_WITH) -> Rule:
    return Rule(flags, message)


def need(*flags: str, message: str) -> Rule:
    return Rule(flags, message, needs=True)


def _new(options: GivenOptions, archive: Path | None, warn: Callable[[str], None]) -> CrawlConfig:
    return new_config(options, warn=warn)


def _like(options: GivenOptions, archive: Path | None, warn: Callable[[str], None]) -> CrawlConfig:
    return like_config(_resolved(archive), options, warn=warn)


def _resume(options: GivenOptions, archive: Path | None,
            warn: Callable[[str], None]) -> CrawlConfig:
    return resume_config(_resolved(archive), options)


def _append(options: GivenOptions, archive: Path | None,
            warn: Callable[[str], None]) -> CrawlConfig:
    return append_config(_resolved(archive), options.values.get("roots") or (), options)


def _retry_failed(options: GivenOptions, archive: Path | None,
                  warn: Callable[[str], None]) -> CrawlConfig:
    return retry_failed_config(_resolved(archive), options)


@dataclass(frozen=True)
class Mode:
    """One mode of ``nitpicker crawl``."""

    name: str
    selected_by: tuple[str, ...]
    """The flags that select it (any of them given); none: the fresh crawl, when no other way
    a crawl runs is selected."""
    usage: str
    """How it is written, the flags as ``{name}``: ``{resume} FILE``."""
    summary: str
    rules: tuple[Rule, ...] = ()
    builder: Builder | None = None
    """Where a crawl run this way gets its config; ``None``: a modifier of the way chosen (or
    ``--diff``, which crawls nothing)."""
    alone: bool = True
    """One way a crawl runs (at most one is given: the rules refuse two); else a modifier."""

    @property
    def flag(self) -> str:
        """How a message names the mode (``{mode}``): its first flag's spelling."""
        return spelling(self.selected_by[0]) if self.selected_by else "a crawl"

    @property
    def reads_archive(self) -> bool:
        """Whether its crawl's options are the archive's (its flag names the archive)."""
        return self.builder in (_resume, _append, _retry_failed)

    def selected(self, given: Collection[str]) -> bool:
        if not self.selected_by:
            return not any(row.alone and row.selected(given) for row in MODES
                           if row.selected_by)
        return any(name in given for name in self.selected_by)

    def refusal(self, given: Collection[str]) -> str | None:
        """The first of its rules that ``given`` breaks, as its one line."""
        for rule in self.rules:
            hit = rule.broken(given)
            if hit is not None:
                return rule.line(self.flag, hit)
        return None

    def build(self, options: GivenOptions, archive: Path | None = None, *,
              warn: Callable[[str], None] = logger.warning) -> CrawlConfig:
        """This mode's config: a new crawl's from ``options`` (roots among them), or the one
        stored in ``archive`` with ``options`` honoured or refused."""
        if self.builder is None:
            raise ValueError(f"the {self.name} mode builds no config")
        return self.builder(options, archive, warn)

    def not_with(self) -> list[str]:
        """The flags refused with it: by its own rules, and by the modes that refuse its flags."""
        names = [name for rule in self.rules if not rule.needs for name in rule.flags]
        for row in MODES:
            refused = {name for rule in row.rules if not rule.needs for name in rule.flags}
            if row is not self and refused & set(self.selected_by):
                names.append(row.selected_by[0])
        return list(dict.fromkeys(names))


_NEED_FRONTIER = "{coordinate} and {merge} need {frontier} redis://host:port/db"
_FROM_ARCHIVE = ("the archive holds the crawl{roots} (only a root crawled with credentials is "
                 "given again, with them)")

MODES: Final[tuple[Mode, ...]] = (
    Mode("diff", ("diff",), "{diff} A B",
         "the original's comparison: the URLs of the HTML pages of two archives into a.txt "
         "and b.txt",
         (refuse("append", "retry_failed", "inventory", "resume", "baseline", "fail_on",
                 "suppressions", "workers", "frontier", "coordinate", "merge", "like"),)),
    Mode("coordinate", ("coordinate",), "{coordinate} {frontier} REDIS URL…",
         "seed a distributed crawl and wait for its workers; crawl nothing here",
         (need("frontier", message=_NEED_FRONTIER),), _new),
    Mode("merge", ("merge",), "{merge} SHARD -o FILE",
         "once the distributed crawl is done, merge its shards into FILE",
         (need("frontier", message=_NEED_FRONTIER),
          need("coordinate", message="{merge} goes with {coordinate} (or use nitpicker merge "
                                     "SHARD… -o FILE)"),
          need("output", message="{merge} needs -o FILE (the merged archive)")),
         alone=False),
    Mode("frontier", ("frontier",), "{frontier} REDIS URL…",
         "one worker of a distributed crawl, recording into its own shard",
         (refuse("list_urls", "list_file", "resume", "append", "retry_failed", "workers",
                 "baseline", "fail_on", "suppressions", "like"),), _new),
    Mode("like", ("like",), "{like} OLD [URL…] -o NEW",
         "crawl OLD's roots with its options into a new archive (a flag or URL given replaces "
         "OLD's), for nitpicker diff OLD NEW",
         (refuse("resume", "append", "retry_failed",
                 message="{mode} crawls into a new archive: not with {given}"),),
         _like),
    Mode("append", ("append",), "{append} FILE URL…",
         "add the URLs as new roots to this archive and crawl on",
         (refuse("retry_failed", message="{given} and {mode} cannot be used together"),
          refuse("workers", message="{given} cannot be combined with {mode} (append with one "
                                    "process)"),
          refuse("output", message="{output} flag is not supported with {mode}. The archive "
                                   "path is the file being appended."),
          refuse("resume", message="{given} and {mode} cannot be used together. Pick the "
                                   "existing-archive mode that fits your task."),
          refuse("list_urls", "list_file", "single", message="{mode} cannot be combined with "
                                                             "{flags}")),
         _append),
    Mode("retry-failed", ("retry_failed",), "{retry_failed} FILE",
         "fetch this archive's failed URLs (no answer, 5xx) again, and what they newly link to",
         (refuse(BARE_URLS, "output", "resume", "list_urls", "list_file",
                 message="{mode} takes no URLs and no {output}, {resume}, {list_urls} or "
                         "{list_file}: " + _FROM_ARCHIVE.format(roots="")),
          refuse("workers", message="{given} cannot be combined with {mode} (retry with one "
                                    "process)")),
         _retry_failed),
    Mode("resume", ("resume",), "{resume} FILE",
         "continue the interrupted crawl in this archive, with its options",
         (refuse("output", message="{output} flag is not supported with {mode}. The archive "
                                   "path is determined by the archive being resumed."),
          refuse(BARE_URLS, "list_urls", "list_file",
                 message="{mode} takes no URLs, {list_urls} or {list_file}: "
                         + _FROM_ARCHIVE.format(roots="'s roots"))),
         _resume),
    Mode("workers", ("workers",), "{workers} N",
         "N crawler processes crawling into the one archive", alone=False),
    Mode("baseline", ("baseline",), "{baseline} OLD {fail_on} GATES",
         "once the crawl has ended, compare it with OLD: exit 3 when a gate trips",
         alone=False),
    Mode("list", ("list_urls", "list_file"), "{list_urls} URL / {list_file} FILE",
         "crawl only these URLs; their links are checked metadata-only", alone=False),
    Mode("single", ("single",), "{single} URL",
         "crawl only the root page; its links are checked metadata-only", alone=False),
    Mode("fresh", (), "URL…", "crawl from each root URL into a new archive (-o PATH)",
         (need("urls", "list_urls", "list_file",
               message="Give a URL to crawl, {list_urls} URL…, {list_file} FILE or {resume} "
                       "FILE"),),
         _new),
)
"""The rows in the order their rules are checked: the first broken rule is the line shown."""

HELP_ORDER: Final = ("fresh", "list", "single", "like", "resume", "append", "retry-failed",
                     "workers", "baseline", "diff", "frontier", "coordinate", "merge")
"""The order ``--help`` lists the modes in: the plainest first (the table's is the order the
rules are checked in)."""


_BY_NAME = {row.name: row for row in MODES}
if sorted(_BY_NAME) != sorted(HELP_ORDER):  # a mode added to one and not the other
    raise ValueError("MODES and HELP_ORDER name different modes")


def mode(name: str) -> Mode:
    """The mode of this name (``KeyError`` for none: a programming error)."""
    return _BY_NAME[name]


def given_flags(values: Mapping[str, Any]) -> frozenset[str]:
    """The flags of a command line given, by name, from their values (flag name → value): a
    flag whose value is neither its default nor empty; ``urls`` and ``bare_urls`` from the
    positional URLs."""
    given = {name for name, value in values.items()
             if name != "urls" and value not in (flag(name).value_default, "", [])}
    urls = values.get("urls") or ()
    if urls:
        given.add("urls")
    if not all(_has_credentials(url) for url in urls):
        given.add(BARE_URLS)
    return frozenset(given)


def refusal(given: Collection[str]) -> str | None:
    """The one line refusing this combination of flags (by name), or ``None``: the first rule
    broken of the modes ``given`` selects, in the table's order."""
    for row in MODES:
        if row.selected(given):
            line = row.refusal(given)
            if line is not None:
                return line
    return None


def chosen_mode(given: Collection[str]) -> Mode:
    """The way the crawl runs: the first mode ``given`` selects that runs alone, else a fresh
    crawl. (Two are refused by :func:`refusal`.)"""
    return next(row for row in MODES if row.alone and row.selected(given))


def refusal_of(name: str, flag: str) -> str:
    """The line of the mode ``name``'s first rule on ``flag``, as if it were broken by it."""
    row = _BY_NAME[name]
    rule = next(rule for rule in row.rules if flag in rule.flags)
    return rule.line(row.flag, [] if rule.needs else [flag])


def modes_help(width: int = 78) -> str:
    """The modes for ``--help``: a block (``\\b``: kept as written) of each mode's usage, what
    it is, the flags refused with it and those it needs."""
    lines = ["\b"]
    for row in (_BY_NAME[name] for name in HELP_ORDER):
        text = row.summary
        refused = row.not_with()
        if refused:
            text += "; not with " + ", ".join(_spelled(name) for name in refused)
        needs = [_listed(rule.flags, " or ") for rule in row.rules if rule.needs]
        if needs and row.selected_by:
            text += "; needs " + ", ".join(needs)
        usage = row.usage.format_map(_Spellings())
        lines.append(f"{row.name}: {usage}")
        lines += textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="    ",
                               break_on_hyphens=False)
    return "\n".join(lines)


def _spelled(name: str) -> str:
    return "URLs" if name in (BARE_URLS, "urls") else spelling(name)


def _listed(names: Collection[str], last: str) -> str:
    words = [_spelled(name) for name in names]
    return ", ".join(words[:-1]) + last + words[-1] if len(words) > 1 else "".join(words)


def _has_credentials(url: str) -> bool:
    parsed = parse_url(typed_url(url))
    return parsed is not None and credentials_of(parsed) is not None


def _resolved(archive: Path | None) -> Path:
    if archive is None:
        raise ValueError("this mode's builder needs the archive")
    return archive.expanduser().resolve()


class _Spellings(dict[str, str]):
    """A message's fields: those given, and every flag's spelling by its name."""

    def __missing__(self, key: str) -> str:
        return _spelled(key)
