"""Reading a plugin's settings (the config file's object merged with CLI overrides).

A wrong type is the user's error: :class:`SettingError` names the plugin, the setting and the
value, in one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.analyze.plugin import PluginSetupError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["SettingError", "node_package_version", "object_setting", "positive_int",
           "positive_number", "string_setting"]


class SettingError(PluginSetupError, ValueError):
    """A plugin setting has the wrong type or value (``setting`` names it): raised by a
    factory, it stops ``nitpicker analyze`` before the archive is touched."""


def positive_int(settings: Mapping[str, Any], plugin: str, name: str, default: int,
                 *, most: int | None = None) -> int:
    value = settings.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SettingError(f"{plugin}: setting {name!r} must be a whole number ≥ 1, got {value!r}",
                           setting=name)
    if most is not None and value > most:
        raise SettingError(f"{plugin}: setting {name!r} must be at most {most}, got {value!r}",
                           setting=name)
    return value


def whole_int(settings: Mapping[str, Any], plugin: str, name: str, default: int) -> int:
    """A whole number ≥ 0 (0 meaning "never", as a worker's ``recycle``)."""
    value = settings.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SettingError(f"{plugin}: setting {name!r} must be a whole number ≥ 0, got {value!r}",
                           setting=name)
    return value


def positive_number(settings: Mapping[str, Any], plugin: str, name: str,
                    default: float) -> float:
    value = settings.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise SettingError(f"{plugin}: setting {name!r} must be a number > 0, got {value!r}",
                           setting=name)
    return float(value)


def object_setting(settings: Mapping[str, Any], plugin: str, name: str) -> dict[str, Any] | None:
    """An object-valued setting (``None`` when absent), checked to survive JSON."""
    value = settings.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SettingError(f"{plugin}: setting {name!r} must be an object, got {value!r}",
                           setting=name)
    try:
        json.dumps(value)
    except (TypeError, ValueError) as error:
        raise SettingError(f"{plugin}: setting {name!r} is not plain data: {error}",
                           setting=name) from error
    return value


def string_setting(settings: Mapping[str, Any], plugin: str, name: str) -> str | None:
    value = settings.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SettingError(f"{plugin}: setting {name!r} must be a string, got {value!r}",
                           setting=name)
    return value


def node_package_version(node_modules: Path, package: str) -> str:
    """The installed version of an npm package (recorded in the plugin's version, so
    upgrading the tool re-analyses the pages)."""
    manifest = json.loads((node_modules / package / "package.json").read_text("utf-8"))
    return str(manifest["version"])
