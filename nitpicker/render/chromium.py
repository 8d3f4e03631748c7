"""The Chromium nitpicker renders with: where it is, and the arguments it is launched with.

Looked up once per process (``nitpicker crawl`` checks for it before creating the archive, and
the crawl's render settings launch it): ``NITPICKER_CHROMIUM`` (an environment variable naming
the executable), then ``chromium``, ``chromium-browser``, ``google-chrome`` on the ``PATH``,
then Playwright's own download (``playwright install chromium``). Imports no Playwright.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from nitpicker.errors import UserError

__all__ = ["CHROMIUM_ARGS", "BrowserMissingError", "find_chromium", "require_chromium"]

#: Chromium's launch arguments: no sandbox (containers), no GPU, and none of the background
#: traffic to Google's hosts a fresh profile starts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserMissingError(UserError):
    """No Chromium to render with."""


def find_chromium() -> str | None:
    """The Chromium executable: ``NITPICKER_CHROMIUM``, then ``chromium`` on the PATH, then
    Playwright's own download (``playwright install chromium``); ``None`` when there is none."""
    cache = os.environ.get("PLAYWRIGHT_BROWSERS_PATH", str(Path.home() / ".cache/ms-playwright"))
    return _lookup(os.environ.get("NITPICKER_CHROMIUM"), os.environ.get("PATH"), cache)


@functools.cache
def _lookup(configured: str | None, path: str | None, cache: str) -> str | None:
    """The search itself, once per environment (what it depends on is its arguments)."""
    if configured:
        return configured if Path(configured).is_file() else None
    for name in _NAMES:
        found = shutil.which(name, path=path)
        if found:
            return found
    for candidate in sorted(Path(cache).glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        if candidate.is_file():
            return str(candidate)
    return None


def require_chromium() -> str:
    """The Chromium executable, or ``BrowserMissingError`` saying how to get one."""
    found = find_chromium()
    if found is None:
        raise BrowserMissingError(
            "Chromium not found: install it (apt-get install chromium, or "
            "playwright install chromium) or crawl without a browser with --no-render"
        )
    return found
