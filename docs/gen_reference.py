"""Write the manual's reference pages from the code, so that they cannot drift from it.

- ``docs/reference/cli.md``: every command and ``query`` sub-command of the Typer app, with its
  help, usage and every argument and option (type, default, help);
- ``docs/reference/settings.md``: every ``NITPICKER_*`` setting and environment variable of
  ``nitpicker/default_settings.py``;
- ``docs/reference/mcp-tools.md``: every tool the MCP server registers, its description (the
  function's docstring) and its arguments (the input schema);
- ``docs/reference/checks.md``: every site check of the registry (``nitpicker/query/checks/``),
  family by family: its id, priority, category, title, explanation and fix; and the table of
  rich-result types the structured-data checks read.

    .venv/bin/python docs/gen_reference.py           # write the pages (make docs does)
    .venv/bin/python docs/gen_reference.py --check   # exit 1, naming them, if they differ

``tests/test_docs.py`` runs ``--check``: a new option, setting or tool, or a changed help text,
fails the tests until the pages are written again. Not imported by nitpicker itself.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
NOTE = ("*Generated from the code by `docs/gen_reference.py` (`make docs`); "
        "`tests/test_docs.py` fails when this page and the code differ.*")

CLI_INTRO = ("Every command, sub-command, argument and option, as `--help` shows them; each "
             "command's guide page says what they do in full.")
SETTINGS_INTRO = (
    "Every `NITPICKER_*` setting: `nitpicker/default_settings.py` (name, default, help). The "
    "add-on sets every default at `addon` priority, so the project's `settings.py`, Scrapyd's "
    "`-d setting=…` and `scrapy crawl -s` override them; read sites have no default of their "
    "own. How a crawl option becomes a setting: [Scrapy and Scrapyd](../operations/scrapy.md).")
MCP_INTRO = (
    "The tools `nitpicker mcp` serves, as the client (the model) reads them: the description is "
    "the tool function's docstring, the arguments its input schema. How to connect a client, "
    "and what a session looks like: [`nitpicker mcp`](../guide/mcp.md).")
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|])")


def escape(text: str) -> str:
    """``text`` shown as written: Markdown's special characters escaped."""
    return _MARKDOWN.sub(r"\\\1", text)


def code(text: str) -> str:
    """``text`` as inline code (in a table cell: ``|`` escaped)."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}".replace("|", "\\|")


def paragraphs(text: str) -> list[str]:
    """A docstring as Markdown paragraphs; ``Example: CMD`` becomes a shell block, a block
    that starts with ``\\b`` (kept as written) a text block."""
    out = []
    for block in inspect.cleandoc(text).split("\n\n"):
        if block.startswith("\b\n"):  # kept as written (click's and Typer's \b): a text block
            kept = block.removeprefix("\b\n")
            out.append(f"```text\n{kept}\n```")
            continue
        block = " ".join(line.strip() for line in block.splitlines())
        if block.startswith("Example: "):
            out.append(f"Example:\n\n```sh\n{block.removeprefix('Example: ')}\n```")
        elif block:
            out.append(escape(block))
    return out


# -- the command line ---------------------------------------------------------------------------

_TYPES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH", "bool": "flag"}


def _type_name(param: Any) -> str:
    annotation = param.type_descriptor.annotation
    inner = getattr(annotation, "__args__", (annotation,))[0]
    name = _TYPES.get(getattr(inner, "__name__", str(inner)), str(inner))
    if getattr(annotation, "__origin__", None) is list and param.param_type_name == "option":
        return f"{name}, repeatable"
    return name


def _names(param: Any) -> str:
    if param.param_type_name == "argument":
        name = param.name.upper()
        return code(f"{name}…" if param.nargs == -1 or param.multiple else name)
    names = ", ".join(code(opt) for opt in param.opts)
    if param.secondary_opts:
        names = f"{code(param.opts[0])} / {code(param.secondary_opts[0])}"
        names += "".join(f", {code(opt)}" for opt in param.opts[1:])
    return names


def _default(param: Any) -> str:
    if param.required:
        return "required"
    default = param.default
    if param.secondary_opts:
        return code(param.opts[0] if default else param.secondary_opts[0])
    if default is None or default == [] or default == ():
        return "—"
    if default is False:
        return "off"
    if default is True:
        return "on"
    return code(str(default))


def _parameters(command: Any) -> list[str]:
    params = [param for param in command.params if not getattr(param, "hidden", False)]
    if not params:
        return []
    rows = ["| argument or option | type | default | help |", "|---|---|---|---|"]
    for param in params:
        help_text = escape(" ".join((getattr(param, "help", None) or "").split()))
        rows.append(f"| {_names(param)} | {_type_name(param)} | {_default(param)} | "
                    f"{help_text} |")
    return rows


def _usage(words: str, command: Any) -> str:
    pieces = []
    for param in command.params:
        if param.param_type_name == "argument":
            name = param.name.upper()
            name = f"{name}..." if param.nargs == -1 or param.multiple else name
            pieces.append(name if param.required else f"[{name}]")
    options = any(param.param_type_name == "option" for param in command.params)
    sub = ["SUB-COMMAND [OPTIONS]"] if getattr(command, "commands", None) else []
    return " ".join([words, *(["[OPTIONS]"] if options else []), *pieces, *sub])


def _command(words: str, command: Any, level: int, guide: str | None) -> list[str]:
    lines = [f"{'#' * level} `{words}`", ""]
    if guide:
        lines += [f"Guide: [`{words}`](../guide/{guide}.md).", ""]
    for paragraph in paragraphs(command.help or ""):
        lines += [paragraph, ""]
    lines += ["```", _usage(words, command), "```", ""]
    table = _parameters(command)
    return lines + (table + [""] if table else [])


def cli_reference() -> str:
    """``docs/reference/cli.md``."""
    import typer.main

    from nitpicker.cli import app

    root = typer.main.get_command(app)
    lines = ["# Command line", "", NOTE, "", CLI_INTRO, "", "```", "nitpicker [OPTIONS] COMMAND [ARGS]...", "```", "",
             *_parameters(root), ""]
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        lines += _command(f"nitpicker {name}", command, 2, name)
        for sub_name, sub in getattr(command, "commands", {}).items():
            file_arg = " ".join(param.name.upper() for param in command.params
                                if param.param_type_name == "argument")
            lines += _command(f"nitpicker {name} {file_arg} {sub_name}".replace("  ", " "),
                              sub, 3, None)
    return "\n".join(lines).rstrip() + "\n"


# -- the settings -------------------------------------------------------------------------------


def _setting_rows(settings: Iterable[Any], header: str) -> list[str]:
    rows = [f"| {header} | type | default | meaning |", "|---|---|---|---|"]
    for setting in settings:
        kind = setting.kind or type(setting.default).__name__
        default = '""' if setting.default == "" else str(setting.default)
        rows.append(f"| `{setting.name}` | {kind} | `{default}` | "
                    f"{' '.join(setting.help.split())} |")
    return rows


def settings_reference() -> str:
    """``docs/reference/settings.md``."""
    from nitpicker.default_settings import ENVIRONMENT, SETTINGS

    return "\n".join([
        "# Settings", "", NOTE, "", SETTINGS_INTRO, "",
        *_setting_rows(SETTINGS, "setting"), "",
        "## Environment variables", "",
        "Named like settings, but read from the environment.", "",
        *_setting_rows(ENVIRONMENT, "variable"), "",
    ])


# -- the MCP tools ------------------------------------------------------------------------------


def _schema_type(schema: dict[str, Any]) -> str:
    options = [option for option in schema.get("anyOf", [schema]) if option.get("type") != "null"]
    words = []
    for option in options:
        word = option.get("type", "any")
        if "enum" in option:
            word = "one of " + ", ".join(code(str(value)) for value in option["enum"])
        elif "minimum" in option or "maximum" in option:
            word += f" {option.get('minimum', '')}–{option.get('maximum', '')}"
        words.append(word)
    return " or ".join(words)


def _tool(tool: Any) -> list[str]:
    lines = [f"## `{tool.name}`", ""]
    for paragraph in paragraphs(tool.description or ""):
        lines += [paragraph, ""]
    properties = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    if properties:
        lines += ["| argument | type | default | meaning |", "|---|---|---|---|"]
        for name, schema in properties.items():
            default = ("required" if name in required
                       else "—" if schema.get("default") is None else code(str(schema["default"])))
            lines.append(f"| `{name}` | {_schema_type(schema)} | {default} | "
                         f"{escape(schema.get('description', ''))} |")
        lines.append("")
    return lines


def mcp_reference() -> str:
    """``docs/reference/mcp-tools.md``."""
    from nitpicker.mcp import server

    tools = asyncio.run(server.list_tools())
    lines = ["# MCP tools", "", NOTE, "", MCP_INTRO, ""]
    for tool in tools:
        lines += _tool(tool)
    return "\n".join(lines).rstrip() + "\n"


CHECKS_INTRO = (
    "Every built-in site check, as `nitpicker check` and the end of every crawl run them: its "
    "id (what `--fail-on check:ID` and `query FILE issue --id ID` take), its default priority "
    "and category, why it matters and how to fix it (what `query FILE issues` and the viewer "
    "show). What each check reads, and the bad input of the command: "
    "[`nitpicker check`](../guide/check.md).")


# -- the site checks ----------------------------------------------------------------------------


def _rich_results() -> list[str]:
    from nitpicker.query.checks.structured_data import RICH_RESULTS

    lines = ["### The rich-result types", "",
             ("What `structured-data/missing-required` and `structured-data/missing-recommended` "
             "ask of an item of each type (`a / b`: one of them will do):"), "",
             "| type | required | recommended |", "|---|---|---|"]
    for kind, needs in RICH_RESULTS.items():
        required = ", ".join(" / ".join(code(name) for name in group) for group in needs.required)
        recommended = ", ".join(code(name) for name in needs.recommended)
        lines.append(f"| `{kind}` | {required or '—'} | {recommended or '—'} |")
    return [*lines, ""]


def checks_reference() -> str:
    """``docs/reference/checks.md``."""
    from nitpicker.query.checks import FAMILIES

    lines = ["# Site checks", "", NOTE, "", CHECKS_INTRO, ""]
    for family in FAMILIES:
        lines += [f"## {family.CHECKS[0].family}", ""]
        summary = (family.__doc__ or "").strip().split("\n\n")[0]
        lines += [" ".join(summary.split()), ""]
        for check in family.CHECKS:
            lines += [f"### `{check.id}`", "",
                      (f"**{escape(check.title)}** — priority `{check.priority}`, category "
                      f"`{check.category}`."), "",
                      escape(" ".join(check.explanation.split())), "",
                      f"*Fix:* {escape(' '.join(check.fix.split()))}", ""]
        if family.__name__.endswith(".structured_data"):
            lines += _rich_results()
    return "\n".join(lines).rstrip() + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "cli.md": cli_reference,
    "settings.md": settings_reference,
    "mcp-tools.md": mcp_reference,
    "checks.md": checks_reference,
}


def stale(names: Iterable[str] = PAGES, reference: Path = REFERENCE) -> list[str]:
    """Those of the reference pages ``names`` whose text in ``reference`` is not what the code
    gives now."""
    return [name for name in names
            if not (reference / name).exists() or (reference / name).read_text() != PAGES[name]()]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        names = stale()
        for name in names:
            print(f"docs/reference/{name} differs from the code: run make docs",
                  file=sys.stderr)
        return 1 if names else 0
    if argv:
        print(f"Error: unknown arguments {argv!r} (only --check)", file=sys.stderr)
        return 1
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (REFERENCE / name).write_text(make())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
