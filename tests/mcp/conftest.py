"""Fixtures for the MCP server tests: real archives of the fixture site, and ``nitpicker mcp``
running as a real stdio subprocess driven by the MCP SDK's own client.

These tests are anyio (asyncio) tests: they cannot run inside pytest-twisted's reactor, so they
have their own pytest invocation, and the main one leaves this directory out::

    python -m pytest -p no:twisted -o addopts="" tests/mcp
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from fixtures.site import FixtureSite
from tests.mcp.helpers import ArchiveFile

REPO = Path(__file__).resolve().parents[2]

SERVER_COMMAND = ["-m", "nitpicker.cli", "mcp"]
"""``nitpicker mcp``, as the console script runs it."""

SITE_ROOTS = ("/recursive/", "/redirect/", "/error-status/", "/meta/", "/query/")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave these tests out of a session that runs pytest-twisted (its reactor owns the loop)."""
    if config.pluginmanager.has_plugin("twisted"):
        return True
    return None


def server_params(cwd: Path, args: list[str] | None = None) -> StdioServerParameters:
    """The server as a subprocess of this Python, started in ``cwd``."""
    return StdioServerParameters(
        command=sys.executable,
        args=args or SERVER_COMMAND,
        env={"PYTHONPATH": str(REPO)},
        cwd=cwd,
    )


@pytest.fixture(scope="session")
def launch() -> Callable[..., StdioServerParameters]:
    """``launch(cwd, args=None)``: the parameters of a server of its own (default ``nitpicker
    mcp``), started in ``cwd``."""
    return server_params


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def _crawl(output: Path, roots: list[str], *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", *roots, "--no-render", "--silent",
         "--retry", "0", "--no-predict-pagination", *options, "-o", str(output)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="session")
def site_roots(site: FixtureSite) -> list[str]:
    """The roots of the site archive's crawl."""
    return [site.url(root) for root in SITE_ROOTS]


@pytest.fixture(scope="session")
def opened_by_tools() -> Counter[Path]:
    """How many times the session's server opened each file (``open_archive`` calls that
    succeeded, counted by the ``client`` fixture), by real path."""
    return Counter()


@pytest.fixture(scope="session")
def archives(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory,
             opened_by_tools: Counter[Path]) -> Iterator[tuple[ArchiveFile, ArchiveFile]]:
    """Two crawls, run side by side: the site (five roots), and ``/query/`` with the trap cap.

    At the end of the session, after every test that used them, both files must be byte for
    byte what the crawls wrote; and the check fails when no tool ever opened them (an untouched
    file proves nothing then).
    """
    folder = tmp_path_factory.mktemp("archives")
    crawls = [
        _crawl(folder / "site", [site.url(root) for root in SITE_ROOTS]),
        _crawl(folder / "trap", [site.url("/query/")], "--dedupe-cap", "3"),
    ]
    for crawl in crawls:
        _, err = crawl.communicate(timeout=120)
        assert crawl.returncode == 0, err
    files = (ArchiveFile.record(folder / "site.nitpicker"),
             ArchiveFile.record(folder / "trap.nitpicker"))
    yield files
    for file in files:
        file.assert_untouched()
    opened = {file.path.name: opened_by_tools[file.path.resolve()] for file in files}
    assert any(opened.values()), (
        f"no tool opened the archives ({opened}): their being untouched proves nothing")


@pytest.fixture(scope="session")
def archive(archives: tuple[ArchiveFile, ArchiveFile]) -> ArchiveFile:
    return archives[0]


@pytest.fixture(scope="session")
def trap_archive(archives: tuple[ArchiveFile, ArchiveFile]) -> ArchiveFile:
    return archives[1]


@pytest.fixture(scope="session")
def page_data_archive(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory
                      ) -> ArchiveFile:
    """``/console/`` and ``/json-ld/`` rendered in the browser: console messages, JSON-LD."""
    output = tmp_path_factory.mktemp("page-data") / "page-data"
    crawl = subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/console/"),
         site.url("/json-ld/"), "--silent", "--retry", "0", "-o", str(output)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, text=True, capture_output=True,
        timeout=300, check=False,
    )
    assert crawl.returncode == 0, crawl.stderr
    return ArchiveFile.record(output.with_suffix(".nitpicker"))


@pytest.fixture(scope="session")
async def client(anyio_backend: str, archive: ArchiveFile, opened_by_tools: Counter[Path]
                 ) -> AsyncIterator[Client]:
    """One ``nitpicker mcp`` process for the session, started in the archives' folder.

    Tests close the archives they open, so each starts with none open. The files its
    ``open_archive`` calls open are counted in ``opened_by_tools``.
    """
    import typer.main

    from nitpicker.cli import app

    if "mcp" not in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        pytest.fail("`nitpicker mcp` is not registered: nitpicker/cli/__init__.py "
                    "_add_commands() adds nitpicker.cli.mcp.app")
    folder = archive.path.parent
    async with Client(server_params(folder)) as connected:
        call_tool = connected.call_tool

        async def counting_call_tool(name: str, arguments: dict[str, Any] | None = None,
                                     *args: Any, **kwargs: Any) -> Any:
            result = await call_tool(name, arguments, *args, **kwargs)
            if name == "open_archive" and not result.is_error and arguments:
                opened_by_tools[(folder / arguments["file_path"]).resolve()] += 1
            return result

        connected.call_tool = counting_call_tool  # type: ignore[method-assign]
        yield connected
