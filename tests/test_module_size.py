"""No module of the package is over 500 lines: small modules, one concept each (the house
style's rule). A module that grows past it is split by concept, not squeezed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MAX_LINES = 500

PACKAGES = ("nitpicker", "plugins", "reports")
"""The package and the two it installs beside it (``nitpicker_plugins``, ``nitpicker_reports``)."""


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def test_no_module_is_over_500_lines() -> None:
    modules = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    assert len(modules) > 100  # the walk found the package
    over = {path.relative_to(ROOT).as_posix(): lines for path in modules
            if (lines := _lines(path)) > MAX_LINES}
    assert over == {}, f"split these modules by concept (at most {MAX_LINES} lines each)"
