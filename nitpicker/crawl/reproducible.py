"""Whether an archive's crawl can be reproduced: what ``nitpicker recrawl FILE`` (its pages
fetched again as its crawl fetched them) and ``nitpicker crawl --like OLD`` (a new crawl as
OLD's) both need, checked before anything is written.

An archive's settings can be reproduced when this nitpicker can crawl with exactly the
options its crawl had (:func:`reproducible_settings`):

- they are stored, as a crawl's options this version accepts (a JSON object that makes a
  :class:`~nitpicker.crawl.config.CrawlConfig`);
- none is an option this version does not know (a newer nitpicker's crawl: this one would
  drop what it does not know, and crawl otherwise);
- none of this version's options is missing, unless its absence means what its default means
  (off: no ``--inventory``, no ``--max-pages``…). An option added since that crawl, whose
  default is on or a number (``--sitemap``, ``--predict-pagination``), was not in effect then:
  this version would crawl differently. A flag given for it (``crawl --like``) settles it.

The values of ``--header`` and the passwords of roots crawled with credentials are not stored
either, on purpose: they are given again (as with ``--resume``), a line of their own
(:func:`nitpicker.crawl.config_builder.recrawl_config`). ``crawl --like`` also re-reads
OLD's ``--inventory`` file, which must be the one its crawl read
(:func:`nitpicker.crawl.config_builder.like_config`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from nitpicker.crawl.config import ConfigError, CrawlConfig

if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path

    from nitpicker.query import CrawlInfo

__all__ = ["NOT_REPRODUCIBLE", "reproducible_settings", "stored_settings"]

NOT_REPRODUCIBLE = "{path}: its crawl cannot be reproduced: {why}"
"""How a refusal reads."""

_OFF: tuple[Any, ...] = (None, False, "", ())
"""Defaults that mean "not used": an option missing from an older archive with one of them
was not used by its crawl."""

_HOW_NOT_WHAT: frozenset[str] = frozenset({"host_breaker"})
"""Options on by default that change how a crawl waits, not what it fetches and records: one
missing from an older archive is taken at its default (``--host-breaker``: a dead host's URLs
are recorded with its error either way)."""

_FIELDS = {f.name: f for f in dataclasses.fields(CrawlConfig)}


def stored_settings(path: Path) -> CrawlInfo:
    """The crawl information of the archive at ``path``; ``ConfigError`` when it cannot be
    read, or its settings are not JSON."""
    from nitpicker.crawl.append import stored_crawl_info

    try:
        return stored_crawl_info(path)
    except ValueError as exc:  # json.JSONDecodeError: settings written by something else
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=path, why=f"its stored settings are not JSON ({exc})")) from exc


def reproducible_settings(info: CrawlInfo, path: Path, *,
                          given: Collection[str] = ()) -> dict[str, Any]:
    """The archive's stored options, when its crawl can be reproduced; ``ConfigError`` naming
    why not otherwise. ``given``: options the command line sets (a missing one is then no
    obstacle)."""
    data = info.config
    if not isinstance(data, dict) or not data.get("roots"):
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=path, why="its stored settings are not a crawl's options"))
    unknown = sorted(name for name in data if name not in _FIELDS)
    if unknown:
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=path, why=f"it was crawled by nitpicker {info.version} with options this "
                           f"version does not know ({', '.join(unknown)}); use that version "
                           "or a newer one"))
    missing = [name for name, f in _FIELDS.items()
               if name not in data and name not in given and _default(f) not in _OFF
               and name not in _HOW_NOT_WHAT]
    if missing:
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=path, why=f"it was crawled by nitpicker {info.version}, before {flags} "
                           "existed, whose default may crawl otherwise; crawl anew, or give "
                           f"{'it' if len(missing) == 1 else 'them'} with crawl --like"))
    try:
        CrawlConfig.from_json(json.dumps(data), output=str(path))
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=path, why=f"its stored settings are not accepted ({exc})")) from exc
    return data


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None
