"""The terminal multiselect (nitpicker/cli/choice.py) shared by ``analyze`` and ``report``,
answered through a patched ``typer.prompt``; the real terminal is in tests/test_analyze.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import typer

from nitpicker.analyze.config import plugin_name
from nitpicker.cli.analyze import select_plugins
from nitpicker.cli.choice import choose_many

if TYPE_CHECKING:
    from collections.abc import Iterator

PLUGINS = ["main-contents", "search", "axe"]


def answering(monkeypatch: pytest.MonkeyPatch, *answers: str) -> list[str]:
    """Make ``typer.prompt`` answer ``answers`` in turn; the prompts asked."""
    asked: list[str] = []
    given: Iterator[str] = iter(answers)

    def prompt(text: str, **_: object) -> str:
        asked.append(text)
        return next(given)

    monkeypatch.setattr(typer, "prompt", prompt)
    return asked


@pytest.mark.parametrize(("answer", "picked"), [
    ("", PLUGINS),  # Enter: every choice
    ("3 1", ["main-contents", "axe"]),  # in the order of the choices
    ("axe, 2", ["search", "axe"]),
    ("axe search", ["search", "axe"]),  # no comma: names apart by spaces too
    ("1 1", ["main-contents"]),
])
def test_choose_many(monkeypatch: pytest.MonkeyPatch, answer: str, picked: list[str]) -> None:
    answering(monkeypatch, answer)
    assert choose_many("Which?", PLUGINS, "Pick") == picked


def test_not_a_choice_is_named_and_asked_again(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    asked = answering(monkeypatch, "4", "@nitpicker/analyze-axe", "2")
    assert choose_many("Which?", PLUGINS, "Pick") == ["search"]
    assert asked == ["Pick"] * 3
    err = capsys.readouterr().err
    assert "Not a choice: '4'" in err and "Not a choice: '@nitpicker/analyze-axe'" in err


@pytest.mark.parametrize("typed", ["²", "١", "𝟚", "99999999999999999999999"])
def test_a_number_not_in_ascii_digits_is_not_a_choice(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str],
                                                      typed: str) -> None:
    """``²`` passes ``str.isdigit`` and made ``int()`` raise (a traceback at the prompt)."""
    answering(monkeypatch, typed, "2")
    assert choose_many("Which?", PLUGINS, "Pick") == ["search"]
    assert f"Not a choice: {typed!r}" in capsys.readouterr().err


def test_labels_another_spelling_and_the_typed_order(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    answering(monkeypatch, "@nitpicker/analyze-axe 1 axe")
    picked = choose_many("Which?", PLUGINS, "Pick", labels={"search": "Keyword search",
                         "axe": "axe"}, name_of=plugin_name, typed_order=True)
    assert picked == ["axe", "main-contents"]
    assert capsys.readouterr().err.splitlines() == [
        "Which?", "  1) main-contents", "  2) search — Keyword search", "  3) axe"]


def test_analyze_asks_with_the_labels_and_keeps_the_typed_order(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    asked = answering(monkeypatch, "nope", "2, @nitpicker/analyze-main-contents")
    picked = select_plugins(all_=False, named=[], configured=PLUGINS, known=PLUGINS,
                            interactive=True, labels={"main-contents": "Main content"})
    assert picked == ["search", "main-contents"]
    assert asked == ["Plugins (e.g. 1 3; Enter for all)"] * 2
    assert capsys.readouterr().err.splitlines() == [
        "What do you analyze?", "  1) main-contents — Main content", "  2) search", "  3) axe",
        "Not a choice: 'nope'"]
