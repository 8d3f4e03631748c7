"""Shared test fixtures: the fixture website. (Helpers live in ``tests/helpers.py``.)"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.site import FixtureSite


@pytest.fixture(scope="session")
def site() -> Any:
    with FixtureSite() as server:
        yield server
