"""``nitpicker.errors.UserError``: the one base of the errors a user fixes, and the one place
the command line turns them into ``Error:`` lines (``NitpickerGroup``)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nitpicker.cli import NitpickerGroup
from nitpicker.errors import UserError
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent

USER_ERRORS = [
    ("nitpicker.analyze.config", "ConfigError"),
    ("nitpicker.analyze.plugin", "PluginSetupError"),
    ("nitpicker.ci.source", "UncheckedArchiveError"),
    ("nitpicker.ci.suppressions", "SuppressionsError"),
    ("nitpicker.archive.lock", "ArchiveLockError"),
    ("nitpicker.archive.merge", "MergeError"),
    ("nitpicker.archive.schema", "SchemaError"),
    ("nitpicker.archive.transfer", "TransferError"),
    ("nitpicker.archive.writer", "ArchiveError"),
    ("nitpicker.cli.analyze", "SelectionError"),
    ("nitpicker.crawl.append", "AppendError"),
    ("nitpicker.crawl.config", "ConfigError"),
    ("nitpicker.policy.extract.custom", "ExtractError"),
    ("nitpicker.policy.request_headers", "HeaderError"),
    ("nitpicker.query.archives", "UnknownArchiveError"),
    ("nitpicker.query.connection", "ArchiveOpenError"),
    ("nitpicker.query.diff", "DiffInputError"),
    ("nitpicker.render.chromium", "BrowserMissingError"),
    ("nitpicker.report.host", "ReportError"),
    ("nitpicker.technologies.fingerprints", "DataSetMissingError"),
    ("nitpicker.url_file", "UrlFileError"),
    ("nitpicker_plugins._settings", "SettingError"),
    ("nitpicker_plugins._node", "NodeToolsMissingError"),
    ("nitpicker_reports.google_sheets", "SheetsError"),
    ("nitpicker_reports.sheets_auth", "AuthError"),
]
"""Every error class whose message is the user's to act on: bad input, a file that is not
an archive, a setting, a tool or a credential missing."""

NOT_USER_ERRORS = {
    "BrowserEngineError", "BrowserTimeoutError", "DocumentTooDeepError", "NodeWorkerError",
    "PageUnresponsiveError", "PluginLoadError", "UnresolvableHostError",
    "AnalysisInterrupted", "FrontierUnavailable",
}
"""Errors of the run itself (a browser, a network, a plugin's code), each handled where it
happens: not the user's input."""


@pytest.mark.parametrize(("module", "name"), USER_ERRORS)
def test_every_user_error_derives_from_the_one_base(module: str, name: str) -> None:
    assert issubclass(getattr(importlib.import_module(module), name), UserError)


def test_every_error_class_of_the_package_is_listed() -> None:
    """A new error class is either a user's (derive it from ``UserError``, list it above) or
    the run's (list it in ``NOT_USER_ERRORS``): never a third way to say bad input."""
    listed = {"UserError"} | {name for _, name in USER_ERRORS} | NOT_USER_ERRORS
    found = set()
    for folder in ("nitpicker", "plugins", "reports"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and (
                        node.name.endswith("Error") or node.name in NOT_USER_ERRORS):
                    found.add(node.name)
    assert found - listed == set(), "classify the new error class"


class _BadColour(UserError):
    pass


def _demo_app() -> typer.Typer:
    app = typer.Typer(cls=NitpickerGroup, add_completion=False)

    @app.command()
    def paint(colour: str) -> None:
        raise _BadColour(f"Unknown colour: {colour!r}")

    @app.command()
    def other() -> None:
        """A second command: the app is a group."""

    return app


def test_the_group_says_any_user_error_in_one_line() -> None:
    result = CliRunner().invoke(_demo_app(), ["paint", "mauve"])
    assert result.exit_code == 1
    assert result.stderr == "Error: Unknown colour: 'mauve'\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.integration
@pytest.mark.parametrize("args", [
    ["query", "missing.nitpicker", "summary"],  # ArchiveOpenError, out of the query library
    ["concat", "missing.nitpicker", "other.nitpicker", "-o", "out"],  # TransferError
    ["check", "missing.nitpicker"],  # ArchiveError
])
def test_a_command_lets_its_user_error_rise_to_the_one_line(tmp_path: Path,
                                                             args: list[str]) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"Error: Archive not found: {args[1]}"]
    assert not list(tmp_path.iterdir())  # nothing written
