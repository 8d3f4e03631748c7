"""The README is the manual: every command, option, setting and meta key is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from nitpicker.cli import app
from nitpicker.crawl import meta
from nitpicker.default_settings import ENVIRONMENT, SETTINGS, Setting

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
COMMAND = typer.main.get_command(app)
COMMANDS = COMMAND.commands  # type: ignore[attr-defined]
QUERY_SUBCOMMANDS = COMMANDS["query"].commands
"""``nitpicker query``'s sub-commands, each a command with its own flags."""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_section(name: str) -> None:
    assert f"### `nitpicker {name}`" in README


@pytest.mark.parametrize(
    "option",
    sorted(
        opt
        for command in (*COMMANDS.values(), *QUERY_SUBCOMMANDS.values())
        for param in command.params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
        if opt != "--help"
    ),
)
def test_every_option_is_documented(option: str) -> None:
    assert re.search(rf"(`|/ ){re.escape(option)}[` /,]", README), option


@pytest.mark.parametrize("name", list(QUERY_SUBCOMMANDS))
def test_every_query_sub_command_row_lists_its_flags(name: str) -> None:
    """The flags column of the sub-command's row in the README table: its flags, no other."""
    row = re.search(rf"^\| `{re.escape(name)}` \|.*\| (.*) \|$", README, re.MULTILINE)
    assert row, name
    flags = {opt for param in QUERY_SUBCOMMANDS[name].params
             if param.param_type_name == "option"
             for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}
    assert set(re.findall(r"--[a-z-]+", row.group(1))) == flags - {"--pretty"}, name


SETTINGS_TABLE = README.split("**Settings**", 1)[1].split("\n\n", 2)[1]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.name)
def test_every_setting_has_a_row_in_the_settings_table(setting: Setting) -> None:
    assert f"| `{setting.name}` |" in SETTINGS_TABLE, setting.name


def test_the_settings_table_documents_only_settings_of_the_table() -> None:
    rows = set(re.findall(r"^\| `(NITPICKER_[A-Z0-9_]+)` \|", SETTINGS_TABLE, re.MULTILINE))
    assert rows == {setting.name for setting in SETTINGS}


def test_every_environment_variable_and_meta_key_is_documented() -> None:
    keys = {value for name, value in vars(meta).items() if name.startswith("META_")}
    assert keys, "no META_* keys in nitpicker/crawl/meta.py"
    # The request meta keys are defined in nitpicker/crawl/meta.py and nowhere else.
    package = Path(__file__).resolve().parent.parent / "nitpicker"
    elsewhere = [p.name for p in package.rglob("*.py") if p.name != "meta.py"
                 and re.search(r"^META_[A-Z_]+ = \"", p.read_text(), re.MULTILINE)]
    assert elsewhere == []
    for name in {env.name for env in ENVIRONMENT} | keys:
        assert f"`{name}`" in README, name


def test_two_setup_commands_come_first() -> None:
    setup = README.split("## Set-up: two commands", 1)[1].split("##", 1)[0]
    assert "make crawl" in setup and "make test" in setup
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def _mcp_tool_names() -> list[str]:
    import ast

    mcp = Path(__file__).resolve().parent.parent / "nitpicker" / "mcp"
    return [
        node.name
        for module in ("tools.py", "audit_tools.py")  # the modules that define tools
        for node in ast.walk(ast.parse((mcp / module).read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(d, ast.Name) and d.id == "tool" for d in node.decorator_list)
    ]


def test_every_query_sub_command_and_mcp_tool_is_documented() -> None:
    query_section = README.split("### `nitpicker query`", 1)[1].split("\n## ", 1)[0]
    for name in QUERY_SUBCOMMANDS:
        assert f"`{name}`" in query_section, name
    tools = _mcp_tool_names()
    assert len(tools) == 23, tools
    mcp_section = README.split("### `nitpicker mcp`", 1)[1].split("\n## ", 1)[0]
    for name in tools:
        assert f"`{name}`" in mcp_section, name
