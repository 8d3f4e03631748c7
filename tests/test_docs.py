"""The manual (``docs/``, built with MkDocs) documents every command, option, setting, meta key
and MCP tool, and builds without a warning: a broken link or anchor fails."""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import typer.main
import yaml

from nitpicker.cli import app
from nitpicker.crawl import meta
from nitpicker.default_settings import ENVIRONMENT, SETTINGS, Setting

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = {"reference/cli.md", "reference/settings.md", "reference/mcp-tools.md"}
"""The pages written by ``docs/gen_reference.py``, not by hand."""
WRITTEN = {page.relative_to(DOCS).as_posix(): page.read_text() for page in DOCS.rglob("*.md")
           if page.relative_to(DOCS).as_posix() not in GENERATED}
"""The hand-written pages."""
MANUAL = "\n".join(WRITTEN.values())
COMMAND = typer.main.get_command(app)
COMMANDS = COMMAND.commands  # type: ignore[attr-defined]
QUERY_SUBCOMMANDS = COMMANDS["query"].commands
"""``nitpicker query``'s sub-commands, each a command with its own flags."""


def _nav_pages(entries: object) -> list[str]:
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    return []


NAV = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_guide_page(name: str) -> None:
    page = f"guide/{name}.md"
    assert WRITTEN[page].startswith(f"# `nitpicker {name}`\n"), page
    assert page in NAV


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
    assert re.search(rf"(`|/ ){re.escape(option)}[` /,]", MANUAL), option


@pytest.mark.parametrize("name", list(QUERY_SUBCOMMANDS))
def test_every_query_sub_command_row_lists_its_flags(name: str) -> None:
    """The flags column of the sub-command's row in the guide's table: its flags, no other."""
    row = re.search(rf"^\| `{re.escape(name)}` \|.*\| (.*) \|$", WRITTEN["guide/query.md"],
                    re.MULTILINE)
    assert row, name
    flags = {opt for param in QUERY_SUBCOMMANDS[name].params
             if param.param_type_name == "option"
             for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}
    assert set(re.findall(r"--[a-z-]+", row.group(1))) == flags - {"--pretty"}, name


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_pages_are_what_the_code_gives() -> None:
    """``docs/gen_reference.py --check``: a new command, option, setting or MCP tool, or a
    changed help text, without ``make docs`` fails here, naming the page."""
    done = subprocess.run([sys.executable, str(DOCS / "gen_reference.py"), "--check"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_check_names_a_page_that_differs(tmp_path: Path) -> None:
    generator = _generator()
    for name in ("cli.md", "settings.md"):
        (tmp_path / name).write_text((DOCS / "reference" / name).read_text())
    assert generator.stale(["cli.md", "settings.md"], tmp_path) == []
    settings = tmp_path / "settings.md"
    settings.write_text(settings.read_text().replace("| `NITPICKER_STOP_GRACE` |", "| `X` |"))
    assert generator.stale(["cli.md", "settings.md"], tmp_path) == ["settings.md"]


SETTINGS_PAGE = (DOCS / "reference" / "settings.md").read_text()
SETTINGS_TABLE = SETTINGS_PAGE.split("## Environment variables", 1)[0]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.name)
def test_every_setting_has_a_row_in_the_settings_reference(setting: Setting) -> None:
    assert f"| `{setting.name}` |" in SETTINGS_TABLE, setting.name


def test_the_settings_reference_documents_only_settings_of_the_table() -> None:
    rows = set(re.findall(r"^\| `(NITPICKER_[A-Z0-9_]+)` \|", SETTINGS_TABLE, re.MULTILINE))
    assert rows == {setting.name for setting in SETTINGS}


def test_the_cli_reference_has_every_option_of_every_command() -> None:
    page = (DOCS / "reference" / "cli.md").read_text()
    for name, command in COMMANDS.items():
        section = page.split(f"## `nitpicker {name}", 1)[1]
        for param in command.params:
            for opt in (*param.opts, *param.secondary_opts):
                if param.param_type_name == "option":
                    assert f"`{opt}`" in section.split("\n## ", 1)[0], (name, opt)


def test_every_environment_variable_and_meta_key_is_documented() -> None:
    keys = {value for name, value in vars(meta).items() if name.startswith("META_")}
    assert keys, "no META_* keys in nitpicker/crawl/meta.py"
    # The request meta keys are defined in nitpicker/crawl/meta.py and nowhere else.
    package = ROOT / "nitpicker"
    elsewhere = [p.name for p in package.rglob("*.py") if p.name != "meta.py"
                 and re.search(r"^META_[A-Z_]+ = \"", p.read_text(), re.MULTILINE)]
    assert elsewhere == []
    for name in {env.name for env in ENVIRONMENT} | keys:
        assert f"`{name}`" in MANUAL, name


def _mcp_tool_names() -> list[str]:
    mcp = ROOT / "nitpicker" / "mcp"
    return [
        node.name
        for module in ("tools.py", "audit_tools.py", "content_tools.py")  # the modules of tools
        for node in ast.walk(ast.parse((mcp / module).read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(d, ast.Name) and d.id == "tool" for d in node.decorator_list)
    ]


def test_every_query_sub_command_and_mcp_tool_is_documented() -> None:
    for name in QUERY_SUBCOMMANDS:
        assert f"`{name}`" in WRITTEN["guide/query.md"], name
    tools = _mcp_tool_names()
    assert len(tools) == 30, tools
    for name in tools:
        assert f"`{name}`" in WRITTEN["guide/mcp.md"], name


def test_every_page_is_in_the_navigation() -> None:
    assert sorted(NAV) == sorted(page.relative_to(DOCS).as_posix()
                                 for page in DOCS.rglob("*.md"))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a link to a page or a heading that does not exist, a page
    left out of the navigation, any warning fails it."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "guide" / "crawl" / "index.html").exists()


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("docs") / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                    "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)], check=True, timeout=120)
    return site


def _crawl_check(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(DOCS / "crawl_check.py"), str(site)],
                          check=False, capture_output=True, text=True, timeout=300)


def test_nitpicker_crawls_its_manual_and_finds_no_broken_link(built_site: Path) -> None:
    """``docs/crawl_check.py``: the built site served on 127.0.0.1, crawled by nitpicker, its
    broken links queried: none."""
    done = _crawl_check(built_site)
    assert done.returncode == 0, done.stderr
    pages = len(list(built_site.rglob("index.html")))
    assert done.stdout == f"The manual: {pages} pages crawled, no broken link.\n"


def test_the_docs_crawl_fails_on_a_broken_link(built_site: Path, tmp_path: Path) -> None:
    """Links MkDocs cannot see (raw HTML) to a page that is not there and to a section a page
    does not have fail the check, each named."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    page = site / "guide" / "crawl" / "index.html"
    page.write_text(page.read_text().replace(
        "</body>", '<a href="../gone/">gone</a><a href="../check/#no-such-part">part</a></body>'))
    done = _crawl_check(site)
    assert done.returncode == 1
    assert re.search(r"^broken link on http://127\.0\.0\.1:\d+/guide/crawl/: "
                     r"http://127\.0\.0\.1:\d+/guide/gone/ \(404 ", done.stderr, re.MULTILINE), (
        done.stderr)
    assert re.search(r"^broken fragment link on http://127\.0\.0\.1:\d+/guide/crawl/: No element "
                     r"on http://127\.0\.0\.1:\d+/guide/check/ has the id .*\"no-such-part\"",
                     done.stderr, re.MULTILINE), done.stderr
