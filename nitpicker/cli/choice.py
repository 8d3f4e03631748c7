"""An interactive multiselect on the terminal: a numbered list, numbers or names typed back.

The same prompt as ``nitpicker analyze``'s plugin choice (``typer.prompt`` on stderr): Enter
takes every choice; numbers go apart by spaces or commas, names by commas; an answer that is
not a choice is named and asked again.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["choose_many", "is_terminal"]


def is_terminal() -> bool:
    """Whether a person can answer: stdin and stdout are both a terminal."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def choose_many(question: str, choices: Sequence[str], prompt: str) -> list[str]:
    """Ask ``question`` over the numbered ``choices``; the picked ones, in the order given."""
    typer.echo(question, err=True)
    for number, name in enumerate(choices, 1):
        typer.echo(f"  {number}) {name}", err=True)
    while True:
        answer = typer.prompt(prompt, default="", show_default=False, err=True).strip()
        # numbers apart by spaces or commas; names (which may hold spaces) apart by commas
        separated = answer.split(",") if "," in answer or answer in choices else answer.split()
        tokens = [t.strip() for t in separated if t.strip()]
        if not tokens:
            return list(choices)
        picked: list[str] = []
        for token in tokens:
            if token.isdigit() and 1 <= int(token) <= len(choices):
                picked.append(choices[int(token) - 1])
            elif token in choices:
                picked.append(token)
            else:
                typer.echo(f"Not a choice: {token!r}", err=True)
                break
        else:
            return [c for c in choices if c in picked]
