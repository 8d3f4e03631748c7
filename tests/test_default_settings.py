"""nitpicker/default_settings.py, the one table of NITPICKER_* settings, and the one road from a
crawl option to the setting a component reads (``SiteSpider.project_options``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import CrawlerRunner
from scrapy.settings import SETTINGS_PRIORITIES, Settings
from scrapy.utils.test import get_crawler

from nitpicker.crawl.config import CrawlConfig
from nitpicker.default_settings import ENVIRONMENT, SETTINGS, defaults
from nitpicker.spiders.site import SiteSpider
from tests.components import projected_settings

PACKAGE = Path(__file__).resolve().parent.parent / "nitpicker"
SOURCE = {path: path.read_text() for path in PACKAGE.rglob("*.py")}
NAMES = {setting.name for setting in SETTINGS}


def config(tmp_path: Path, **options: Any) -> CrawlConfig:
    options.setdefault("render", False)
    return CrawlConfig(roots=("http://site.test/",), output=str(tmp_path / "a"), **options)


# -- the table --------------------------------------------------------------------------------


def test_every_nitpicker_name_in_the_package_is_in_the_table() -> None:
    found = {name for text in SOURCE.values()
             for name in re.findall(r"NITPICKER_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*[*{])", text)}
    assert found, "no NITPICKER_* names found"
    assert found - NAMES - {env.name for env in ENVIRONMENT} == set()


def test_every_setting_in_the_table_is_read() -> None:
    code = "\n".join(text for path, text in SOURCE.items() if path.name != "default_settings.py")
    for name in NAMES:
        assert re.search(rf"\.get\w*\(\s*\"{name}\"", code) or f'"{name}"' in code, name


def test_read_sites_have_no_default_of_their_own() -> None:
    inline = [(path.name, match) for path, text in SOURCE.items()
              for match in re.findall(r"\.get\w*\(\s*\"NITPICKER_[A-Z_]+\"\s*,[^)]*\)", text)]
    assert inline == []


def test_names_are_unique_and_documented() -> None:
    assert len(NAMES) == len(SETTINGS)
    for setting in SETTINGS:
        assert setting.help.strip(), setting.name
        if setting.option is not None:
            assert setting.option in CrawlConfig.__dataclass_fields__, setting


def test_the_option_defaults_agree_with_their_settings() -> None:
    fields = CrawlConfig.__dataclass_fields__
    for setting in SETTINGS:
        if setting.option in ("dedupe_age_window", "dedupe_map_cap", "dedupe_cap"):
            assert fields[setting.option].default == setting.default, setting.name


def test_the_add_on_sets_the_defaults_at_add_on_priority() -> None:
    crawler = get_crawler(settings_dict={"ADDONS": {"nitpicker.addon.Addon": 0},
                                         "NITPICKER_STOP_GRACE": 1.5})
    settings = crawler.settings
    for name, default in defaults().items():
        if name == "NITPICKER_STOP_GRACE":
            assert (settings[name], settings.getpriority(name)) == (1.5, SETTINGS_PRIORITIES[
                "project"])  # the project's value wins
        else:
            assert settings[name] == default, name
            assert settings.getpriority(name) == SETTINGS_PRIORITIES["addon"], name


# Scrapy imports every component it lists before the component refuses itself; these import
# aiohttp (the remote control) and tldextract, requests and urllib3 (the cookies middleware).
OFF_COMPONENTS = {
    "EXTENSIONS_BASE": ["scrapy.extensions.remote_control.RemoteControl",
                        "scrapy.extensions.telnet.TelnetConsole"],
    "DOWNLOADER_MIDDLEWARES_BASE": ["scrapy.downloadermiddlewares.cookies.CookiesMiddleware"],
}


def test_the_add_on_leaves_out_the_components_whose_setting_is_off() -> None:
    settings = get_crawler(settings_dict={"ADDONS": {"nitpicker.addon.Addon": 0}}).settings
    for base, components in OFF_COMPONENTS.items():
        listed = settings.getdict(base)
        assert listed, base
        for component in components:
            assert component not in listed, component


def test_a_component_whose_setting_is_on_stays() -> None:
    settings = get_crawler(settings_dict={"ADDONS": {"nitpicker.addon.Addon": 0},
                                          "COOKIES_ENABLED": True,
                                          "TELNETCONSOLE_ENABLED": True}).settings
    assert "scrapy.downloadermiddlewares.cookies.CookiesMiddleware" in settings.getdict(
        "DOWNLOADER_MIDDLEWARES_BASE")
    assert "scrapy.extensions.telnet.TelnetConsole" in settings.getdict("EXTENSIONS_BASE")
    assert "scrapy.extensions.remote_control.RemoteControl" not in settings.getdict(
        "EXTENSIONS_BASE")


def test_the_site_spider_sets_them_before_its_from_crawler() -> None:
    settings = Settings()
    SiteSpider.update_settings(settings)
    assert {name: settings[name] for name in NAMES} == defaults()


# -- the options projected --------------------------------------------------------------------


def effective(tmp_path: Path, name: str, operator: dict[str, Any], priority: str = "project",
              **options: Any) -> Any:
    return projected_settings(config(tmp_path, **options), operator, priority).get(name)


def test_scrapys_own_settings(tmp_path: Path) -> None:
    settings = projected_settings(config(tmp_path, parallels=3, interval=250, retry=1,
                                         user_agent="Bot/1", ignore_robots=True))
    assert {k: settings[k] for k in ("CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN",
                                     "DOWNLOAD_DELAY", "RETRY_TIMES", "USER_AGENT",
                                     "ROBOTSTXT_OBEY", "ROBOTSTXT_USER_AGENT")} == {
        "CONCURRENT_REQUESTS": 3, "CONCURRENT_REQUESTS_PER_DOMAIN": 3, "DOWNLOAD_DELAY": 0.25,
        "RETRY_TIMES": 1, "USER_AGENT": "Bot/1", "ROBOTSTXT_OBEY": False,
        "ROBOTSTXT_USER_AGENT": "Bot/1"}


@pytest.mark.parametrize("priority", ["project", "cmdline"])
@pytest.mark.parametrize(
    ("operator", "options", "enabled"),
    [
        ({}, {}, True),
        ({}, {"sitemap": False}, False),
        ({"NITPICKER_SITEMAP_ENABLED": True}, {"sitemap": False}, False),  # the option turns off
        ({"NITPICKER_SITEMAP_ENABLED": False}, {}, False),  # the operator's off stays off
        ({}, {"single": True}, False),  # a crawl that does not follow links
        ({}, {"list_mode": True}, False),
        ({}, {"resume": True}, False),
    ],
)
def test_the_sitemap_seeder_runs_only_if_both_allow_it(
    tmp_path: Path, operator: dict[str, Any], options: dict[str, Any], enabled: bool,
    priority: str
) -> None:
    value = effective(tmp_path, "NITPICKER_SITEMAP_ENABLED", operator, priority, **options)
    assert (value is None or bool(value)) is enabled


@pytest.mark.parametrize("priority", ["project", "cmdline"])
@pytest.mark.parametrize(
    ("operator", "options", "enabled"),
    [
        ({}, {}, True),
        ({}, {"predict_pagination": False}, False),
        ({"NITPICKER_PREDICT_PAGINATION": True}, {"predict_pagination": False}, False),
        ({"NITPICKER_PREDICT_PAGINATION": False}, {}, False),  # the operator's off stays off
        ({}, {"single": True}, False),  # a crawl that does not follow links
        ({}, {"list_mode": True}, False),
        ({}, {"resume": True}, True),  # a resume goes on predicting
    ],
)
def test_predictive_pagination_runs_only_if_both_allow_it(
    tmp_path: Path, operator: dict[str, Any], options: dict[str, Any], enabled: bool,
    priority: str
) -> None:
    value = effective(tmp_path, "NITPICKER_PREDICT_PAGINATION", operator, priority, **options)
    assert (value is None or bool(value)) is enabled


@pytest.mark.parametrize(
    ("operator", "priority", "option", "budget"),
    [
        ({}, "project", None, None),
        ({"NITPICKER_ARCHIVE_MAX_MB": 10.0}, "project", None, 10.0),
        ({"NITPICKER_ARCHIVE_MAX_MB": 10.0}, "cmdline", None, 10.0),
        ({"NITPICKER_ARCHIVE_MAX_MB": 10.0}, "project", 5.0, 5.0),
        ({"NITPICKER_ARCHIVE_MAX_MB": 10.0}, "cmdline", 5.0, 5.0),  # the option wins
    ],
)
def test_the_storage_budget(tmp_path: Path, operator: dict[str, Any], priority: str,
                            option: float | None, budget: float | None) -> None:
    assert effective(tmp_path, "NITPICKER_ARCHIVE_MAX_MB", operator, priority,
                     max_archive_mb=option) == budget


@pytest.mark.parametrize(
    ("operator", "priority", "option", "cap"),
    [
        ({}, "project", 100, None),  # the default: the add-on's NITPICKER_DEDUPE_CAP (100) holds
        ({}, "project", 0, 0),  # --dedupe-cap 0: off
        ({"NITPICKER_DEDUPE_CAP": 50}, "project", 100, 50),  # every crawl of the project
        ({"NITPICKER_DEDUPE_CAP": 50}, "project", 200, 200),  # the crawl's option
        ({"NITPICKER_DEDUPE_CAP": 50}, "project", 0, 0),  # the crawl's off
        ({"NITPICKER_DEDUPE_CAP": 50}, "cmdline", 200, 50),  # scrapy crawl -s
    ],
)
def test_the_trap_cap(tmp_path: Path, operator: dict[str, Any], priority: str,
                      option: int, cap: int | None) -> None:
    assert effective(tmp_path, "NITPICKER_DEDUPE_CAP", operator, priority,
                     dedupe_cap=option) == cap


def test_the_spider_reads_the_budget_from_the_setting(tmp_path: Path) -> None:
    settings = Settings({"NITPICKER_ARCHIVE_MAX_MB": 2})
    crawler = CrawlerRunner(settings).create_crawler(SiteSpider)
    spider = SiteSpider.from_crawler(crawler, config=config(tmp_path))
    assert spider.session.max_archive_bytes == 2 * 1024 * 1024
    assert crawler.settings.getint("NITPICKER_RENDER_PAGES") == 4  # the defaults were there
