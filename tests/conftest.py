"""Shared test fixtures (the fixture website, the diff crawls, the fake Google Sheets), and how
the suite is split: the markers each test gets from its module and fixtures, and the groups
pytest-xdist keeps on one worker. (Helpers live in ``tests/helpers.py``.)

Markers (``pyproject.toml`` declares them; README, "Development"):

- ``integration``: the test crawls, serves or starts a process (nitpicker, Chromium, Node,
  Redis, Scrapyd). Given here to every test of :data:`INTEGRATION_MODULES` and to every test
  using a fixture of :data:`INTEGRATION_FIXTURES`, so a new test gets it without saying so.
  ``make check`` leaves these out. A test without it that starts a process fails (and names
  the marker), so that the unit tests stay fast as tests are added.
- ``smoke``: one of the few end-to-end tests ``make check`` runs all the same (in the module).
- ``slow``: more than ~5 s alone (in the module). Sent to the workers first, so that no worker
  ends the run alone on one.

Groups: ``make test`` runs pytest-xdist with ``--dist loadgroup``. A test using a module-scoped
fixture of its module runs on the worker that has the module's other such tests (the fixture,
usually a crawl, is made once, not once a worker); a test using an expensive session fixture
of this file joins that fixture's group (:data:`SESSION_GROUPS`). Every other test goes to
whichever worker is free.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from fixtures.sheets_fake import FakeSheets
from fixtures.site import FixtureSite

# A test run started in the background of a non-interactive shell (``cmd &``) inherits SIGINT
# ignored, and so would every nitpicker process the tests start: their Ctrl-C tests would see
# the signal dropped. Handled here, the children start with the default disposition again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
from nitpicker.archive.writer import ArchiveWriter
from tests.helpers import (
    AUTO_RETRY_OFF,
    PROBES_OFF,
    REPORT_ROOTS,
    SHEET_ACCOUNT,
    SHEET_ID,
    ChangesCrawls,
    CiCrawls,
    Defects,
    ScopeCrawls,
    crawl,
    run,
    run_with_probe,
    writer_config,
)

# Every nitpicker process the tests start, and every crawl in process through the command line's
# settings, has the end-of-run retry pass and the soft-404 probes off unless its test turns them
# on (AUTO_RETRY_OFF, PROBES_OFF).
os.environ.update({name: value for name, value in {**AUTO_RETRY_OFF, **PROBES_OFF}.items()
                   if name not in os.environ})

# -- markers and xdist groups -----------------------------------------------------------------

#: Modules whose tests crawl, serve or start processes without needing a fixture of
#: :data:`INTEGRATION_FIXTURES` (their own servers, subprocesses, signals): all ``integration``.
INTEGRATION_MODULES = frozenset({
    "test_analyze", "test_append", "test_auth_crawl", "test_checks", "test_checks_https",
    "test_cli", "test_templates", "test_markuplint_hooks", "test_page_data_content",
    "test_crawl_compare", "test_distributed", "test_docs", "test_fingerprint", "test_hostile",
    "test_inventory", "test_issues", "test_kill_resume", "test_mcp_server", "test_outage",
    "test_output_files", "test_plugin_lighthouse", "test_plugin_markuplint_engine",
    "test_plugin_node", "test_query_cli", "test_query_console", "test_redis_frontier",
    "test_render", "test_report_hardening", "test_resume_options", "test_retry_failed",
    "test_runs", "test_scrapy_entry", "test_stop", "test_trapcap_crawl", "test_url_file",
    "test_version", "test_viewer", "test_viewer_issues", "test_workers",
    "test_analyze_offline", "test_ci_gates", "test_ci_exports", "test_ci_suppressions",
    "test_ci_recipes", "test_report_audit", "test_report_sheets_hardening", "test_concat",
    "test_split", "test_guard_proxy", "test_analyze_bad_input", "test_lock_holder",
    "test_merge_errors", "test_viewer_host", "test_query_match_urls", "test_fail_on_empty",
    "test_analyze_config_shape", "test_crawl_modes", "test_recrawl", "test_query_content_cli",
    "test_viewer_site", "test_content_checks",
})

#: Fixtures that serve the fixture site, crawl it, or start a server: a test using one (or a
#: fixture that uses one) is ``integration``.
INTEGRATION_FIXTURES = frozenset({
    "site", "changes_crawls", "analysed_changes", "scope_crawls", "defects", "redis_server",
    "fake", "key_file", "ci_crawls", "report_archive_path",
})

#: Session fixtures of this file that cost crawls: the xdist group of the tests using them.
SESSION_GROUPS = {"changes_crawls": "changes", "analysed_changes": "changes",
                  "scope_crawls": "scope", "defects": "defects",
                  "ci_crawls": "ci"}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark ``item`` ``integration`` by its module or fixtures, and put it in its xdist group."""
    names = set(getattr(item, "fixturenames", ()))
    if item.path.stem in INTEGRATION_MODULES or names & INTEGRATION_FIXTURES:
        item.add_marker(pytest.mark.integration)
    group = next((SESSION_GROUPS[name] for name in sorted(names) if name in SESSION_GROUPS),
                 None) or _module_group(item)
    if group:
        item.add_marker(pytest.mark.xdist_group(group))


def _module_group(item: pytest.Item) -> str | None:
    """The item's module when it uses a module- or class-scoped fixture of the suite (of its
    module or of a conftest.py; a plugin's fixtures have no base id)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for definitions in info.name2fixturedefs.values():
        used = definitions[-1]
        if used.scope in ("module", "class") and used.baseid:
            return item.nodeid.split("::", 1)[0]
    return None


@pytest.fixture(autouse=True)
def _nitpicker_loggers_enabled() -> None:
    """A ``logging.config.dictConfig`` run earlier in this worker (a server started in
    process) disables every logger that existed then: the tests that read nitpicker's log
    records (``caplog``) would see none, depending on which tests ran before on the worker."""
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if name.startswith("nitpicker") and isinstance(logger, logging.Logger):
            logger.disabled = False


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_process(request: pytest.FixtureRequest,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked ``integration`` (or ``smoke``) that starts a process fails, naming the
    marker it lacks: ``make check`` stays the fast tests as tests are added."""
    if any(request.node.get_closest_marker(name) for name in ("integration", "smoke")):
        return

    def refused(self: subprocess.Popen[Any], args: Any, *_: Any, **__: Any) -> None:
        raise AssertionError(
            f"{request.node.nodeid} starts a process ({args!r}) and is not marked integration:"
            " add its module to INTEGRATION_MODULES in tests/conftest.py, or mark the test"
            " @pytest.mark.integration")

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``slow`` tests first (a stable sort: the rest keep pytest's order)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# -- fixtures --------------------------------------------------------------------------------


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
async def report_archive_path(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report's sections of the fixture site (``REPORT_ROOTS``) crawled over HTTP, for the
    Google Sheets reporter's tests."""
    archive = await crawl(tmp_path_factory.mktemp("sheets"), [site.url(r) for r in REPORT_ROOTS])
    archive.conn.close()
    return archive.path


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


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSheets]:
    """The local fake of the Google Sheets v4 API (``fixtures/sheets_fake.py``) holding
    :data:`tests.helpers.SHEET_ID`, its address in the environment the reporter reads."""
    # imported here, as in key_file: gspread and google-auth take a second to import, and
    # only the Sheets tests need them
    from nitpicker_reports.google_sheets import API_URL_VARIABLE

    with FakeSheets(SHEET_ID) as server:
        monkeypatch.setenv(API_URL_VARIABLE, server.url)
        yield server


@pytest.fixture
def key_file(fake: FakeSheets, tmp_path: Path) -> Path:
    """A service-account key the test generates, whose ``token_uri`` is :func:`fake`'s."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "sa.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "fake-project", "private_key_id": "k1",
        "private_key": pem, "client_email": SHEET_ACCOUNT, "client_id": "1",
        "token_uri": f"{fake.url}/token",
    }))
    return path
