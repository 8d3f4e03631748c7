"""The modes table of ``nitpicker crawl`` (``nitpicker/crawl/modes.py``) and the flag table it
spells from (``nitpicker/crawl/flags.py``), through the command line: each flag a mode refuses
is one ``Error:`` line naming both, before anything is read or written; each rule a mode needs
likewise; a flag a mode accepts gets past the table; ``--help`` lists every mode; and every
flag of ``crawl`` is a row of the flag table, declared nowhere else."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import typer.main

from nitpicker.cli import app
from nitpicker.crawl.config import CrawlConfig
from nitpicker.crawl.flags import FLAGS, flag, flags_of, spelling
from nitpicker.crawl.modes import (
    BARE_URLS,
    HELP_ORDER,
    MODES,
    chosen_mode,
    given_flags,
    mode,
    refusal,
)
from tests.helpers import ROOT, run

if TYPE_CHECKING:
    from nitpicker.crawl.modes import Mode, Rule
    from tests.conftest import FixtureSite

URL = "http://127.0.0.1:1/"
REDIS = "redis://127.0.0.1:1/0"

ARGS: dict[str, list[str]] = {
    "urls": [URL],
    BARE_URLS: [URL],
    "output": ["-o", "out"],
    "resume": ["--resume", "r.nitpicker"],
    "append": ["--append", "a.nitpicker"],
    "retry_failed": ["--retry-failed", "f.nitpicker"],
    "list_urls": ["--list", URL],
    "list_file": ["--list-file", "urls.txt"],
    "single": ["--single"],
    "workers": ["--workers", "2"],
    "baseline": ["--baseline", "old.nitpicker"],
    "fail_on": ["--fail-on", "new-4xx"],
    "suppressions": ["--suppressions", "accepted.json"],
    "diff": ["--diff"],
    "frontier": ["--frontier", REDIS],
    "coordinate": ["--coordinate"],
    "merge": ["--merge", "s.nitpicker"],
    "inventory": ["--inventory", "urls.txt"],
    "like": ["--like", "old.nitpicker"],
}
"""A command line's words giving each flag (by name) the modes name. The files named need
not exist: a refusal comes before any file is read."""

MODE_FLAGS: dict[str, tuple[str, ...]] = {
    "diff": ("diff",),
    "coordinate": ("urls", "frontier", "coordinate"),
    "merge": ("urls", "frontier", "coordinate", "merge", "output"),
    "frontier": ("urls", "frontier"),
    "like": ("like",),
    "append": ("append", "urls"),
    "retry-failed": ("retry_failed",),
    "resume": ("resume",),
    "workers": ("urls", "workers"),
    "baseline": ("urls", "baseline", "fail_on"),
    "list": ("list_urls",),
    "single": ("urls", "single"),
    "fresh": ("urls",),
}
"""Each mode's command line with everything it needs."""


def _words(names: tuple[str, ...] | list[str]) -> list[str]:
    words = [word for name in names if name != "diff" for word in ARGS[name]]
    return ["--diff", "a.nitpicker", "b.nitpicker", *words] if "diff" in names else words


def _rules(needs: bool) -> list[tuple[str, str, Rule]]:
    """(mode, flag, rule): each flag a mode refuses, or needs, with the rule saying so."""
    return [(row.name, name, rule) for row in MODES for rule in row.rules
            if rule.needs is needs for name in rule.flags
            if not (needs and name in ("list_urls", "list_file"))]  # fresh: the URLs stand in


def _refused(tmp_path: Path, args: list[str]) -> str:
    """The one line ``crawl ARGS`` fails with; nothing read, nothing written."""
    (tmp_path / "urls.txt").write_text(URL + "\n")
    done = run("crawl", *args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["urls.txt"], "nothing written"
    return lines[0]


@pytest.mark.parametrize(("name", "refused", "rule"), _rules(needs=False),
                         ids=[f"{m}-{f}" for m, f, _ in _rules(needs=False)])
def test_each_flag_a_mode_refuses_is_one_line_naming_both(
        tmp_path: Path, name: str, refused: str, rule: Rule) -> None:
    row = mode(name)
    line = _refused(tmp_path, _words([*MODE_FLAGS[name], refused]))
    assert line == f"Error: {rule.line(row.flag, [refused])}"
    assert row.flag in line
    assert ("URLs" if refused == BARE_URLS else spelling(refused)) in line


@pytest.mark.parametrize(("name", "needed", "rule"), _rules(needs=True),
                         ids=[f"{m}-{f}" for m, f, _ in _rules(needs=True)])
def test_each_flag_a_mode_needs_is_one_line_when_missing(
        tmp_path: Path, name: str, needed: str, rule: Rule) -> None:
    without = [flag_name for flag_name in MODE_FLAGS[name] if flag_name != needed]
    line = _refused(tmp_path, _words(without))
    assert line == f"Error: {rule.line(mode(name).flag, [])}"
    names = ["URL"] if needed == "urls" else [part for opt in flag(needed).opts
                                               for part in opt.split("/")]
    assert any(word in line for word in names), line


def test_the_lines_other_tests_and_the_manual_quote_are_the_tables() -> None:
    def line(*names: str) -> str | None:
        return refusal(given_flags({name: _value(name) for name in names}))

    assert line("append", "urls", "single") == ("--append cannot be combined with --list, "
                                               "--list-file or --single")
    assert line("append", "urls", "retry_failed") == ("--retry-failed and --append cannot be "
                                                     "used together")
    assert line("frontier", "urls", "workers", "baseline") == ("--frontier cannot be used with "
                                                              "--workers, --baseline")
    assert line("resume", "output") == ("--output flag is not supported with --resume. The "
                                        "archive path is determined by the archive being "
                                        "resumed.")
    assert line() == "Give a URL to crawl, --list URL…, --list-file FILE or --resume FILE"
    assert line("resume", "workers", "baseline", "fail_on") is None


def _value(name: str) -> object:
    """A value given for the flag ``name`` (not its default)."""
    if name in ("urls", BARE_URLS):
        return [URL]
    entry = flag(name)
    if entry.type is bool:
        return not entry.value_default
    return 2 if entry.type is int else (["x"] if entry.is_repeatable else Path("x.nitpicker"))


def test_credentials_in_a_url_are_a_root_given_again_not_a_new_one() -> None:
    with_credentials = given_flags({"resume": Path("r.nitpicker"),
                                    "urls": ["http://u:p@127.0.0.1:1/"]})
    assert refusal(with_credentials) is None
    bare = given_flags({"resume": Path("r.nitpicker"), "urls": [URL]})
    assert refusal(bare) == ("--resume takes no URLs, --list or --list-file: the archive holds "
                             "the crawl's roots (only a root crawled with credentials is given "
                             "again, with them)")


@pytest.mark.parametrize(("values", "given"), [
    ({"workers": 2}, {"workers"}),
    ({"workers": 0}, {"workers"}),
    ({"workers": 1}, set()),  # the default
    ({"output": "x"}, {"output"}),
    ({"output": ""}, set()),  # empty: -o '' is the default name
    ({"merge": []}, set()),
    ({"single": True, "render": False}, {"single", "render"}),
])
def test_a_flag_is_given_when_neither_its_default_nor_empty(values: dict[str, object],
                                                            given: set[str]) -> None:
    assert given_flags(values) == given


@pytest.mark.parametrize("name", [row.name for row in MODES if row.alone])
def test_each_way_a_crawl_runs_is_chosen_by_its_flag(name: str) -> None:
    assert chosen_mode(given_flags({n: _value(n) for n in MODE_FLAGS[name]})).name == name


@pytest.fixture(scope="module")
def archives(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small crawl (``base``) and a copy of it (``old``, a baseline)."""
    directory = tmp_path_factory.mktemp("modes")
    done = run("crawl", site.url("/about"), "-o", "base", "--silent", "--retry", "0",
               cwd=directory)
    assert done.returncode == 0, done.stderr
    shutil.copyfile(directory / "base.nitpicker", directory / "old.nitpicker")
    return directory


GATE = ["--baseline", "old.nitpicker", "--fail-on", "new-5xx"]


@pytest.mark.parametrize(("name", "args", "accepted"), [
    ("fresh", ["{url}", "-o", "fresh"], "output"),
    ("list", ["--list", "{url}", "-o", "listed"], "output"),
    ("single", ["{url}", "--single", *GATE, "-o", "single"], "baseline"),
    ("resume", ["--resume", "base.nitpicker", *GATE], "baseline"),
    ("append", ["--append", "base.nitpicker", "{other}", *GATE], "baseline"),
    ("retry-failed", ["--retry-failed", "base.nitpicker", *GATE], "baseline"),
    ("workers", ["{url}", "--workers", "2", "-o", "workers"], "output"),
    ("baseline", ["{url}", *GATE, "-o", "gated"], "output"),
    ("diff", ["--diff", "base.nitpicker", "old.nitpicker", "-o", "ignored"], "output"),
])
def test_a_flag_a_mode_accepts_is_accepted(site: FixtureSite, archives: Path, tmp_path: Path,
                                           name: str, args: list[str], accepted: str) -> None:
    """A flag the table does not refuse with the mode (one another mode refuses) runs to the
    end: exit 0."""
    assert accepted not in mode(name).not_with()
    assert any(accepted in other.not_with() for other in MODES)
    for file in ("base", "old"):
        shutil.copyfile(archives / f"{file}.nitpicker", tmp_path / f"{file}.nitpicker")
    words = [arg.format(url=site.url("/about"), other=site.url("/scope/docs/")) for arg in args]
    done = run("crawl", *words, "--silent", "--retry", "0", cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "Error:" not in done.stderr


@pytest.mark.parametrize("name", ["frontier", "coordinate", "merge"])
def test_a_distributed_mode_gets_past_the_table_to_its_frontier(tmp_path: Path,
                                                                 name: str) -> None:
    """Its flags accepted, the next step speaks: Redis cannot be reached; nothing written."""
    done = run("crawl", *_words(MODE_FLAGS[name]), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: cannot reach the frontier at {REDIS}"), done.stderr
    assert not list(tmp_path.iterdir())


def test_the_help_lists_every_mode_in_the_tables_words(tmp_path: Path) -> None:
    shown = run("crawl", "--help", cwd=tmp_path).stdout
    places = [shown.index(f" {name}: {mode(name).usage.format_map(_Spelled())}")
              for name in HELP_ORDER]
    assert places == sorted(places)
    flat = " ".join(shown.split())
    for row in MODES:
        refused = row.not_with()
        if refused:
            assert "not with " + ", ".join(_spelled(name) for name in refused) in flat, row.name
    assert ("append: --append FILE URL… add the URLs as new roots to this archive and crawl on; "
            "not with --retry-failed, --workers, --output, --resume, --list, --list-file, "
            "--single, --diff, --frontier") in flat


def test_the_guide_lists_every_mode_with_the_flags_the_table_gives_it() -> None:
    """``docs/guide/crawl.md``'s Modes table: one row a mode, written as the help writes it,
    its *not with* and *needs* columns the table's."""
    guide = (ROOT / "docs" / "guide" / "crawl.md").read_text()
    rows = re.findall(r"^\| ([a-z-]+) \| `([^`]*)` \| [^|]* \| ([^|]*) \| ([^|]*) \|$", guide,
                      re.MULTILINE)
    assert [row[0] for row in rows] == list(HELP_ORDER)
    for name, usage, refused, needs in rows:
        row = mode(name)
        assert usage == row.usage.format_map(_Spelled()), name
        assert re.findall(r"`([^`]+)`", refused) == [_spelled(n) for n in row.not_with()], name
        needed = [_spelled(n) for rule in row.rules if rule.needs for n in rule.flags]
        assert re.findall(r"`([^`]+)`", needs) == [n for n in needed if n != "URLs"], name


def _spelled(name: str) -> str:
    return "URLs" if name in ("urls", BARE_URLS) else spelling(name)


class _Spelled(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return _spelled(key)


# -- each crawl flag declared once ------------------------------------------------------------

CRAWL = typer.main.get_command(app).commands["crawl"]  # type: ignore[attr-defined]


def test_every_flag_of_crawl_is_a_row_of_the_flag_table() -> None:
    params = {param.name: param for param in CRAWL.params}
    assert set(params) == {entry.name for entry in FLAGS}
    for entry in FLAGS:
        param = params[entry.name]
        if entry.is_argument:
            assert param.param_type_name == "argument"
            continue
        spelled = [*param.opts, *param.secondary_opts]
        assert [part for opt in entry.opts for part in opt.split("/")] == spelled, entry.name
        assert (param.help, param.default) == (entry.help, entry.value_default), entry.name


def test_every_crawl_option_is_a_config_field_with_its_default() -> None:
    fields = {field.name: field for field in dataclasses.fields(CrawlConfig)}
    for entry in flags_of("option"):
        if entry.name == "header_file":  # read into headers by the builder
            continue
        field = fields[entry.name]
        if not entry.is_repeatable and entry.value_default is not None:
            assert entry.value_default == field.default, entry.name


@pytest.mark.parametrize("row", MODES, ids=[row.name for row in MODES])
def test_every_flag_a_mode_names_is_a_flag(row: Mode) -> None:
    for name in (*row.selected_by, *(n for rule in row.rules for n in rule.flags)):
        assert name in ("urls", BARE_URLS) or flag(name).name == name
