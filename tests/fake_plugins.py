"""Analyze plugins for the tests: each behaviour the host must cope with, set by settings.

Registered in a test's own entry-point distribution (:func:`tests.fake_plugins.register`), so
a ``nitpicker analyze`` subprocess finds them exactly as it finds an installed plugin.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nitpicker.analyze.plugin import Findings, PageUrl, PageValue, Snapshot, Violation

__all__ = ["Scripted", "create", "refuse", "register"]


class Scripted:
    """``fail_always``: URL endings it always raises on; ``fail_once``: endings it raises on
    the first time only; ``delay``: seconds per page; ``violations``: one violation per page,
    no value; ``concurrency``; ``version``."""

    label = "Scripted test plugin"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = settings
        self.version = str(settings.get("version", "1"))
        self.concurrency = int(settings.get("concurrency", 1))
        self.violation_only = bool(settings.get("violations", False))
        self.headers = {} if self.violation_only else {"length": "HTML length"}
        self._failed: set[str] = set()
        self._mutex = threading.Lock()
        self.calls: list[str] = []

    def open(self) -> None:
        if self.settings.get("fail_open"):
            raise RuntimeError("engine did not start")

    def close(self) -> None:
        return None

    def each_page(self, snapshot: Snapshot) -> Findings | None:
        with self._mutex:
            self.calls.append(snapshot.url)
        time.sleep(float(self.settings.get("delay", 0)))
        if any(snapshot.url.endswith(end) for end in self.settings.get("fail_always", ())):
            raise ValueError(f"cannot read {snapshot.url}")
        for end in self.settings.get("fail_once", ()):
            if snapshot.url.endswith(end):
                with self._mutex:
                    first = snapshot.url not in self._failed
                    self._failed.add(snapshot.url)
                if first:
                    raise ConnectionError("worker crashed")
        if self.violation_only:
            return Findings(violations=[Violation(
                validator="scripted", severity="error", rule="always", url=snapshot.url,
                message=f"{len(snapshot.html)} characters", code="<html>", location="1:1")])
        return Findings(values={"length": PageValue(len(snapshot.html), snapshot.url)})


class ScriptedWithUrls(Scripted):
    """``urls = true``: also an ``each_url``, which records whether the URL is external and
    fails on the URL endings of ``fail_url``."""

    def each_url(self, target: PageUrl) -> Findings:
        if any(target.url.endswith(end) for end in self.settings.get("fail_url", ())):
            raise RuntimeError(f"cannot reach {target.url}")
        return Findings(values={"external": PageValue(target.is_external)})


def create(settings: Mapping[str, Any]) -> Scripted:
    return ScriptedWithUrls(settings) if settings.get("urls") else Scripted(settings)


def refuse(settings: Mapping[str, Any]) -> Scripted:
    raise ValueError("the setting 'x' is required")


ENTRY_POINTS = """[nitpicker.analyze]
scripted = tests.fake_plugins:create
refusing = tests.fake_plugins:refuse
missing = tests.no_such_module:create
"""


def register(directory: Path) -> Path:
    """Write a distribution registering the fake plugins into ``directory`` (put it on
    ``PYTHONPATH``, with the repository root for ``tests.fake_plugins``); returns it."""
    info = directory / "nitpicker_fake_plugins-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nitpicker-fake-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return directory
