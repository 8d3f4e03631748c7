"""A ``nitpicker view`` server process and a headless Chromium page for the viewer's tests:
started, asked, stopped; screenshots kept under the test artifacts directory."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests
from twisted.internet.defer import Deferred

from nitpicker.render.chromium import CHROMIUM_ARGS, find_chromium

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["ARTIFACTS", "ENV", "Viewer", "command", "data", "in_browser", "needs_chromium",
           "screenshot"]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("NITPICKER_TEST_ARTIFACTS", ROOT / ".test-artifacts")) / "viewer"
"""Where the browser tests keep their screenshots (CI uploads the folder)."""

needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "nitpicker.cli", "view", *args]


ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


class Viewer:
    """A ``nitpicker view`` process: its URL (read from its first line) and its output."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(command(*args), env={**ENV, **(env or {})},
                                        stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(self.process.stdout.readline()))
        reader.start()
        reader.join(30)
        assert first and first[0].startswith("Serving "), self.stop()
        self.first_line = first[0].strip()
        self.url = self.first_line.split(" at ", 1)[1].split(" ", 1)[0]

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return requests.get(self.url + path.lstrip("/"), timeout=10, allow_redirects=False,
                            **kwargs)

    def stop(self) -> tuple[int, str]:
        """Ctrl-C (SIGINT), then the exit code and what it printed on stderr."""
        self.process.send_signal(signal.SIGINT)
        try:
            _, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err


def data(viewer: Viewer, path: str) -> Any:
    answer = viewer.get(path, headers={"Accept": "application/json"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def in_browser(test: Callable[[Page], Awaitable[None]]) -> Deferred[None]:
    """Run ``test`` with a page of headless Chromium (on the reactor's asyncio loop)."""

    async def run() -> None:
        from playwright.async_api import async_playwright

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=find_chromium(),
                                                       args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1200, "height": 900})
                await test(page)
            finally:
                await browser.close()

    return Deferred.fromFuture(asyncio.ensure_future(run()))


async def screenshot(page: Page, name: str, *, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    await page.screenshot(path=str(path), full_page=full_page)
    return path
