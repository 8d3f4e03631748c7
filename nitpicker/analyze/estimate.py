"""How long a plugin will take over an archive: shown at the interactive choice.

A plugin may say what a page costs it (``seconds_per_page``: wall-clock seconds a page at its
own ``concurrency``, on a two-core machine such as the one its figures were measured on) and
what starting its engine costs (``startup_seconds``); the host multiplies by the pages it
would analyse. A plugin that says nothing gets no estimate. The bundled plugins' figures come
from ``bench/analyze_engines.py`` and the measurements in ``bench/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["estimate_seconds", "format_estimate"]


def estimate_seconds(plugin: Any, pages: int) -> float | None:
    """Seconds the plugin would take over ``pages`` pages, or ``None`` when it gives no
    figure (or an unusable one)."""
    per_page = getattr(plugin, "seconds_per_page", None)
    startup = getattr(plugin, "startup_seconds", 0.0)
    if not _usable(per_page) or not _usable(startup):
        return None
    return float(startup) + float(per_page) * pages


def _usable(value: object) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def format_estimate(seconds: float, pages: int) -> str:
    """``about 4 min for 528 pages`` (``under a minute``, ``about 2 h 20 min``)."""
    noun = "page" if pages == 1 else "pages"
    if seconds < 60:
        return f"under a minute for {pages} {noun}"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min for {pages} {noun}"
    hours, rest = divmod(minutes, 60)
    return f"about {hours} h {rest} min for {pages} {noun}" if rest else (
        f"about {hours} h for {pages} {noun}")
