"""An analyze plugin whose numbers are not all finite: NaN, infinity and minus infinity on every
page, beside a finite number and a note (``nitpicker analyze --plugin nonfinite``).

Registered by a distribution of its own (:func:`register`), found by a ``nitpicker``
subprocess as an installed plugin is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nitpicker.analyze.plugin import Findings, PageValue, Snapshot

__all__ = ["HEADERS", "NonFinite", "create", "register"]

HEADERS = {"nan": "Not a number", "inf": "Infinity", "minus": "Minus infinity",
           "ratio": "Ratio"}


class NonFinite:
    label = "Non-finite numbers"
    version = "1"
    concurrency = 1
    headers = HEADERS

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def each_page(self, snapshot: Snapshot) -> Findings:
        return Findings(values={
            "nan": PageValue(float("nan"), "0/0"), "inf": PageValue(float("inf")),
            "minus": PageValue(float("-inf")), "ratio": PageValue(0.5, "finite")})


def create(settings: Mapping[str, Any]) -> NonFinite:
    return NonFinite()


def register(directory: Path) -> Path:
    """Write a distribution registering ``nonfinite`` into ``directory`` (put it on
    ``PYTHONPATH`` with the repository root); returns it."""
    info = directory / "nitpicker_nonfinite_plugin-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nitpicker-nonfinite-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[nitpicker.analyze]\nnonfinite = tests.nonfinite_plugin:create\n")
    return directory
