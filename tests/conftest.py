"""Shared test fixtures: the fixture website. (Helpers live in ``tests/helpers.py``.)"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.site import FixtureSite
from nitpicker.archive.writer import ArchiveWriter
from tests.helpers import writer_config


@pytest.fixture(scope="session")
def site() -> Any:
    with FixtureSite() as server:
        yield server


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[ArchiveWriter]:
    """A new archive's writer (:func:`tests.helpers.writer_config`); abandoned after the test
    unless the test closed it."""
    w = ArchiveWriter.create(writer_config(tmp_path))
    yield w
    with contextlib.suppress(sqlite3.ProgrammingError):  # the test closed it
        w.abandon()  # frees the lock when the test did not close
