"""The Lighthouse plugin (plugins/lighthouse.py) with the real Lighthouse and Debian Chromium
against a page of the local fixture site: the four scores with their notes, and a page
Lighthouse cannot audit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from nitpicker_plugins import lighthouse
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import AnalyzePlugin, Snapshot

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


@pytest.mark.slow
def test_four_scores_with_notes_then_an_error_page(site: FixtureSite) -> None:
    plugin = lighthouse.create({})
    assert isinstance(plugin, AnalyzePlugin)
    assert plugin.headers == {"performance": "Performance", "accessibility": "Accessibility",
                              "best-practices": "Best Practices", "seo": "SEO"}
    assert plugin.version == "1+lighthouse-12.2.3"
    assert plugin.concurrency == 1
    try:
        plugin.open()
        page = plugin.each_page(Snapshot(1, site.url("/analyze/lighthouse"), ""))
        missing = plugin.each_page(Snapshot(2, site.url("/analyze/no-such-page"), ""))
    finally:
        plugin.close()
    assert page is not None and missing is not None
    assert set(page.values) == set(plugin.headers)
    for value in page.values.values():
        assert isinstance(value.value, int)
        assert 0 <= value.value <= 100
    # the image without alt costs accessibility points, and says so in the note
    accessibility = page.values["accessibility"]
    assert isinstance(accessibility.value, int) and accessibility.value < 100
    assert accessibility.note is not None
    assert "Image elements do not have `[alt]` attributes: " in accessibility.note
    # a 404 is not audited: empty values, the reason in the note
    for value in missing.values.values():
        assert value.value is None
        assert value.note is not None and value.note.startswith("Error: ")
        assert "404" in value.note


@pytest.mark.parametrize(("settings", "named"), [
    ({"concurrency": 3}, "'concurrency'"),
    ({"config": 1}, "'config'"),
])
def test_bad_settings_are_named(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingError, match=named):
        lighthouse.create(settings)


@pytest.mark.parametrize(("score", "value"), [(0.845, 85), (0.5, 50), (0.005, 1), (1.0, 100),
                                              (0.0, 0)])
def test_score_rounds_halves_up_like_javascript(score: float, value: int) -> None:
    assert lighthouse.score_value(score) == value
