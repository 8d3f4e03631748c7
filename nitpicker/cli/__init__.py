"""The ``nitpicker`` command line: one module per command.

Each command module owns a Typer app (``nitpicker.cli.crawl.app``, ``….analyze.app``,
``….query.app``, ``….mcp.app``); this module adds them to the root app, whose group
(:class:`NitpickerGroup`) turns every usage error, and every :class:`~nitpicker.errors.UserError`
a command raises, into one ``Error:`` line and exit 1: a command lets its bad input's error
rise, and says it in its own words only where it adds something (``--baseline: …``).

Ctrl-C before a crawl has started (while the command's modules import, the options are checked
or Scrapy sets up) is one line and exit 130, the shell's code for SIGINT: nothing was written
then (the archive is created only once Scrapy's own SIGINT handling is in place, which turns a
later Ctrl-C into a stopped, resumable crawl). A command that keeps what it finished says so
itself, in its own line, and exits 130 there (``analyze``: the page analyses kept; ``pipeline``:
the crawl or the analysis kept): "nothing was written" is only ever the root group's line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, Final, NoReturn

__all__ = ["COMMANDS", "INTERRUPTED_EXIT", "NitpickerGroup", "app", "command_app", "interrupted",
           "main", "named_command", "sigterm_stops_like_ctrl_c", "usage_error_message"]

INTERRUPTED_EXIT = 130
"""The exit code of a command interrupted by Ctrl-C (128 + SIGINT)."""


def sigterm_stops_like_ctrl_c() -> None:
    """From now on SIGTERM (a service manager, ``kill``) stops this process like Ctrl-C: a
    ``KeyboardInterrupt`` the command already handles (what is done is kept, or rolled back)."""
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def _raise_keyboard_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def interrupted(message: str = "Interrupted: nothing was written") -> NoReturn:
    """Ctrl-C before anything was written: one line, exit 130, no traceback. (``pipeline``
    says what was kept of a crawl Ctrl-C stopped.)

    Called once the interrupted code has unwound (its ``finally`` blocks ran). It ends the
    process with ``os._exit``: had the Ctrl-C landed in code run from a string (a dataclass
    being made, an annotation evaluated), CPython would end a normal exit by killing itself
    with SIGINT (exit -2), whatever the code said.
    """
    print(message, file=sys.stderr)
    for out in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            out.flush()
    os._exit(INTERRUPTED_EXIT)


try:  # importing typer and the commands takes a while: a Ctrl-C then is no traceback either
    import typer
    from typer.core import TyperGroup
except KeyboardInterrupt:
    interrupted()

from nitpicker import __version__
from nitpicker.errors import UserError


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
    box and exit 2; so is every :class:`~nitpicker.errors.UserError` out of a command (the one
    place that prints them: no traceback, whatever ``--verbose`` says, for a user's error is
    no bug)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        except typer.TyperException as exc:  # Typer's usage errors: no such option, bad value, …
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed; as Typer tells it
                _exit(1)
            print(f"Error: {usage_error_message(exc)}", file=sys.stderr)
            _exit(1)
        except UserError as exc:  # a command's bad input: a missing file, a bad option, …
            print(f"Error: {exc}", file=sys.stderr)
            _exit(1)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            _exit(1)
        except KeyboardInterrupt:  # outside a command (Typer catches it inside one, below)
            interrupted()
        if code == INTERRUPTED_EXIT:  # Typer turned a Ctrl-C in a command into a silent Exit(130)
            interrupted()
        _exit(code if isinstance(code, int) else 0)


def _exit(code: int) -> NoReturn:
    sys.exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nitpicker {__version__}")
        raise typer.Exit


def _root(
    version: bool = typer.Option(False, "--version", "-v", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Crawl a website into one SQLite archive, then query it."""


COMMANDS: Final = ("crawl", "recrawl", "merge", "concat", "split", "analyze", "check",
                   "technologies", "query", "report", "pipeline", "diff", "export", "baseline",
                   "view", "mcp")
"""The command modules (``nitpicker.cli.<name>``), each adding the command or group of its
name, in the order the help lists them."""


def command_app(names: Sequence[str] = COMMANDS) -> typer.Typer:
    """The root app with the commands ``names`` (every command by default).

    Each command module's app: ``crawl``, ``recrawl``, ``merge``, ``concat``, ``split``, ``analyze``,
    ``check``, ``report``, ``pipeline``, ``export``, ``baseline``, ``view`` and ``mcp`` are one
    command each, ``query`` and ``diff`` groups or commands of
    their own. A module imports only what its options need; the crawler (Scrapy, Twisted,
    Playwright), the MCP SDK and the viewer's web stack are imported inside the command that
    runs them."""
    import importlib

    root = typer.Typer(
        name="nitpicker",
        help="Crawl a website into one SQLite archive, then query it.",
        cls=NitpickerGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    root.callback()(_root)
    try:
        for name in names:
            root.add_typer(importlib.import_module(f"nitpicker.cli.{name}").app)
    except KeyboardInterrupt:
        interrupted()
    return root


def __getattr__(name: str) -> Any:
    """``nitpicker.cli.app``: the root app with every command, made on first use (PEP 562)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    app = globals()["app"] = command_app()
    return app


def named_command(argv: Sequence[str]) -> str | None:
    """The command a command line names (its first argument not an option), if it is one."""
    named = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    return named if named in COMMANDS else None


def main() -> None:
    """``nitpicker …``: a command line naming a command imports only that command's module
    (``nitpicker report …`` not the analyzers' or the crawl's options); ``--help``, no command
    or a mistyped one import them all (the help lists every command, a mistyped name gets
    Typer's error)."""
    try:
        if sys.argv[1:] in (["--version"], ["-v"]):  # nothing else to import for that
            print(f"nitpicker {__version__}")
            return
        named = named_command(sys.argv)
        command_app((named,) if named else COMMANDS)()
    except KeyboardInterrupt:
        interrupted()
