"""nitpicker.analyze.config: which file, which plugins, which settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nitpicker.analyze.config import (
    ConfigError,
    PluginEntry,
    cli_overrides,
    load_config,
    plugin_name,
)
from nitpicker.analyze.discovery import BUNDLED, OPT_IN

KNOWN = ("axe", "lighthouse", "main-contents", "markuplint", "search", "textlint", "extra")


def test_no_config_runs_the_bundled_ones_but_lighthouse(tmp_path: Path) -> None:
    """Lighthouse is opt-in (~16 s a page, live): never by the fallback."""
    config = load_config(tmp_path, KNOWN)
    assert config.source is None
    assert list(BUNDLED) == [
        "axe", "lighthouse", "main-contents", "markuplint", "search", "textlint"]
    assert OPT_IN == ("lighthouse",)
    assert [entry.name for entry in config.plugins] == [
        "axe", "main-contents", "markuplint", "search", "textlint"]


def test_a_config_that_names_lighthouse_runs_it(tmp_path: Path) -> None:
    (tmp_path / "nitpicker.toml").write_text('[plugins.analyze]\nsearch = true\nlighthouse = true\n')
    assert [entry.name for entry in load_config(tmp_path, KNOWN).plugins] == [
        "search", "lighthouse"]


def test_order_true_false_and_settings(tmp_path: Path) -> None:
    (tmp_path / "nitpicker.toml").write_text(
        '[plugins.analyze]\nsearch = { keywords = ["a"] }\naxe = false\nextra = true\n'
        'main-contents = { mainContentSelector = "#x" }\n')
    config = load_config(tmp_path, KNOWN)
    assert config.source == tmp_path / "nitpicker.toml"
    assert config.plugins == (PluginEntry("search", {"keywords": ["a"]}), PluginEntry("extra"),
                              PluginEntry("main-contents", {"mainContentSelector": "#x"}))
    assert config.settings_of("axe") == {} and config.settings_of("textlint") == {}


@pytest.mark.parametrize(("files", "found"), [
    ({"nitpicker.toml": '[plugins.analyze]\nsearch = true\n',
      ".nitpickerrc": '{"plugins": {"analyze": {"axe": true}}}'}, "nitpicker.toml"),
    ({"pyproject.toml": '[project]\nname = "x"\n',  # no [tool.nitpicker]: skipped
      "package.json": '{"name": "x", "nitpicker": {"plugins": {"analyze": {"axe": true}}}}'},
     "package.json"),
    ({"pyproject.toml": '[tool.nitpicker.plugins.analyze]\nsearch = true\n',
      "package.json": '{"name": "x", "nitpicker": {"plugins": {"analyze": {"axe": true}}}}'},
     "pyproject.toml"),
    ({"package.json": '{"name": "x"}',  # no nitpicker key: skipped
      ".nitpickerrc.json": '{"plugins": {"analyze": {"axe": true}}}'}, ".nitpickerrc.json"),
])
def test_the_first_file_with_a_config_wins(tmp_path: Path, files: dict[str, str],
                                           found: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert load_config(tmp_path, KNOWN).source == tmp_path / found


def test_the_originals_rc_file_as_is(tmp_path: Path) -> None:
    (tmp_path / ".nitpickerrc").write_text(json.dumps({"plugins": {"analyze": {
        "@nitpicker/analyze-axe": {"lang": "ja"}, "@nitpicker/analyze-lighthouse": False,
        "@nitpicker/analyze-markuplint": True}}}))
    config = load_config(tmp_path, KNOWN)
    assert config.plugins == (PluginEntry("axe", {"lang": "ja"}), PluginEntry("markuplint"))
    assert plugin_name("@nitpicker/analyze-main-contents") == "main-contents"
    assert plugin_name("search") == "search"


@pytest.mark.parametrize("text", ['[plugins]\nx = 1\n', '[plugins.analyze]\n'])
def test_no_or_an_empty_analyze_table_runs_the_bundled_ones(tmp_path: Path, text: str) -> None:
    (tmp_path / "nitpicker.toml").write_text(text)
    config = load_config(tmp_path, KNOWN)
    assert [entry.name for entry in config.plugins] == [
        name for name in BUNDLED if name not in OPT_IN]


def test_every_plugin_disabled_enables_none(tmp_path: Path) -> None:
    (tmp_path / "nitpicker.toml").write_text('[plugins.analyze]\naxe = false\n')
    assert load_config(tmp_path, KNOWN).plugins == ()


@pytest.mark.parametrize(("text", "message"), [
    ('plugins = 3\n', "nitpicker.toml:1: plugins must be a table (an object)"),
    ('[plugins]\nanalyze = [1]\n', "nitpicker.toml:2: plugins.analyze must be a table"),
    ('[plugins.analyze]\n\n"@nitpicker/analyze-nope" = true\n',
     "nitpicker.toml:3: unknown plugin '@nitpicker/analyze-nope'. Known plugins: axe, extra,"),
    ('[plugins.analyze]\nsearch = 1\n', "nitpicker.toml:2: plugins.analyze.search must be"),
])
def test_malformed_shapes_name_the_file_and_line(tmp_path: Path, text: str,
                                                 message: str) -> None:
    (tmp_path / "nitpicker.toml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, KNOWN)
    assert str(raised.value).startswith(f"{tmp_path}/{message}")


def test_the_network_switches_only_turn_settings_on() -> None:
    """``--online`` is axe's ``online``; ``--deny-private-networks`` the ``denyPrivateNetworks``
    of every bundled plugin that runs a browser; neither given: no key (the config's stays)."""
    assert cli_overrides(online=False, deny_private_networks=False) == {}
    assert cli_overrides(online=True, deny_private_networks=True) == {
        "axe": {"online": True, "denyPrivateNetworks": True},
        "lighthouse": {"denyPrivateNetworks": True},
    }


def test_cli_overrides_only_for_flags_given() -> None:
    assert cli_overrides() == {}
    assert cli_overrides(search_keywords=["a", "/b/i"], search_scope="main",
                         main_content_selector="#m", axe_lang="ja") == {
        "search": {"keywords": ["a", "/b/i"], "scope": "main"},
        "main-contents": {"mainContentSelector": "#m"},
        "axe": {"lang": "ja"},
    }
