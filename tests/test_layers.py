"""The layer contract (.importlinter; docs/ARCHITECTURE.md, "The layers"): the house keeps it,
and a deliberately wrong import breaks the contract that forbids it.

Each wrong import is written into a copy of the three packages (``nitpicker``, and
``plugins/``, ``reports/`` under their installed names) in a temporary directory, which the
contract file then checks, contract by contract: a contract dropped from the file, or one that
stopped checking what it says, fails here.
"""

from __future__ import annotations

import abc
import configparser
import contextlib
import io
import shutil
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / ".importlinter"
PACKAGES = {"nitpicker": "nitpicker", "nitpicker_plugins": "plugins",
            "nitpicker_reports": "reports"}
"""Installed name → directory in the repository."""

WRONG = [
    pytest.param("layers", {"nitpicker/policy/wrong.py":
                            "from nitpicker.crawl.session import CrawlSession\n"},
                 "nitpicker.policy.wrong -> nitpicker.crawl.session", id="policy-imports-crawl"),
    pytest.param("layers", {"nitpicker/archive/wrong.py":
                            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                            "    from nitpicker.crawl.config import CrawlConfig\n"},
                 "nitpicker.archive.wrong -> nitpicker.crawl.config", id="type-only-import"),
    pytest.param("layers", {"nitpicker/query/wrong.py":
                            "from nitpicker.archive.writer import ArchiveWriter\n"},
                 "nitpicker.query.wrong -> nitpicker.archive.writer", id="query-imports-writer"),
    pytest.param("layers", {"nitpicker/unplaced.py": "class Unplaced(Exception): ...\n"},
                 "- nitpicker.unplaced", id="a-module-on-no-layer"),
    pytest.param("archive-file", {"nitpicker/archive/schema.py":
                                  "\nfrom nitpicker.archive.connection import connect\n"},
                 "nitpicker.archive.schema -> nitpicker.archive.connection",
                 id="schema-imports-archive"),
    pytest.param("query-no-crawler", {"nitpicker/query/wrong.py": "import scrapy\n"},
                 "nitpicker.query.wrong -> scrapy", id="query-imports-scrapy"),
    pytest.param("core-no-bundled", {"nitpicker/cli/wrong.py":
                                     "from nitpicker_reports.google_sheets import SheetsReporter\n"},
                 "nitpicker.cli.wrong -> nitpicker_reports.google_sheets",
                 id="cli-imports-a-bundled-reporter"),
    pytest.param("no-cycles", {"nitpicker/crawl/wrong_a.py": "from nitpicker.crawl import wrong_b\n",
                               "nitpicker/crawl/wrong_b.py":
                               "def later() -> None:\n    from nitpicker.crawl import wrong_a\n"},
                 ".wrong_b -> .wrong_a", id="cycle-hidden-inside-a-function"),
]


@pytest.fixture(autouse=True)
def _readable_contracts(monkeypatch: pytest.MonkeyPatch) -> None:
    """import-linter reads a contract's options by ``getattr`` over ``dir`` of its class, an
    ``abc.ABC``. Once Scrapy is imported (the tests' process), zope.interface has left on
    ``abc.ABC`` a ``__provides__`` that only ``abc.ABC`` itself may read (a subclass gets an
    ``AttributeError``): out of the way while a test reads the contract file."""
    monkeypatch.delattr(abc.ABC, "__provides__", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))  # lint_imports puts the cwd first


def _lint(*contracts: str) -> tuple[int, str]:
    """The contract file's verdict on the packages importable as ``nitpicker`` & co. now."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = lint_imports(config_filenames=(str(CONTRACT),), limit_to_contracts=contracts,
                            no_cache=True)
    return code, out.getvalue()


def test_the_house_keeps_its_layer_contract() -> None:
    code, report = _lint()
    assert code == 0, report
    assert "BROKEN" not in report


def test_every_contract_is_shown_to_break() -> None:
    """A contract added to the file gets its wrong import in :data:`WRONG`."""
    parser = configparser.ConfigParser()
    parser.read(CONTRACT)
    contracts = {section.split(":", 2)[2] for section in parser.sections()
                 if section.startswith("importlinter:contract:")}
    assert contracts == {case.values[0] for case in WRONG}


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The packages copied into ``tmp_path``, which the contract then reads instead."""
    for name, directory in PACKAGES.items():
        shutil.copytree(ROOT / directory, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__", "node"))
        # import-linter finds a package where importlib does: in the working directory, which
        # it puts first on the path, once the one this process imported is out of the way
        # (it is put back after the test)
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("contract", "written", "named"), WRONG)
def test_a_wrong_import_breaks_its_contract(copied: Path, contract: str, written: dict[str, str],
                                           named: str) -> None:
    code, report = _lint(contract)
    assert code == 0, f"the copy keeps {contract} before the wrong import:\n{report}"
    for path, text in written.items():
        with (copied / path).open("a", encoding="utf-8") as module:
            module.write(text)
    code, report = _lint(contract)
    assert code == 1, report
    assert "BROKEN" in report and named in report, report


def test_no_module_imports_itself_back() -> None:
    """No cycle of modules at all, the two imports the layers allow the query library into the
    archive (its schema and lock) included, and imports inside functions too."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported == module or module.startswith(f"{imported}."):
                continue  # a module and its own package's __init__
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append(" -> ".join((module, *back)))
    assert cycles == []
