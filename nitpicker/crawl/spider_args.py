"""A crawl's options as strings: ``scrapy crawl site -a key=value`` and a Scrapyd job's arguments.

:func:`config_from_spider_args` reads them as the options ``nitpicker crawl`` would give
(:class:`~nitpicker.crawl.config_builder.GivenOptions`: comma-separated lists, ``true`` /
``false``, numbers) and builds the config with the one builder: a new crawl, or with
``resume=true`` the archive that ``output`` names, from its stored options.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from nitpicker.crawl.config import (
    _INVENTORY_READ,
    ConfigError,
    CrawlConfig,
    resolve_output_path,
)
from nitpicker.crawl.config_builder import GivenOptions, new_config, resume_config
from nitpicker.policy.excludes import split_globs

__all__ = ["config_from_spider_args"]

_ARGUMENT_ALIASES = {"header": "headers"}
"""``-a header=…`` is ``-a headers=…``."""


def config_from_spider_args(args: dict[str, Any]) -> CrawlConfig:
    """Build from ``scrapy crawl site -a key=value`` strings (comma-separated lists).

    ``name`` and keys starting with ``_`` (Scrapyd's ``_job``) are Scrapy's, not crawl
    options: they are left out.
    With ``resume=true``, ``output`` names the archive and its stored options are used
    (:func:`nitpicker.crawl.config_builder.resume_config`).
    """
    known = {f.name: f for f in dataclasses.fields(CrawlConfig)}
    values: dict[str, Any] = {}
    for raw_key, raw in args.items():
        if raw_key == "name" or raw_key.startswith("_"):
            continue
        key = _ARGUMENT_ALIASES.get(raw_key, raw_key.replace("-", "_"))
        # what the inventory holds comes from inventory=FILE; credentials from roots
        if key not in known or key in (*_INVENTORY_READ, "credentials"):
            raise ConfigError(f"unknown crawl argument {raw_key!r}")
        values[key] = _coerce(key, raw, known[key].type)
    options = GivenOptions(values, frozenset(values))
    if "append" in values:
        raise ConfigError("append is not a crawl argument: add roots to an archive with "
                          "nitpicker crawl --append FILE URL… (it keeps a backup)")
    if "retry_failed" in values:
        raise ConfigError("retry_failed is not a crawl argument: fetch an archive's failed "
                          "URLs again with nitpicker crawl --retry-failed FILE")
    if values.get("resume"):
        if not values.get("output"):
            raise ConfigError("missing crawl argument: -a output=FILE (the archive to resume)")
        return resume_config(Path(resolve_output_path(values["output"], "")), options)
    if not values.get("roots"):
        raise ConfigError("missing crawl argument: -a roots=URL[,URL…]")
    return new_config(options)


def _coerce(key: str, raw: Any, annotation: Any) -> Any:
    if not isinstance(raw, str):
        return tuple(raw) if isinstance(raw, list) else raw
    kind = str(annotation)
    if kind == "bool":
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"argument {key}: expected true or false, got {raw!r}")
    if kind in ("float", "float | None"):
        try:
            return float(raw)
        except ValueError as exc:
            raise ConfigError(f"argument {key}: expected a number, got {raw!r}") from exc
    if kind in ("int", "int | None"):
        try:
            return int(raw)
        except ValueError as exc:
            raise ConfigError(f"argument {key}: expected a number, got {raw!r}") from exc
    if kind.startswith("tuple"):
        if key == "excludes":
            return tuple(split_globs(raw))
        if key in ("headers", "extract"):  # a value may hold commas: one a line
            return tuple(line.removesuffix("\r") for line in raw.split("\n") if line.strip())
        return tuple(v.strip() for v in raw.split(",") if v.strip())
    return raw
