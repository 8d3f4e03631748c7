"""Which plugins to run, with which settings: the config file of the working directory.

Looked for in the working directory only (as the original's cosmiconfig did), the first found
wins:

1. ``nitpicker.toml``;
2. ``pyproject.toml``, its ``[tool.nitpicker]`` table (a pyproject without it is skipped);
3. ``package.json``, its ``nitpicker`` key (skipped without it), for users of the original;
4. ``.nitpickerrc`` (JSON) and ``.nitpickerrc.json``.

Every format has the original's shape: ``plugins.analyze.<name>`` is ``true`` (run it with no
settings), ``false`` (do not run it) or a table of settings, in the order the file lists them.
A name is ours (``axe``, ``main-contents``) or the original's package name
(``@nitpicker/analyze-axe``), not both for one plugin. No file, or a file without
``plugins.analyze`` (or with an empty table), gives the bundled plugins
(:data:`~nitpicker.analyze.discovery.BUNDLED`) but the opt-in ones (Lighthouse:
:data:`~nitpicker.analyze.discovery.OPT_IN`); ``plugins.analyze = false`` gives none.

The CLI's overrides (``--search-keywords`` …) are shallow-merged over a plugin's file
settings: a key given on the command line replaces the file's value of that key.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from nitpicker.analyze.discovery import BUNDLED, OPT_IN
from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

__all__ = [
    "CONFIG_FILES",
    "MAX_DEPTH",
    "OVERRIDE_FLAGS",
    "AnalyzeConfig",
    "ConfigError",
    "PluginEntry",
    "cli_overrides",
    "config_document",
    "config_line",
    "load_config",
    "plugin_name",
]

CONFIG_FILES: Final = ("nitpicker.toml", "pyproject.toml", "package.json", ".nitpickerrc",
                       ".nitpickerrc.json")

_ORIGINAL_PREFIX: Final = "@nitpicker/analyze-"

MAX_DEPTH: Final = 64
"""Most levels of tables and arrays a config may nest (deeper ones made the parsers recurse
past Python's limit, a traceback)."""

OVERRIDE_FLAGS: Final = {
    ("search", "keywords"): "--search-keywords",
    ("search", "scope"): "--search-scope",
    ("main-contents", "mainContentSelector"): "--main-content-selector",
    ("axe", "lang"): "--axe-lang",
    ("axe", "preset"): "--axe-preset",
    ("axe", "tags"): "--axe-tags",
    ("axe", "online"): "--online",
    ("axe", "denyPrivateNetworks"): "--deny-private-networks",
    ("lighthouse", "denyPrivateNetworks"): "--deny-private-networks",
}
"""The command line's flags by the (plugin, setting) each overrides (:func:`cli_overrides`)."""


class ConfigError(UserError):
    """The config file is malformed or names an unknown plugin; one line, with file and line."""


@dataclass(frozen=True, slots=True)
class PluginEntry:
    """One plugin the config enables, with its settings from the file."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AnalyzeConfig:
    """The config found: where (``None``: no file), the plugins it enables in order, and the
    settings of every plugin it names (a disabled one's too, for ``--plugin``)."""

    source: Path | None
    plugins: tuple[PluginEntry, ...]
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def settings_of(self, name: str) -> Mapping[str, Any]:
        return self.settings.get(name, {})


def plugin_name(name: str) -> str:
    """Our name of a plugin: ``@nitpicker/analyze-axe`` → ``axe``; ours unchanged."""
    return name.removeprefix(_ORIGINAL_PREFIX)


def load_config(cwd: Path, known: Collection[str]) -> AnalyzeConfig:
    """The config of ``cwd`` (see the module's docstring); ``known``: the installed plugins'
    names, against which the file's names are checked."""
    found = config_document(cwd)
    if found is None:
        return _bundled(None)
    path, text, document = found
    return _from_document(path, text, document, known)


def config_document(cwd: Path) -> tuple[Path, str, Any] | None:
    """The first config file of ``cwd`` that has nitpicker's config (:data:`CONFIG_FILES`):
    its path, its text and the config (the whole file, or its ``[tool.nitpicker]`` table, its
    ``nitpicker`` key); ``None`` when there is none. ``ConfigError`` for a malformed file."""
    for filename in CONFIG_FILES:
        path = cwd / filename
        if not path.is_file():
            continue
        text = _read(path)
        document = _parse(path, text)
        if filename == "pyproject.toml":
            tool = document.get("tool", {})
            if not isinstance(tool, dict):
                raise ConfigError(f"{_Locator(path, text).at('tool')}: tool must be a table "
                                  f"(an object), not {_shown(tool)}")
            document = tool.get("nitpicker")
        elif filename == "package.json":
            document = document.get("nitpicker") if isinstance(document, dict) else None
        if document is None:
            continue
        _check_depth(path, document)
        return path, text, document
    return None


def config_line(path: Path, text: str, key: str) -> str:
    """``file:line`` of the first line of the config that names ``key`` (for a message)."""
    return _Locator(path, text).at(key)


def _bundled(source: Path | None) -> AnalyzeConfig:
    return AnalyzeConfig(source, tuple(PluginEntry(name) for name in BUNDLED
                                       if name not in OPT_IN))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc})") from exc


def _parse(path: Path, text: str) -> Any:
    try:
        return _parse_text(path, text)
    except RecursionError as exc:  # both parsers recurse once per level of nesting
        raise ConfigError(f"{path}: nested too deeply to read (at most {MAX_DEPTH} levels "
                          "of tables and arrays)") from exc


def _check_depth(path: Path, document: Any) -> None:
    """Refuse settings nested deeper than :data:`MAX_DEPTH` (a plugin walks them)."""
    level = [document]
    for _ in range(MAX_DEPTH):
        level = [child for node in level if isinstance(node, (dict, list))
                 for child in (node.values() if isinstance(node, dict) else node)]
        if not level:
            return
    if any(isinstance(node, (dict, list)) and node for node in level):
        raise ConfigError(f"{path}: nested too deeply to read (at most {MAX_DEPTH} levels "
                          "of tables and arrays)")


def _shown(value: Any) -> str:
    return json.dumps(value, default=str)[:80]


def _parse_text(path: Path, text: str) -> Any:
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # Python 3.11's message ends "(at line L, column C)"; the error has no lineno
            line = re.search(r"at line (\d+)", str(exc))
            where = f"{path}:{line.group(1)}" if line else str(path)
            raise ConfigError(f"{where}: invalid TOML: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc


def _from_document(path: Path, text: str, document: Any, known: Collection[str]
                   ) -> AnalyzeConfig:
    where = _Locator(path, text)
    if not isinstance(document, dict):
        raise ConfigError(f"{where.at('nitpicker')}: the config must be a table (an object)")
    plugins = document.get("plugins")
    if plugins is None:
        return _bundled(path)
    if not isinstance(plugins, dict):
        raise ConfigError(f"{where.at('plugins')}: plugins must be a table (an object)")
    analyze = plugins.get("analyze")
    if analyze is None or analyze == {}:  # absent or an empty table: the bundled ones
        return _bundled(path)
    if analyze is False:  # as a plugin's false: do not run them, none of them
        return AnalyzeConfig(path, ())
    if not isinstance(analyze, dict):
        raise ConfigError(
            f"{where.at('analyze')}: plugins.analyze must be a table (an object) or false, not "
            f"{json.dumps(analyze, default=str)}")
    enabled: list[PluginEntry] = []
    settings: dict[str, dict[str, Any]] = {}
    spelled: dict[str, str] = {}  # our name -> the name the file gave it
    for raw_name, value in analyze.items():
        name = plugin_name(raw_name)
        if name not in known:
            raise ConfigError(
                f"{where.at(raw_name)}: unknown plugin {raw_name!r}. Known plugins: "
                f"{', '.join(sorted(known)) or '(none installed)'}")
        if name in spelled:  # ours and the original's name: one would drop the other's settings
            raise ConfigError(
                f"{where.at(raw_name)}: plugin {name} is named twice, as {spelled[name]!r} and "
                f"{raw_name!r}: keep one")
        spelled[name] = raw_name
        if isinstance(value, bool):
            settings[name] = {}
            if value:
                enabled.append(PluginEntry(name))
        elif isinstance(value, dict):
            settings[name] = dict(value)
            enabled.append(PluginEntry(name, dict(value)))
        else:
            raise ConfigError(
                f"{where.at(raw_name)}: plugins.analyze.{raw_name} must be true, false or a "
                f"table of settings, not {json.dumps(value, default=str)}")
    return AnalyzeConfig(path, tuple(enabled), settings)


class _Locator:
    """``file:line`` of the first line that names a key (the best a parsed document allows)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def at(self, key: str) -> str:
        pattern = re.compile(rf"""(["']{re.escape(key)}["']|(^|[\s.\[]){re.escape(key)}\s*[=\]])""")
        for number, line in enumerate(self.lines, 1):
            if pattern.search(line):
                return f"{self.path}:{number}"
        return str(self.path)


def cli_overrides(*, search_keywords: list[str] | None = None, search_scope: str | None = None,
                  main_content_selector: str | None = None, axe_lang: str | None = None,
                  axe_preset: str | None = None, axe_tags: str | None = None,
                  online: bool = False, deny_private_networks: bool = False
                  ) -> dict[str, dict[str, Any]]:
    """The settings the command line gives, by plugin: only the flags actually given (the two
    switches only ever turn their settings on: the config may have turned them on already)."""
    overrides: dict[str, dict[str, Any]] = {}
    if online:
        overrides.setdefault("axe", {})["online"] = True
    if deny_private_networks:  # every bundled plugin that runs a browser
        for plugin in ("axe", "lighthouse"):
            overrides.setdefault(plugin, {})["denyPrivateNetworks"] = True
    if search_keywords:
        overrides.setdefault("search", {})["keywords"] = list(search_keywords)
    if search_scope is not None:
        overrides.setdefault("search", {})["scope"] = search_scope
    if main_content_selector is not None:
        overrides.setdefault("main-contents", {})["mainContentSelector"] = main_content_selector
    if axe_lang is not None:
        overrides.setdefault("axe", {})["lang"] = axe_lang
    if axe_preset is not None:
        overrides.setdefault("axe", {})["preset"] = axe_preset
    if axe_tags is not None:  # comma-separated on the command line; an empty one stays bad
        overrides.setdefault("axe", {})["tags"] = [tag.strip() for tag in axe_tags.split(",")]
    return overrides
