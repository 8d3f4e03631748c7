"""The ``nitpicker`` command line: one module per command.

Each command module owns a Typer app (``nitpicker.cli.crawl.app``, ``….query.app``,
``….mcp.app``); this module adds them to the root app, whose group (:class:`NitpickerGroup`)
turns every usage error into one ``Error:`` line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from nitpicker import __version__

__all__ = ["NitpickerGroup", "app", "main", "usage_error_message"]


def usage_error_message(exc: typer.TyperException) -> str:
    """One line for a usage error, naming the bad value when it is known.

    Typer (0.29) converts values with pydantic and reports only pydantic's reason
    (``Invalid value for '-P': Input should be a valid integer, …``); the value the user typed
    is the ``input`` of the ``ValidationError`` that caused the ``BadParameter``.
    """
    message = exc.format_message()
    errors = getattr(exc.__cause__, "errors", None)
    if isinstance(exc, typer.BadParameter) and callable(errors):
        problems = errors()
        if problems and "input" in problems[0]:
            hint = message.split(": ", 1)[0] if message.startswith("Invalid value") else "a value"
            return f"{hint}: {problems[0]['input']!r}. {problems[0]['msg']}"
    return message.splitlines()[0] if message else type(exc).__name__


class NitpickerGroup(TyperGroup):
    """Every usage error (an unknown option, a value that is not a number, a missing
    argument) is one ``Error:`` line and exit 1, like any other bad input — not Typer's usage
    box and exit 2."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:  # Typer's usage errors: no such option, bad value, …
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed; as Typer tells it
                _exit(1)
            print(f"Error: {usage_error_message(exc)}", file=sys.stderr)
            _exit(1)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            _exit(1)
        _exit(code if isinstance(code, int) else 0)


def _exit(code: int) -> NoReturn:
    sys.exit(code)


app = typer.Typer(
    name="nitpicker",
    help="Crawl a website into one SQLite archive, then query it.",
    cls=NitpickerGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nitpicker {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Crawl a website into one SQLite archive, then query it."""


def _add_commands() -> None:
    """Add every command module's app: ``crawl`` and ``mcp`` are one command each, ``query`` a
    group of sub-commands. A module imports only what its options need; the crawler (Scrapy,
    Twisted, Playwright) and the MCP SDK are imported inside the command that runs them."""
    from nitpicker.cli import crawl, mcp, query

    for command in (crawl, query, mcp):
        app.add_typer(command.app)


_add_commands()


def main() -> None:
    app()
