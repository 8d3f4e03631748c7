"""Finding plugins: the entry points of the group ``nitpicker.analyze``.

Every installed distribution may register plugins there (the bundled plugins do, in
pyproject.toml). Listing them imports nothing; :func:`load_plugin` imports one plugin's module
and calls its factory, and turns whatever goes wrong into one :class:`PluginLoadError` line
(a module that is not installed yet, a factory that raises, an object that is not a plugin).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Final

from nitpicker.analyze.plugin import ENTRY_POINT_GROUP, PluginSetupError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nitpicker.analyze.plugin import AnalyzePlugin

__all__ = ["BUNDLED", "OPT_IN", "PluginLoadError", "discover", "load_plugin"]

BUNDLED: Final = ("axe", "lighthouse", "main-contents", "markuplint", "search", "textlint")
"""The bundled plugins, in the original's order; when no config names any (SPEC §7.1's
fallback) all of them run but the :data:`OPT_IN` ones."""

OPT_IN: Final = ("lighthouse",)
"""Plugins that run only when named: by ``--plugin``, or by a config that lists them (then
``--all`` and a script's run take them too). Never by the bundled fallback, never by Enter at
the interactive choice. Lighthouse loads every page live, ~16 s a page: on a 528-page site,
over two hours that nobody asked for."""

_REQUIRED: Final = ("label", "version", "headers", "concurrency", "open", "close", "each_page")


class PluginLoadError(Exception):
    """A plugin cannot be imported or made; the message is one line naming it. ``setup`` is
    the factory's :class:`PluginSetupError` when it raised one (the user's to fix: the
    command stops), else ``None``."""

    def __init__(self, message: str, setup: PluginSetupError | None = None) -> None:
        super().__init__(message)
        self.setup = setup


def discover() -> dict[str, EntryPoint]:
    """Every installed plugin: its name → its entry point, sorted by name. The first
    distribution on the path wins when two register the same name."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return dict(sorted(found.items()))


def load_plugin(point: EntryPoint, settings: Mapping[str, Any]) -> AnalyzePlugin:
    """Import the plugin's factory and call it with ``settings``."""
    name = point.name
    try:
        factory = point.load()
    except Exception as exc:  # any import error of third-party code (ImportError, SyntaxError …)
        raise PluginLoadError(
            f"plugin {name}: cannot import {point.value} ({type(exc).__name__}: {exc})"
        ) from exc
    if not callable(factory):
        raise PluginLoadError(f"plugin {name}: {point.value} is not a factory (not callable)")
    try:
        plugin = factory(settings)
    except PluginSetupError as exc:  # a bad setting, a missing tool: the user's to fix
        text = _one_line(exc).removeprefix(f"{name}: ")  # SettingError names the plugin too
        raise PluginLoadError(f"plugin {name}: {text}", exc) from exc
    except Exception as exc:  # a factory refusing its settings, or failing: the plugin's fault
        raise PluginLoadError(f"plugin {name}: {_one_line(exc)}") from exc
    missing = [attr for attr in _REQUIRED if not hasattr(plugin, attr)]
    if missing:
        raise PluginLoadError(
            f"plugin {name}: {point.value} made an object without {', '.join(missing)}")
    concurrency = plugin.concurrency
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise PluginLoadError(
            f"plugin {name}: concurrency must be an integer of at least 1, not {concurrency!r}")
    return plugin  # type: ignore[no-any-return]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"
