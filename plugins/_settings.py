"""Reading a plugin's settings (the config file's object merged with CLI overrides).

A wrong type is the user's error: :class:`SettingError` names the plugin, the setting and the
value, in one line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.analyze.plugin import PluginSetupError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LONGEST_TIMEOUT", "SettingError", "node_package_version", "object_setting",
           "positive_int", "string_list_setting", "string_setting", "timeout_setting"]

#: the longest per-page timeout a plugin takes, in seconds (a day): a longer one is a typo, and
#: past ~10^9 the waits themselves overflow
LONGEST_TIMEOUT = 86_400.0


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


def timeout_setting(settings: Mapping[str, Any], plugin: str, default: float,
                    name: str = "timeout") -> float:
    """Seconds per page: a finite number > 0 and at most :data:`LONGEST_TIMEOUT` (TOML and
    JSON both spell ``nan`` and ``inf``: with either, every page would fail, or none end)."""
    value = settings.get(name, default)
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or not 0 < value <= LONGEST_TIMEOUT):
        raise SettingError(f"{plugin}: setting {name!r} must be a number of seconds > 0 and at "
                           f"most {LONGEST_TIMEOUT:.0f}, got {value!r}", setting=name)
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
        json.dumps(value, allow_nan=False)  # NaN is no JSON: the Node tool could not read it
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


def string_list_setting(settings: Mapping[str, Any], plugin: str, name: str) -> list[str] | None:
    """A list of non-empty strings (``None`` when absent or empty)."""
    value = settings.get(name)
    if value is None or value == []:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip()
                                              for item in value):
        raise SettingError(f"{plugin}: setting {name!r} must be a list of non-empty strings, "
                           f"got {value!r}", setting=name)
    return [item.strip() for item in value]


def node_package_version(node_modules: Path, package: str) -> str:
    """The installed version of an npm package (recorded in the plugin's version, so
    upgrading the tool re-analyses the pages)."""
    manifest = json.loads((node_modules / package / "package.json").read_text("utf-8"))
    return str(manifest["version"])
