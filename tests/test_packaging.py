"""``pyproject.toml`` declares what the code imports: the package's imports in its
dependencies, what only the tests or the benchmarks import in their extras."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


NEWER_STANDARD_LIBRARY = {"compression"}
"""Standard library of a newer Python than this one, imported when there (``compression.zstd``,
3.14; before it, ``backports.zstd``: nitpicker/query/snapshot_encoding.py)."""


def _names(requirements: list[str]) -> set[str]:
    """The normalised distribution names of requirement strings (``"scrapy>=2.19"``)."""
    return {_normalise(re.split(r"[<>=!~ \[;]", req, maxsplit=1)[0]) for req in requirements}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_distributions(folder: str) -> set[str]:
    """The installed distributions whose modules the ``.py`` files under ``folder`` import
    (the standard library and the project's own packages left out)."""
    own = {"nitpicker", "nitpicker_plugins", "nitpicker_reports", "fixtures", "tests", "bench", "measuring",
           "crawl_throughput", "query_latency"}
    modules: set[str] = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module)
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                modules.add(str(node.args[0].value))
    tops = ({name.split(".")[0] for name in modules} - own - set(sys.stdlib_module_names)
            - NEWER_STANDARD_LIBRARY)
    tops.discard("__future__")
    found = packages_distributions()
    distributions = set()
    for top in tops:
        assert top in found, f"{folder}/ imports {top!r}, which no installed distribution provides"
        distributions.update(_normalise(name) for name in found[top])
    # a namespace package (zope) names every distribution that installs into it
    if "zope" in tops:
        distributions = {d for d in distributions if not d.startswith("zope") or d == "zope-interface"}
    return distributions


PACKAGE = _names(PROJECT["dependencies"])
TEST = _names(PROJECT["optional-dependencies"].get("test", []))
BENCH = _names(PROJECT["optional-dependencies"].get("bench", []))


def _package_imports() -> set[str]:
    """What the installed code imports: ``nitpicker``, the bundled plugins (``plugins/``,
    installed as ``nitpicker_plugins``) and reporters (``reports/``, as ``nitpicker_reports``)."""
    return (_imported_distributions("nitpicker") | _imported_distributions("plugins")
            | _imported_distributions("reports"))


def test_the_package_declares_what_it_imports() -> None:
    assert _package_imports() - PACKAGE == set()


def test_the_bundled_plugins_import_only_what_the_package_declares() -> None:
    """``plugins/`` installs with the package (as ``nitpicker_plugins``): no extra of its own."""
    assert _imported_distributions("plugins") - PACKAGE == set()


def test_every_dependency_is_imported_by_the_package() -> None:
    # Protego: Scrapy's robots.txt parser, whose ``sitemaps`` nitpicker/crawl/sitemaps.py reads.
    # httptools and uvloop: the HTTP parser and event loop uvicorn imports itself when they are
    # installed, which ``nitpicker view`` is served on (docs/decisions.md).
    assert PACKAGE - _package_imports() == {"protego", "httptools", "uvloop"}


@pytest.mark.parametrize(("folder", "extra"), [("tests", TEST), ("bench", BENCH)])
def test_tests_and_benchmarks_declare_what_they_import(folder: str, extra: set[str]) -> None:
    assert _imported_distributions(folder) - PACKAGE - extra == set()


def test_test_and_bench_only_packages_are_extras() -> None:
    only_outside = (_imported_distributions("tests") | _imported_distributions("bench")) - (
        _package_imports())
    assert "psutil" in only_outside
    assert only_outside & PACKAGE == set()
