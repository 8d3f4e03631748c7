"""The Lighthouse plugin (plugins/lighthouse.py) with the real Lighthouse and Debian Chromium
against a page of the local fixture site: the four scores with their notes, and a page
Lighthouse cannot audit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from nitpicker_plugins import lighthouse
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import AnalyzePlugin, Snapshot
from nitpicker.policy.netguard import check_addresses
from nitpicker.render.guard_proxy import GuardProxy
from tests.counting_server import CountingServer

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fixtures.site import FixtureSite
    from nitpicker.policy.netguard import IPAddress, Refusal


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


def test_with_the_guard_lighthouses_browsers_reach_only_what_it_allows() -> None:
    """``denyPrivateNetworks``: Lighthouse's own Chromium goes through the guard's proxy. The
    policy here lets the page's server through (both servers are on 127.0.0.1) and refuses the
    other one, which the page's image, script and fetch() name: it gets no request, the page
    is audited, and the proxy refused what the page asked of the other server."""
    other = CountingServer()
    site = CountingServer({"/": (200, {"Content-Type": "text/html; charset=utf-8"}, (
        '<!doctype html><html lang="en"><head><title>Guarded</title>'
        '<meta name="viewport" content="width=device-width">'
        f'<script src="{other.url}/script.js"></script>'
        f"<script>fetch('{other.url}/fetch', {{method: 'POST'}});</script></head>"
        f'<body><h1>Guarded</h1><img src="{other.url}/img.png" alt="x"></body></html>'))})

    def policy(host: str, port: int, addresses: Sequence[IPAddress]) -> Refusal | None:
        return None if port == site.port else check_addresses(host, addresses)

    plugin = lighthouse.create({"denyPrivateNetworks": True})
    assert plugin.guard is not None
    plugin.guard = GuardProxy(check=policy)
    try:
        plugin.open()
        found = plugin.each_page(Snapshot(1, f"{site.url}/", ""))
        blocked = plugin.guard.blocked
    finally:
        plugin.close()
        site.stop()
        other.stop()
    assert other.taken() == []
    assert "/" in site.taken()
    assert blocked >= 2  # the script and the image at least
    assert found is not None
    assert isinstance(found.values["seo"].value, int)


def test_with_the_guard_a_page_on_a_private_host_is_not_audited() -> None:
    plugin = lighthouse.create({"denyPrivateNetworks": True})
    try:
        found = plugin.each_page(Snapshot(1, "http://127.0.0.1:9/", ""))
    finally:
        plugin.close()
    assert found is not None
    assert {value.note for value in found.values.values()} == {
        ("Error: blocked by the private-network guard: 127.0.0.1 resolves to 127.0.0.1 "
        "(loopback)")}
    assert plugin.worker.starts == 0  # Lighthouse never ran


@pytest.mark.parametrize(("settings", "named"), [
    ({"concurrency": 3}, "'concurrency'"),
    ({"config": 1}, "'config'"),
    ({"denyPrivateNetworks": 1}, "'denyPrivateNetworks'"),
])
def test_bad_settings_are_named(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingError, match=named):
        lighthouse.create(settings)


@pytest.mark.parametrize(("score", "value"), [(0.845, 85), (0.5, 50), (0.005, 1), (1.0, 100),
                                              (0.0, 0)])
def test_score_rounds_halves_up_like_javascript(score: float, value: int) -> None:
    assert lighthouse.score_value(score) == value
