"""The textlint plugin (plugins/textlint.py) with the real textlint and the Japanese default
rules on ``fixtures/site/analyze/textlint.html``: rule ids, severities and line:col; rules
from the settings; a URL ending in ``/``; the rule set by the page's language
(``plugins/_language.py``): the English set on ``english.html``, none on a French page."""

from __future__ import annotations

import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
from nitpicker_plugins import textlint
from nitpicker_plugins._language import page_language
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import AnalyzePlugin, Snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite

#: rule, line:col in textlint.html
EXPECTED = [
    ("no-hankaku-kana", "9:9"),
    ("no-dropping-the-ra", "10:10"),
    ("max-ten", "11:17"),
]


def snapshot(site: FixtureSite, path: str, url: str | None = None) -> Snapshot:
    with urllib.request.urlopen(site.url(path)) as response:
        return Snapshot(1, url or site.url(path), response.read().decode("utf-8"))


@pytest.fixture(scope="module")
def plugin() -> Iterator[textlint.TextlintPlugin]:
    found = textlint.create({})
    found.open()
    yield found
    found.close()


def test_factory_builds_a_plugin_of_the_contract(plugin: textlint.TextlintPlugin) -> None:
    assert isinstance(plugin, AnalyzePlugin)
    assert plugin.label == "textlint: text proofreading"
    assert plugin.headers == {}
    assert plugin.version.startswith("2+textlint-15.")


def test_known_findings_in_japanese_text(plugin: textlint.TextlintPlugin,
                                         site: FixtureSite) -> None:
    page = snapshot(site, "/analyze/textlint")
    findings = plugin.each_page(page)
    assert [(v.rule, v.location) for v in findings.violations] == EXPECTED
    messages = {v.rule: v.message for v in findings.violations}
    assert messages["no-hankaku-kana"] == 'Disallow to use 半角カタカナ: "ﾃｽﾄ"'
    assert messages["no-dropping-the-ra"] == "ら抜き言葉を使用しています。"
    for violation in findings.violations:
        assert (violation.validator, violation.severity, violation.code) == (
            "textlint", "error", "-")
        assert violation.url == page.url
    assert findings.values == {}


def test_a_directory_url_is_linted_as_html(plugin: textlint.TextlintPlugin,
                                           site: FixtureSite) -> None:
    """The original named ``/a/`` ``/a/.html``, which has no extension, and textlint refused
    the page; ``/a/index.html`` is linted."""
    page = snapshot(site, "/analyze/textlint", url=site.url("/analyze/"))
    assert [(v.rule, v.location) for v in plugin.each_page(page).violations] == EXPECTED


def test_rules_setting_merges_over_the_defaults(site: FixtureSite) -> None:
    """``false`` turns a default off; options replace a default's."""
    rules: dict[str, Any] = dict.fromkeys(textlint.DEFAULT_RULES, False)
    rules["no-hankaku-kana"] = True
    rules["max-ten"] = {"max": 5}
    plugin = textlint.create({"rules": rules})
    try:
        findings = plugin.each_page(snapshot(site, "/analyze/textlint"))
    finally:
        plugin.close()
    assert [(v.rule, v.location) for v in findings.violations] == [("no-hankaku-kana", "9:9")]


def test_bad_rules_setting_is_named() -> None:
    with pytest.raises(SettingError, match="'rules'"):
        textlint.create({"rules": ["max-ten"]})


def test_bad_english_rules_setting_is_named() -> None:
    with pytest.raises(SettingError, match="'englishRules'"):
        textlint.create({"englishRules": "write-good"})


def test_an_english_page_gets_english_rules_and_no_japanese_one(
        plugin: textlint.TextlintPlugin, site: FixtureSite) -> None:
    """``english.html`` (``lang="en"``, one sentence naming 東京): the Japanese set used to
    flag it (``ja-no-mixed-period``: no 。; ``web-plus-db``); now the English set reads it:
    passive voice and a weasel word, a misspelling, a product's name."""
    findings = plugin.each_page(snapshot(site, "/analyze/english")).violations
    rules = {v.rule for v in findings}
    assert not rules & set(textlint.DEFAULT_RULES)
    assert rules == {"write-good", "common-misspellings", "terminology"}
    located = {(v.rule, v.location) for v in findings}
    assert {("common-misspellings", "11:13"), ("terminology", "12:29")} <= located
    assert any("very" in v.message for v in findings if v.rule == "write-good")


def test_a_page_of_another_language_is_not_linted(plugin: textlint.TextlintPlugin,
                                                  site: FixtureSite) -> None:
    page = snapshot(site, "/analyze/english")
    french = Snapshot(2, page.url, page.html.replace('lang="en"', 'lang="fr"'))
    assert not plugin.each_page(french).violations


def test_english_rules_merge_over_the_english_defaults(site: FixtureSite) -> None:
    plugin = textlint.create({"englishRules": {"write-good": False, "terminology": False}})
    try:
        findings = plugin.each_page(snapshot(site, "/analyze/english")).violations
    finally:
        plugin.close()
    assert {v.rule for v in findings} == {"common-misspellings"}


@pytest.mark.parametrize(("html", "language"), [
    ('<html lang="ja-JP"><body><p>English text</p>', "ja"),  # declared wins over the text
    ("<HTML LANG=en-GB><body>テキスト", "en"),
    ("<html lang='pt_BR'>", "pt"),
    ("<html><body><p>これは日本語のページです。</p>", "ja"),  # undeclared: detected
    ("<html><body><p>東京 Tokyo is a large city.</p>", "en"),  # kanji alone is not Japanese
    ("<html><body><p>An English page.</p><script>var テスト = 1;</script>", "en"),
    ('<html lang=""><body><p>12 345</p>', None),
    ("", None),
])
def test_page_language(html: str, language: str | None) -> None:
    assert page_language(html) == language
