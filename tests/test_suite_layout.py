"""The test suite's own layout (docs/development.md): a test module imports helpers
(``tests/helpers.py``, ``tests/viewer_process.py``, …) and fixtures come from
``tests/conftest.py``, never from another test module (importing one runs its module-level
code and registers its fixtures twice)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

IMPORTS_A_TEST_MODULE = re.compile(r"^\s*(from|import)\s+tests\.(mcp\.)?test_\w+", re.MULTILINE)


def test_no_test_module_imports_another() -> None:
    importing = sorted(path.relative_to(TESTS).as_posix() for path in TESTS.rglob("*.py")
                       if IMPORTS_A_TEST_MODULE.search(path.read_text(encoding="utf-8")))
    assert importing == []


def test_the_check_sees_such_an_import() -> None:
    assert IMPORTS_A_TEST_MODULE.search("from tests.test_viewer import Viewer\n")
    assert not IMPORTS_A_TEST_MODULE.search("from tests.viewer_process import Viewer\n")
