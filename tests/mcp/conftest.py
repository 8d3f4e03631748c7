"""Fixtures for the MCP server tests: real archives of the fixture site, and ``nitpicker mcp``
running as a real stdio subprocess driven by the MCP SDK's own client.

These tests are anyio (asyncio) tests: they cannot run inside pytest-twisted's reactor, so they
have their own pytest invocation, and the main one leaves this directory out::

    python -m pytest -p no:twisted -o addopts="" tests/mcp
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from fixtures.site import FixtureSite

REPO = Path(__file__).resolve().parents[2]

SERVER_COMMAND = ["-m", "nitpicker.cli", "mcp"]
"""``nitpicker mcp``, as the console script runs it."""

SITE_ROOTS = ("/recursive/", "/redirect/", "/error-status/", "/meta/", "/query/")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave these tests out of a session that runs pytest-twisted (its reactor owns the loop)."""
    if config.pluginmanager.has_plugin("twisted"):
        return True
    return None


@dataclass(frozen=True)
class ArchiveFile:
    """An archive on disk, and what its file looked like right after the crawl."""

    path: Path
    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def record(cls, path: Path) -> ArchiveFile:
        stat = path.stat()
        return cls(path, stat.st_mtime_ns, stat.st_size, _sha256(path))

    def assert_untouched(self) -> None:
        """The file is byte for byte what the crawl wrote, and no journal appeared beside it."""
        stat = self.path.stat()
        assert (stat.st_mtime_ns, stat.st_size) == (self.mtime_ns, self.size)
        assert _sha256(self.path) == self.sha256
        for suffix in ("-wal", "-shm", "-journal"):
            assert not self.path.with_name(self.path.name + suffix).exists()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureSite]:
    with FixtureSite() as server:
        yield server


def _crawl(output: Path, roots: list[str], *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker.cli", "crawl", *roots, "--no-render", "--silent",
         "--retry", "0", *options, "-o", str(output)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="session")
def site_roots(site: FixtureSite) -> list[str]:
    """The roots of the site archive's crawl."""
    return [site.url(root) for root in SITE_ROOTS]


@pytest.fixture(scope="session")
def archives(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[ArchiveFile, ArchiveFile]:
    """Two crawls, run side by side: the site (five roots), and ``/query/`` with the trap cap."""
    folder = tmp_path_factory.mktemp("archives")
    crawls = [
        _crawl(folder / "site", [site.url(root) for root in SITE_ROOTS]),
        _crawl(folder / "trap", [site.url("/query/")], "--dedupe-cap", "3"),
    ]
    for crawl in crawls:
        _, err = crawl.communicate(timeout=120)
        assert crawl.returncode == 0, err
    return (ArchiveFile.record(folder / "site.nitpicker"),
            ArchiveFile.record(folder / "trap.nitpicker"))


@pytest.fixture(scope="session")
def archive(archives: tuple[ArchiveFile, ArchiveFile]) -> ArchiveFile:
    return archives[0]


@pytest.fixture(scope="session")
def trap_archive(archives: tuple[ArchiveFile, ArchiveFile]) -> ArchiveFile:
    return archives[1]


@pytest.fixture(scope="session")
async def client(anyio_backend: str, archive: ArchiveFile) -> AsyncIterator[Client]:
    """One ``nitpicker mcp`` process for the session, started in the archives' folder.

    Tests close the archives they open, so each starts with none open.
    """
    import typer.main

    from nitpicker.cli import app

    if "mcp" not in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        pytest.fail("`nitpicker mcp` is not registered: nitpicker/cli/__init__.py "
                    "_add_commands() adds nitpicker.cli.mcp.app")
    async with Client(server_params(archive.path.parent)) as connected:
        yield connected
