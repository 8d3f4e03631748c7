"""Shared test fixtures: the fixture website. (Helpers live in ``tests/helpers.py``.)"""

from __future__ import annotations

import contextlib
import shutil
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from fixtures.site import FixtureSite

# A test run started in the background of a non-interactive shell (``cmd &``) inherits SIGINT
# ignored, and so would every nitpicker process the tests start: their Ctrl-C tests would see
# the signal dropped. Handled here, the children start with the default disposition again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
from nitpicker.archive.writer import ArchiveWriter
from tests.helpers import (
    ChangesCrawls,
    CiCrawls,
    Defects,
    ScopeCrawls,
    crawl,
    run,
    run_with_probe,
    writer_config,
)


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


@pytest.fixture(scope="session")
def changes_crawls(tmp_path_factory: pytest.TempPathFactory) -> ChangesCrawls:
    """``/changes/`` crawled before and after ``site.changed`` flips it (own fixture site:
    the flip must not reach the shared one)."""
    directory = tmp_path_factory.mktemp("diff")
    with FixtureSite() as site:
        def crawl(root: str, name: str) -> None:
            result = run("crawl", root, "-o", name, "--retry", "0", "--silent", cwd=directory)
            assert result.returncode == 0, result.stderr

        crawl(site.url("/changes/"), "old")
        site.changed = True
        crawl(site.url("/changes/"), "new")
        crawl(f"{site.external_url}/changes/", "moved")
        return ChangesCrawls(directory, site.base_url, site.external_url)


@pytest.fixture(scope="session")
def analysed_changes(changes_crawls: ChangesCrawls,
                     tmp_path_factory: pytest.TempPathFactory) -> ChangesCrawls:
    """Copies of :func:`changes_crawls`' archives, each analysed by the pure-Python
    ``diff-probe`` plugin (``fixtures/diff_probe``)."""
    directory = tmp_path_factory.mktemp("diff-analysed")
    for name in ("old", "new", "moved"):
        archive = directory / f"{name}.nitpicker"
        shutil.copyfile(changes_crawls.dir / f"{name}.nitpicker", archive)
        result = run_with_probe("analyze", str(archive), "--plugin", "diff-probe",
                                cwd=directory)
        assert result.returncode == 0, result.stderr
    return ChangesCrawls(directory, changes_crawls.base, changes_crawls.moved_base)


@pytest.fixture(scope="session")
def ci_crawls(site: Any, tmp_path_factory: pytest.TempPathFactory) -> CiCrawls:
    """``/error-status/`` crawled twice and ``/error-status/normal`` once, with ``--fail-on``,
    then analysed (:class:`tests.helpers.CiCrawls`; the CI gates' and exports' tests)."""
    directory = tmp_path_factory.mktemp("ci")
    results = {
        "audit": run("crawl", site.url("/error-status/"), "-o", "audit", "--retry", "0",
                     "--fail-on", "broken-links,5xx,4xx>2", cwd=directory),
        "again": run("crawl", site.url("/error-status/"), "-o", "again", "--retry", "0",
                     "--silent", cwd=directory),
        "clean": run("crawl", site.url("/error-status/normal"), "-o", "clean", "--retry", "0",
                     "--fail-on", "broken-links,4xx,5xx", cwd=directory),
    }
    for name in results:
        done = run_with_probe("analyze", f"{name}.nitpicker", "--plugin", "diff-probe",
                              cwd=directory)
        assert done.returncode == 0, done.stderr
    return CiCrawls(directory, site.base_url, results)


@pytest.fixture(scope="session")
def scope_crawls(site: Any, tmp_path_factory: pytest.TempPathFactory) -> ScopeCrawls:
    """``/scope/blog/`` and ``/scope/docs/`` crawled apart and together (``blog``, ``docs``,
    ``both``), each analysed by ``main-contents``, for ``concat`` and ``split``."""
    directory = tmp_path_factory.mktemp("scope-crawls")
    crawls = ScopeCrawls(directory, site.url("/scope/blog/"), site.url("/scope/docs/"))
    for name, roots in (("blog", [crawls.blog_root]), ("docs", [crawls.docs_root]),
                        ("both", [crawls.blog_root, crawls.docs_root])):
        done = run("crawl", *roots, "-o", name, "--retry", "0", "--silent", cwd=directory)
        assert done.returncode == 0, done.stderr
        done = run("analyze", f"{name}.nitpicker", "--plugin", "main-contents", cwd=directory)
        assert done.returncode == 0, done.stderr
    return crawls


async def _rendered(site: Any, directory: Path, section: str) -> Path:
    archive = await crawl(directory, [site.url(f"/{section}/")], render=True)
    archive.conn.close()
    return archive.path.rename(directory / f"{section}.nitpicker")


@pytest_twisted.async_fixture(scope="module")
async def rendered_console(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``/console/`` rendered in Chromium: a script all its pages load, their console
    messages (for ``split``)."""
    return await _rendered(site, tmp_path_factory.mktemp("rendered"), "console")


@pytest_twisted.async_fixture(scope="module")
async def rendered_resources(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``/resources/`` rendered in Chromium: the images its top page loads, with their
    headers, and a framed page that loads nothing (for ``concat`` and ``split``)."""
    return await _rendered(site, tmp_path_factory.mktemp("rendered"), "resources")


@pytest.fixture(scope="session")
def defects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Defects]:
    """``/defects/`` crawled once, its sitemap on (``fixtures/defects.py``, the site checks'
    tests)."""
    directory = tmp_path_factory.mktemp("defects")
    with FixtureSite() as site:
        site.defect_sitemap = True
        result = run("crawl", site.url("/defects/"), "-o", "defects", "--retry", "0",
                     "--silent", cwd=directory)
        assert result.returncode == 1, result.stderr  # its fetch errors
        yield Defects(directory / "defects.nitpicker", site.base_url, site.external_url)
