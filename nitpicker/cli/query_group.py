"""The ``nitpicker query`` group's command line: FILE and SUB-COMMAND in either order, the
flags anywhere around them, and each mistake named in one line.

:class:`QueryGroup` is the Click group of :mod:`nitpicker.cli.query` (whose sub-commands it
reads); it moves the flags after FILE and SUB-COMMAND before Click parses them and checks them
where every sub-command's flags are known: no FILE, no or an unknown sub-command, a flag of
another sub-command, a missing required flag (with its allowed values).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from typer.core import TyperGroup

from nitpicker.query import LINK_TYPES, MISMATCH_TYPES

if TYPE_CHECKING:
    from typer._click import Context  # the type TyperGroup's methods take (typer.Context's base)

__all__ = ["USAGE", "QueryGroup"]

USAGE = "nitpicker query FILE SUB-COMMAND [OPTIONS]"

_CHOICES: dict[tuple[str, str], Sequence[str]] = {
    ("links", "--type"): LINK_TYPES,
    ("mismatches", "--type"): MISMATCH_TYPES,
}
"""The allowed values a missing required flag's message lists."""


class QueryGroup(TyperGroup):
    """``nitpicker query``: FILE, then the sub-command (or the other way round), then its flags.

    The flags may also come before or between the two: they are moved after them before Click
    parses, so every command line of the single ``query`` command of before still works. The
    flags of one sub-command are checked here, where the others are known: a flag of another
    sub-command is named as such, and a missing required flag with its allowed values.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.options_metavar = None  # the usage line: nitpicker query FILE SUB-COMMAND [OPTIONS]
        self.subcommand_metavar = "SUB-COMMAND [OPTIONS]"

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if "--" in args:  # everything after it is an argument: Click's own reading
            return super().parse_args(ctx, args)
        takes_value = self._takes_value()
        heads, rest, flags = _split(args, takes_value)
        if len(heads) == 2 and heads[0] in self.commands and heads[1] not in self.commands:
            heads.reverse()  # nitpicker query links FILE
        name = heads[1] if len(heads) == 2 else None
        asks_help = "--help" in flags
        if asks_help and name not in self.commands:
            if len(heads) == 1 and heads[0] in self.commands:  # nitpicker query links --help
                self.commands[heads[0]].make_context(heads[0], ["--help"], parent=ctx)
            return super().parse_args(ctx, ["--help"])
        valid = f"Valid sub-commands: {', '.join(self.commands)}"
        if not heads or (len(heads) == 1 and heads[0] in self.commands):
            ctx.fail(f"No .nitpicker file specified. Usage: {USAGE}")
        if name is None:
            ctx.fail(f"No sub-command specified. {valid}")
        if name not in self.commands:
            ctx.fail(f"Unknown sub-command: {name}. {valid}")
        if not asks_help:
            self._check_flags(ctx, name, flags, takes_value.keys())
        return super().parse_args(ctx, [*heads, *rest])

    def _takes_value(self) -> dict[str, bool]:
        """Every flag of every sub-command → whether a value follows it."""
        return {
            flag: not getattr(param, "is_flag", False)
            for command in self.commands.values()
            for param in command.params
            if param.param_type_name == "option"
            for flag in (*param.opts, *param.secondary_opts)
        }

    def _check_flags(self, ctx: Context, name: str, flags: list[str],
                     every_flag: AbstractSet[str]) -> None:
        """Fail on a flag of another sub-command than ``name``, or a required flag missing."""
        command = self.commands[name]
        own = {flag for param in command.get_params(ctx)
               for flag in (*param.opts, *param.secondary_opts)}
        others = every_flag - own
        for flag in flags:
            if flag in others:
                ctx.fail(f"{flag} does not apply to the {name} sub-command")
        for param in command.params:
            if (param.required and param.param_type_name == "option"
                    and not set(param.opts).intersection(flags)):
                flag = param.opts[0]
                choices = _CHOICES.get((name, flag))
                allowed = f". Must be one of: {', '.join(choices)}" if choices else ""
                ctx.fail(f"{flag} is required for the {name} sub-command{allowed}")


def _split(args: list[str], takes_value: Mapping[str, bool]
           ) -> tuple[list[str], list[str], list[str]]:
    """The first two arguments that are not flags or their values (FILE and SUB-COMMAND), the
    other tokens in their order, and the flags' names (``--limit`` of ``--limit=5``, ``-l`` of
    ``-l5``)."""
    heads: list[str] = []
    rest: list[str] = []
    flags: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if token.startswith("-") and len(token) > 1:
            long = token.startswith("--")
            flag = token.split("=", 1)[0] if long else token[:2]
            attached = "=" in token if long else len(token) > 2
            flags.append(flag)
            rest.append(token)
            if takes_value.get(flag) and not attached:
                rest.extend(itertools.islice(tokens, 1))
        elif len(heads) < 2:
            heads.append(token)
        else:
            rest.append(token)
    return heads, rest, flags
