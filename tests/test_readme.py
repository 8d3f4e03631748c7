"""The README is the front door: what nitpicker is, the two set-up commands first, a real
session, every command in one table linking to its page of the manual (``docs/``), at most
300 lines. The manual itself is checked by ``tests/test_docs.py``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main
from markdown.extensions.toc import slugify

from nitpicker.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
INDEX = (ROOT / "docs" / "index.md").read_text()
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 300


def test_two_setup_commands_come_first() -> None:
    assert re.findall(r"^## .*", README, re.MULTILINE)[0] == "## Set-up: two commands"
    setup = _section(README, "Set-up: two commands")
    assert "make crawl" in setup and "make test" in setup
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_the_setup_is_the_manuals() -> None:
    """The README's set-up and the manual's home page say the same, links aside."""
    def text(page: str) -> str:
        return LINK.sub("]()", _section(page, "Set-up: two commands"))

    assert text(README) == text(INDEX)


def test_the_session_is_the_manuals() -> None:
    """Every line of the README's transcript is a line of the manual's (real) session; the
    links query is the manual's without ``--pretty``, its answer the same JSON."""
    session = _section(README, "A session").split("```console\n", 1)[1].split("\n```", 1)[0]
    lines = session.splitlines()
    assert 8 <= len(lines) <= 14
    full = _section(INDEX, "A session")
    for line in lines:
        if line.startswith("{"):
            pretty = full.split("links --type broken --pretty\n", 1)[1].split("\n}\n", 1)[0]
            assert json.loads(line) == json.loads(pretty + "\n}")
        elif line.startswith("$ nitpicker query"):
            assert f"\n{line} --pretty\n" in full, line
        else:
            assert f"\n{line}\n" in full, line


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_row_linking_to_its_guide(name: str) -> None:
    rows = _section(README, "Commands")
    assert re.search(rf"^\| \[`nitpicker {name}\b[^`]*`\]\(docs/guide/{name}\.md\) \|", rows,
                     re.MULTILINE), name


def test_every_link_reaches_a_page_and_its_heading() -> None:
    links = [link for link in LINK.findall(README) if not link.startswith(("http:", "https:"))]
    assert len(links) > 20
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), link
        if anchor:
            headings = re.findall(r"^#+ (.*)$", target.read_text(), re.MULTILINE)
            assert anchor in {slugify(h.replace("`", ""), "-") for h in headings}, link
