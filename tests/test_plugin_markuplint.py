"""The markuplint plugin (plugins/markuplint.py) with the real markuplint on
``fixtures/site/analyze/markuplint.html``: the count column, its note and the violations with
their line:col; a config from the settings."""

from __future__ import annotations

import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
from nitpicker_plugins import markuplint
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import AnalyzePlugin, PageValue, Snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite

EXPECTED = [
    ("id-duplication", "10:25", 'The value of the "id" attribute is duplicated'),
    ("permitted-contents", "9:6",
     'The "li" element is not allowed in the "div" element in this context'),
    ("required-attr", "2:1", 'The "html" element expects the "lang" attribute'),
]


def snapshot(site: FixtureSite, path: str) -> Snapshot:
    url = site.url(path)
    with urllib.request.urlopen(url) as response:
        return Snapshot(1, url, response.read().decode("utf-8"))


@pytest.fixture(scope="module")
def plugin() -> Iterator[markuplint.MarkuplintPlugin]:
    found = markuplint.create({})
    found.open()
    yield found
    found.close()


def test_factory_builds_a_plugin_of_the_contract(plugin: markuplint.MarkuplintPlugin) -> None:
    assert isinstance(plugin, AnalyzePlugin)
    assert plugin.label == "markuplint: HTML markup validation"
    assert plugin.headers == {"markuplint": "markuplint"}
    assert plugin.version.startswith("1+markuplint-4.")


def test_known_errors_with_line_and_column(plugin: markuplint.MarkuplintPlugin,
                                           site: FixtureSite) -> None:
    page = snapshot(site, "/analyze/markuplint")
    findings = plugin.each_page(page)
    assert [(v.rule, v.location, v.message) for v in findings.violations] == EXPECTED
    for violation in findings.violations:
        assert (violation.validator, violation.severity, violation.code) == (
            "markuplint", "error", "")
        assert violation.url == page.url
    assert findings.values == {"markuplint": PageValue(3, "\n".join(
        f"{message} ({rule})" for rule, _, message in EXPECTED))}


def test_a_clean_page_counts_zero(plugin: markuplint.MarkuplintPlugin, site: FixtureSite) -> None:
    findings = plugin.each_page(snapshot(site, "/analyze/clean"))
    assert findings.violations == []
    assert findings.values == {"markuplint": PageValue(0, None)}


def test_config_setting_replaces_the_defaults(site: FixtureSite) -> None:
    plugin = markuplint.create({"config": {"rules": {"id-duplication": True}}})
    try:
        findings = plugin.each_page(snapshot(site, "/analyze/markuplint"))
    finally:
        plugin.close()
    assert [(v.rule, v.location) for v in findings.violations] == [("id-duplication", "10:25")]


@pytest.mark.parametrize(("settings", "named"), [
    ({"config": "strict"}, "'config'"),
    ({"concurrency": True}, "'concurrency'"),
    ({"timeout": 0}, "'timeout'"),
    ({"recycle": -1}, "'recycle'"),
])
def test_bad_settings_are_named(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingError, match=named):
        markuplint.create(settings)
