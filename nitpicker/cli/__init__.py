"""The ``nitpicker`` command line: one module per command."""

from __future__ import annotations

import typer

from nitpicker import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    name="nitpicker",
    help="Crawl a website into one SQLite archive, then query it.",
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


def _register() -> None:
    from nitpicker.cli import crawl

    app.command(name="crawl")(crawl.crawl)
    from nitpicker.cli import (
        mcp,
        query,  # noqa: F401  (importing it registers `nitpicker query`)
    )

    app.command(name="mcp")(mcp.mcp)


_register()


def main() -> None:
    app()
