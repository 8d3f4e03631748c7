"""RenderSettings: the render options parsed once, and a crawl without rendering loading no browser."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.settings import Settings

from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.default_settings import defaults
from nitpicker.render.chromium import BrowserMissingError
from nitpicker.render.settings import BROWSER_HANDLER, RenderSettings

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

ROOT = Path(__file__).resolve().parent.parent

#: Runs nitpicker's command line, then names the browser modules the process loaded.
_CLI_REPORTING_IMPORTS = """\
import atexit, sys
def report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"playwright", "scrapy_playwright"})
    print("LOADED", loaded, file=sys.stderr)
atexit.register(report)
sys.argv = ["nitpicker", *sys.argv[1:]]
from nitpicker.cli import main
main()
"""


def _cli_loaded(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _CLI_REPORTING_IMPORTS, *args],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("LOADED")][-1]


def test_a_crawl_without_rendering_and_a_query_load_no_browser(
    site: FixtureSite, tmp_path: Path
) -> None:
    loaded = _cli_loaded("crawl", site.url("/recursive/"), "--no-render", "-o", "plain",
                         "--silent", cwd=tmp_path)
    assert loaded == "LOADED []"
    archive = tmp_path / "plain.nitpicker"
    assert archive.is_file()
    assert _cli_loaded("query", str(archive), "summary", cwd=tmp_path) == "LOADED []"


def _config(**options: Any) -> CrawlConfig:
    return CrawlConfig(roots=("http://127.0.0.1:1/",), output="/tmp/x.nitpicker", **options)


@pytest.fixture
def chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A stand-in Chromium executable (RenderSettings only needs to find it)."""
    executable = tmp_path / "chromium"
    executable.write_text("")
    monkeypatch.setenv("NITPICKER_CHROMIUM", str(executable))
    return str(executable)


def test_no_render_reads_nothing_and_needs_no_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NITPICKER_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert RenderSettings.from_settings(Settings(), _config(render=False)) == RenderSettings(False)
    with pytest.raises(BrowserMissingError, match="Chromium not found"):
        RenderSettings.from_settings(Settings(), _config())


def test_render_settings_are_parsed_once(chromium: str) -> None:
    settings = Settings({
        **defaults(),  # what the add-on sets
        "NITPICKER_RENDER_PAGES": 8, "NITPICKER_NAVIGATION_TIMEOUT_MS": 1234,
        "NITPICKER_LAZY_WAIT_MS": 50, "DEFAULT_REQUEST_HEADERS": {"Accept-Language": "de-DE,de"},
    })
    render = RenderSettings.from_settings(settings, _config(parallels=3, image=False,
                                                            user_agent="Bot/1"))
    assert (render.enabled, render.executable, render.pages) == (True, chromium, 3)
    assert render.navigation_timeout_ms == 1234
    assert (render.options.lazy_wait_ms, render.options.network_idle_ms) == (50, 5000)
    assert (render.options.images, render.options.user_agent) == (False, "Bot/1")
    assert render.context == {
        "viewport": {"width": 1280, "height": 800}, "user_agent": "Bot/1",
        "ignore_https_errors": True, "extra_http_headers": {"Accept-Language": "de-DE,de"},
        "locale": "de-DE",
    }
    render.configure(settings)
    assert settings["DOWNLOAD_HANDLERS"] == {"http": BROWSER_HANDLER, "https": BROWSER_HANDLER}
    assert settings["PLAYWRIGHT_LAUNCH_OPTIONS"]["executable_path"] == chromium
    assert sorted(settings["PLAYWRIGHT_CONTEXTS"]) == ["nitpicker-0", "nitpicker-1", "nitpicker-2"]
    assert "PLAYWRIGHT_MAX_CONTEXTS" not in settings  # the pool bounds the contexts
    assert settings.getint("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") == 1234


def test_rendering_with_the_private_network_guard_names_both(chromium: str) -> None:
    settings = Settings({"NITPICKER_DENY_PRIVATE_NETWORKS": True})
    with pytest.raises(ConfigError, match="NITPICKER_DENY_PRIVATE_NETWORKS needs render=false"):
        RenderSettings.from_settings(settings, _config())
    assert not RenderSettings.from_settings(settings, _config(render=False)).enabled
