"""The axe plugin (plugins/axe.py) in the real Chromium on the fixture pages under
``fixtures/site/analyze/``: the rules it reports, the snapshot served at its URL (relative
stylesheet found, scripts not run), locales, settings, concurrency and a browser that died."""

from __future__ import annotations

import os
import signal
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from nitpicker_plugins import axe
from nitpicker_plugins._browser import BrowserEngineError
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import AnalyzePlugin, Snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite


def snapshot(site: FixtureSite, path: str, page_id: int = 1) -> Snapshot:
    """The page as the archive gives it: its HTML and its own stylesheet (as the crawl
    records it: the only URL the offline browser may fetch)."""
    url = site.url(path)
    with urllib.request.urlopen(url) as response:
        return Snapshot(page_id, url, response.read().decode("utf-8"),
                        frozenset({site.url("/analyze/axe.css")}))


@pytest.fixture(scope="module")
def plugin() -> Iterator[axe.AxePlugin]:
    found = axe.create({})
    found.open()
    yield found
    found.close()


def by_rule(findings: Any) -> dict[str, Any]:
    return {v.rule: v for v in findings.violations}


def test_factory_builds_a_plugin_of_the_contract(plugin: axe.AxePlugin) -> None:
    assert isinstance(plugin, AnalyzePlugin)
    assert plugin.label == "axe: accessibility check"
    assert plugin.headers == {}
    assert plugin.version.startswith("3+axe-core-4.")


def test_known_violations_with_impact_as_severity(plugin: axe.AxePlugin, site: FixtureSite) -> None:
    page = snapshot(site, "/analyze/axe")
    found = by_rule(plugin.each_page(page))
    assert {"image-alt", "link-name", "color-contrast"} <= set(found)
    assert found["image-alt"].severity == "critical"
    assert found["link-name"].severity == "serious"
    assert found["link-name"].code == '<a href="/analyze/next"></a>'
    assert found["link-name"].element == "a"  # axe's selector: the only <a> of the page
    assert found["link-name"].message == (
        "Ensure links have discernible text Links must have discernible text"
        "(https://dequeuniversity.com/rules/axe/4.14/link-name?application=axeAPI)")
    for violation in found.values():
        assert violation.validator == "axe"
        assert violation.url == page.url
        assert violation.location is None


def test_stylesheet_resolves_against_the_page_url(plugin: axe.AxePlugin,
                                                  site: FixtureSite) -> None:
    """The low contrast comes from ``axe.css``, linked relatively: found only when the
    snapshot is loaded at its URL and the stylesheet is fetched."""
    contrast = by_rule(plugin.each_page(snapshot(site, "/analyze/axe")))["color-contrast"]
    assert contrast.code.startswith('<p class="faint">')


def test_offline_a_stylesheet_the_crawl_did_not_record_is_not_fetched(
        plugin: axe.AxePlugin, site: FixtureSite) -> None:
    """Offline (the default), the same page without its recorded resources loads no
    stylesheet: no contrast finding, and the site is not asked for ``axe.css``."""
    page = snapshot(site, "/analyze/axe")
    site.clear_log()
    found = by_rule(plugin.each_page(Snapshot(page.page_id, page.url, page.html)))
    assert "color-contrast" not in found
    assert "image-alt" in found
    assert not [entry for entry in site.request_log if entry[2].endswith("axe.css")]


def test_the_snapshots_scripts_do_not_run(plugin: axe.AxePlugin, site: FixtureSite) -> None:
    """The fixture's inline script removes ``lang`` and an ``onerror`` handler sets an ``alt``:
    neither may happen."""
    violations = plugin.each_page(snapshot(site, "/analyze/axe")).violations
    assert "html-has-lang" not in {v.rule for v in violations}
    images = [v for v in violations if v.rule == "image-alt"]
    assert [v.code.startswith("<img") for v in images] == [True, True]
    assert len({v.element for v in images}) == 2  # one finding per element, each its selector


def test_a_contrast_failure_is_a_violation_with_its_element_and_ratio(
        plugin: axe.AxePlugin, site: FixtureSite) -> None:
    """axe's ``violations`` as axe means them: status, impact, tags, help URL, the element's
    selector and the failure summary with the ratio and the colours."""
    contrast = by_rule(plugin.each_page(snapshot(site, "/analyze/axe")))["color-contrast"]
    assert contrast.status == "violation"
    assert contrast.severity == contrast.impact == "serious"
    assert contrast.element == ".faint"
    assert "wcag2aa" in contrast.tags
    assert contrast.help_url is not None
    assert contrast.help_url.startswith("https://dequeuniversity.com/rules/axe/4.14/color-contrast")
    assert contrast.summary is not None
    assert "insufficient color contrast of 2.16" in contrast.summary
    assert "foreground color: #b0b0b0, background color: #ffffff" in contrast.summary
    assert "Expected contrast ratio of 4.5:1" in contrast.summary


def test_a_page_with_only_needs_review_items_has_no_violation(
        plugin: axe.AxePlugin, site: FixtureSite) -> None:
    """Text over a background image: axe puts its contrast under ``incomplete``. It is kept
    as needs-review (with axe's impact beside), never as a failure of that impact."""
    findings = plugin.each_page(snapshot(site, "/analyze/review")).violations
    assert findings
    assert [v for v in findings if v.status == "violation"] == []
    review = {v.rule: v for v in findings}["color-contrast"]
    assert review.status == review.severity == "needs-review"
    assert review.impact == "serious"
    assert review.element == "p"
    assert review.summary is not None and "background image" in review.summary


def test_wcag_aa_preset_drops_best_practice_rules(site: FixtureSite) -> None:
    """``preset = "wcag-aa"`` runs the rules tagged WCAG 2.x A/AA only: the best practices
    (no landmark, no level-one heading) found by the default set are gone, the WCAG failure
    stays."""
    page = snapshot(site, "/analyze/practice")
    found: dict[str, set[str]] = {}
    for preset in ("all", "wcag-aa"):
        plugin = axe.create({"preset": preset, "concurrency": 1})
        try:
            findings = plugin.each_page(page).violations
        finally:
            plugin.close()
        found[preset] = {v.rule for v in findings}
        if preset == "wcag-aa":
            assert not [v for v in findings if "best-practice" in v.tags]
    assert {"region", "page-has-heading-one", "image-alt"} <= found["all"]
    assert found["wcag-aa"] == {"image-alt"}


def test_tags_run_only_the_rules_tagged(site: FixtureSite) -> None:
    """``tags`` (``--axe-tags``) replaces the preset's: best-practice alone finds no WCAG
    failure."""
    plugin = axe.create({"tags": ["best-practice"], "preset": "wcag-aa", "concurrency": 1})
    try:
        rules = {v.rule for v in plugin.each_page(snapshot(site, "/analyze/practice")).violations}
    finally:
        plugin.close()
    assert rules == {"region", "page-has-heading-one"}


@pytest.mark.parametrize(("settings", "message"), [
    ({"preset": "aa"}, r"setting 'preset' must be one of all, wcag-a, wcag-aa, got 'aa'"),
    ({"tags": ["wcag2x"]}, r"axe has no rule tagged 'wcag2x'; its tags include .*wcag2aa"),
    ({"tags": "wcag2a"}, r"setting 'tags' must be a list of non-empty strings"),
])
def test_bad_preset_or_tags_are_named(settings: dict[str, Any], message: str) -> None:
    """axe itself only logs a tag it does not know and runs no rule for it: refused here."""
    with pytest.raises(SettingError, match=message):
        axe.create(settings)


def test_clean_page_has_no_violations(plugin: axe.AxePlugin, site: FixtureSite) -> None:
    assert plugin.each_page(snapshot(site, "/analyze/clean")).violations == []


def test_pages_in_parallel_each_get_their_own_results(plugin: axe.AxePlugin,
                                                      site: FixtureSite) -> None:
    pages = [snapshot(site, "/analyze/axe" if i % 2 else "/analyze/clean", i) for i in range(8)]
    with ThreadPoolExecutor(plugin.concurrency) as pool:
        results = list(pool.map(plugin.each_page, pages))
    for page, findings in zip(pages, results, strict=True):
        rules = {v.rule for v in findings.violations}
        assert ("image-alt" in rules) == page.url.endswith("/axe")
        assert all(v.url == page.url for v in findings.violations)


def test_a_url_differing_only_by_fragment_loads_the_new_snapshot(site: FixtureSite) -> None:
    """A reused page at ``/x`` asked for ``/x#top`` would only scroll (no request, the old
    document stays): the new snapshot must be what is audited."""
    plugin = axe.create({"concurrency": 1})
    faulty = snapshot(site, "/analyze/axe")
    clean = Snapshot(2, faulty.url + "#top", snapshot(site, "/analyze/clean").html)
    try:
        assert "image-alt" in by_rule(plugin.each_page(faulty))
        assert plugin.each_page(clean).violations == []
    finally:
        plugin.close()


def test_lang_loads_the_locale(site: FixtureSite) -> None:
    plugin = axe.create({"lang": "ja", "concurrency": 1})
    try:
        found = by_rule(plugin.each_page(snapshot(site, "/analyze/axe")))
    finally:
        plugin.close()
    assert found["link-name"].message.startswith(
        "リンクに認識可能なテキストが存在することを確認してください")
    assert found["link-name"].message.endswith("&lang=ja)")


@pytest.mark.parametrize(("lang", "locale"), [
    ("ja", "ja"),
    ("ja-JP", "ja"),  # a region axe has no file for: its language's
    ("pt-BR", "pt-BR"),
    ("pt_br", "pt-BR"),  # axe's file name, any case
    ("zh-TW", "zh-TW"),
    ("en", None),  # axe's own English
    ("en-GB", None),
])
def test_lang_is_a_bcp47_tag(lang: str, locale: str | None) -> None:
    plugin = axe.create({"lang": lang})
    assert (plugin.locale or {}).get("lang") == locale


@pytest.mark.parametrize("lang", ["xx", "pt", "ja/../ja", "x" * 300])
def test_unknown_lang_is_a_setting_error_naming_the_languages(lang: str) -> None:
    """Not English in silence (a typo would give a whole archive English messages), nor an
    ``OSError`` for a name too long for a file: one line listing what axe has."""
    with pytest.raises(SettingError, match=r"axe has no messages in '.*'; it has en, .*ja, ") as err:
        axe.create({"lang": lang})
    assert err.value.setting == "lang"


def test_rules_setting_turns_colour_contrast_off(site: FixtureSite) -> None:
    plugin = axe.create({"rules": {"color-contrast": False}, "concurrency": 1})
    try:
        found = by_rule(plugin.each_page(snapshot(site, "/analyze/axe")))
    finally:
        plugin.close()
    assert "color-contrast" not in found
    assert "image-alt" in found


@pytest.mark.parametrize(("settings", "named"), [
    ({"concurrency": 0}, "'concurrency'"),
    ({"timeout": "soon"}, "'timeout'"),
    ({"styles": "yes"}, "'styles'"),
    ({"online": 1}, "'online'"),
    ({"denyPrivateNetworks": "true"}, "'denyPrivateNetworks'"),
    ({"timeout": float("nan")}, "'timeout'"),
    ({"rules": ["color-contrast"]}, "'rules'"),
    ({"lang": 3}, "'lang'"),
])
def test_bad_settings_are_named(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingError, match=named):
        axe.create(settings)


def browsers() -> set[int]:
    """This test process's Chromium browser processes (their renderers and helpers left out)."""
    found = set()
    for process in psutil.Process().children(recursive=True):
        try:
            if "chrom" in process.name() and "--type=" not in " ".join(process.cmdline()):
                found.add(process.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def test_a_browser_that_died_is_launched_again(site: FixtureSite) -> None:
    """As the host does: a failed call is made once more, and that one must succeed."""
    plugin = axe.create({"concurrency": 1})
    page = snapshot(site, "/analyze/axe")
    try:
        before = browsers()
        plugin.open()
        assert plugin.engine.launches == 1
        (pid,) = browsers() - before
        os.kill(pid, signal.SIGKILL)
        try:
            findings = plugin.each_page(page)
        except BrowserEngineError:
            findings = plugin.each_page(page)
        assert "image-alt" in by_rule(findings)
        assert plugin.engine.launches == 2
    finally:
        plugin.close()
