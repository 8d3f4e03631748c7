"""The ``--extract`` rules a config file gives: ``[crawl.extract]`` of ``nitpicker.toml`` (or
``[tool.nitpicker.crawl.extract]`` of ``pyproject.toml``, the ``nitpicker.crawl.extract`` key
of ``package.json``: the file ``nitpicker analyze`` reads, :mod:`nitpicker.analyze.config`).

.. code-block:: toml

    [crawl.extract]
    price = "css:.price::text"
    sku = "regex:\"sku\":\\s*\"([^\"]+)\""

Each key is a rule's name, its value the rest of the rule (``KIND:EXPRESSION``). A new crawl
takes the file's rules, then the command line's: a rule of the same name on the command line
replaces the file's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from nitpicker.analyze.config import config_document, config_line
from nitpicker.crawl.config import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["configured_rules", "merged_rules"]


def configured_rules(cwd: Path) -> tuple[str, ...]:
    """The rules of ``cwd``'s config file as ``NAME=KIND:EXPRESSION`` specs (none: ``()``);
    :class:`ConfigError` naming the file and line of a table or value of the wrong kind."""
    found = config_document(cwd)
    if found is None:
        return ()
    path, text, document = found
    crawl = document.get("crawl") if isinstance(document, dict) else None
    if crawl is None:
        return ()
    if not isinstance(crawl, dict):
        raise ConfigError(f"{config_line(path, text, 'crawl')}: crawl must be a table (an object)")
    rules = crawl.get("extract")
    if rules is None:
        return ()
    if not isinstance(rules, dict):
        raise ConfigError(f"{config_line(path, text, 'extract')}: crawl.extract must be a table "
                          "of NAME = \"css:SELECTOR\" (or xpath:, regex:)")
    specs = []
    for name, rule in rules.items():
        if not isinstance(rule, str):
            raise ConfigError(f"{config_line(path, text, name)}: crawl.extract.{name} must be a "
                              f"string such as \"css:.price\", not {json.dumps(rule, default=str)}")
        specs.append(f"{name}={rule}")
    return tuple(specs)


def merged_rules(configured: Sequence[str], given: Sequence[str]) -> tuple[str, ...]:
    """The file's rules, then the command line's; one of the command line's replaces the
    file's rule of the same name (in its place)."""
    def name(spec: str) -> str:
        return spec.partition("=")[0].strip()

    replacing = {name(spec): spec for spec in given}
    merged = [replacing.pop(name(spec), spec) for spec in configured]
    return (*merged, *(spec for spec in given if name(spec) in replacing))
