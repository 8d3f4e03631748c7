"""What every ``nitpicker query`` sub-command shares: the answer printed as JSON, the integer
flags checked, and the flags several sub-commands take."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nitpicker.cli.output import fail
from nitpicker.query import INTEGER_RANGES, check_integer, open_archive

__all__ = ["IsExternal", "Limit", "Offset", "PageUrl", "Pretty", "answer", "check_integers"]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def answer(ctx: typer.Context, call: Callable[..., Any], *, pretty: bool, missing: str = "",
           **options: Any) -> None:
    """Print ``call(conn, **options)`` on the archive as JSON, the options that are ``None``
    left to the library's defaults. ``missing`` names what a ``None`` answer means (a URL the
    archive does not have)."""
    options = {name: value for name, value in options.items() if value is not None}
    check_integers(**options)
    file = ctx.obj
    assert isinstance(file, Path), file  # set by the group's callback, query()
    conn = open_archive(file)
    try:
        result = call(conn, **options)
    except ValueError as exc:
        fail(str(exc))
    except sqlite3.DatabaseError as exc:
        fail(f"{file}: corrupt archive ({exc})")
    finally:
        conn.close()
    if result is None and missing:
        fail(f"{missing}: {options['url']}")
    typer.echo(json.dumps(result, ensure_ascii=False, indent=2 if pretty else None))


def check_integers(**options: Any) -> None:
    """One ``Error:`` line for an integer flag out of its range (``INTEGER_RANGES``)."""
    for name in INTEGER_RANGES.keys() & options.keys():
        try:
            check_integer(name, options[name], label=_flag(name))
        except ValueError as exc:
            fail(str(exc))


# -- the flags several sub-commands share --------------------------------------------------------

Pretty = Annotated[bool, typer.Option("--pretty", help="Indent the JSON.")]
Limit = Annotated[int | None, typer.Option(
    "--limit", "-l", help="Most results to return (default 100).", show_default=False)]
Offset = Annotated[int | None, typer.Option(
    "--offset", "-o", help="Results to skip (default 0).", show_default=False)]
IsExternal = Annotated[bool | None, typer.Option(
    "--is-external/--is-internal", help="Only external / only internal URLs (default both).",
    show_default=False)]
PageUrl = Annotated[str, typer.Option(
    "--url", help="The page URL (also tried normalised).", show_default=False)]
