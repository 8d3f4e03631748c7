"""An interactive multiselect on the terminal: a numbered list, numbers or names typed back.

Used by ``nitpicker analyze`` (which plugins) and ``nitpicker report`` (which sheets), on
stderr through ``typer.prompt``: Enter takes every choice (or the ``defaults`` the caller
names: analyze leaves out the opt-in plugins); numbers go apart by spaces or
commas, names by commas (by spaces too when the answer has no comma); an answer that is not a
choice is named and asked again.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["choose_many", "is_terminal"]


def is_terminal() -> bool:
    """Whether a person can answer: stdin and stdout are both a terminal."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def choose_many(question: str, choices: Sequence[str], prompt: str, *,
                labels: Mapping[str, str] | None = None,
                name_of: Callable[[str], str] | None = None,
                typed_order: bool = False,
                defaults: Sequence[str] | None = None) -> list[str]:
    """Ask ``question`` over the numbered ``choices``; the picked ones, each once.

    ``labels``: a text shown after a choice's name (``1) search — Keyword search``);
    ``name_of``: the choice a typed name stands for (another spelling of it); ``typed_order``:
    the picked ones in the order typed, else in the order of ``choices``; ``defaults``: what
    Enter picks (``None``: every choice).
    """
    typer.echo(question, err=True)
    for number, name in enumerate(choices, 1):
        label = (labels or {}).get(name, "")
        typer.echo(f"  {number}) {name}" + (f" — {label}" if label and label != name else ""),
                   err=True)
    while True:
        answer = typer.prompt(prompt, default="", show_default=False, err=True).strip()
        # numbers apart by spaces or commas; names (which may hold spaces) apart by commas
        separated = answer.split(",") if "," in answer or answer in choices else answer.split()
        tokens = [t.strip() for t in separated if t.strip()]
        if not tokens:
            return list(choices) if defaults is None else [c for c in choices if c in defaults]
        picked: list[str] = []
        for token in tokens:
            name = name_of(token) if name_of is not None else token
            if token.isascii() and token.isdigit() and 1 <= int(token) <= len(choices):
                picked.append(choices[int(token) - 1])
            elif name in choices:
                picked.append(name)
            else:
                typer.echo(f"Not a choice: {token!r}", err=True)
                break
        else:
            return list(dict.fromkeys(picked)) if typed_order else [
                c for c in choices if c in picked]
