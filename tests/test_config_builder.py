"""nitpicker/crawl/config_builder.py: one way from the options given to a CrawlConfig, for a new
crawl, a resume and an append, from the CLI's flags or from spider arguments."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.crawl.config import ConfigError, CrawlConfig, default_user_agent
from nitpicker.crawl.config_builder import (
    RUNTIME_OPTIONS,
    GivenOptions,
    append_config,
    new_config,
    resume_config,
)
from nitpicker.crawl.session import CrawlSession
from nitpicker.crawl.spider_args import config_from_spider_args
from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS

if TYPE_CHECKING:
    from pathlib import Path

ROOT = "http://site.test/"


def archive(tmp_path: Path, **options: Any) -> Path:
    """An archive crawled with ``options`` (its roots not fetched yet)."""
    path = tmp_path / "site.nitpicker"
    options.setdefault("roots", (ROOT,))
    session = CrawlSession(CrawlConfig(output=str(path), render=False, **options))
    session.open()
    session.close("shutdown")
    return path


def given(**values: Any) -> GivenOptions:
    return GivenOptions(values, frozenset(values))


# -- a new crawl ------------------------------------------------------------------------------


def test_a_new_crawl(tmp_path: Path) -> None:
    config = new_config(given(roots=(ROOT,), output=str(tmp_path / "a"), excludes=["/a/*,/b/*"],
                              exclude_urls=["https://ads.test/"], user_agent=None))
    assert config.excludes == ("/a/*", "/b/*")
    assert config.exclude_urls == (*DEFAULT_EXCLUDED_URLS, "https://ads.test/")  # added once
    assert config.user_agent == default_user_agent()
    assert config.output == str(tmp_path / "a.nitpicker")
    assert config.recursive and config.follows_links


def test_single_is_ignored_in_list_mode_with_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    options = GivenOptions({"roots": (ROOT, f"{ROOT}b"), "list_mode": True, "single": True,
                            "output": str(tmp_path / "a")}, frozenset(),
                           {"single": "--single", "list_mode": "--list or --list-file"})
    config = new_config(options, warn=warnings.append)
    assert warnings == ["--single is ignored when --list or --list-file is specified."]
    assert (config.single, config.recursive, config.list_mode) == (False, False, True)


def test_spider_arguments_go_the_same_way(tmp_path: Path) -> None:
    from_args = config_from_spider_args({
        "roots": ROOT, "output": str(tmp_path / "a"), "excludes": "/a/*,/b/*",
        "exclude_urls": "https://ads.test/", "single": "true"})
    from_cli = new_config(given(roots=(ROOT,), output=str(tmp_path / "a"),
                                excludes=["/a/*,/b/*"], exclude_urls=["https://ads.test/"],
                                single=True))
    assert from_args == from_cli


# -- a resume ---------------------------------------------------------------------------------


def test_a_resume_keeps_the_archives_options_and_takes_this_runs(tmp_path: Path) -> None:
    path = archive(tmp_path, dedupe_cap=5, excludes=("/x/*",), parallels=2, max_pages=3)
    config = resume_config(path, given(dedupe_cap=5, interval=250))
    assert (config.dedupe_cap, config.excludes, config.resume) == (5, ("/x/*",), True)
    assert config.output == str(path)
    # runtime options are this run's: given, or their defaults
    assert (config.interval, config.parallels, config.max_pages) == (250, 10, None)


@pytest.mark.parametrize(
    ("option", "value", "kept"),
    [
        ("dedupe_cap", 50, "dedupe_cap=100"),
        ("dedupe_cap", 0, "dedupe_cap=100"),
        ("excludes", ["/y/*"], "excludes=/x/*"),
        ("render", True, "render=false"),
        ("user_agent", "Other/1", f"user_agent={default_user_agent()}"),
        ("exclude_urls", ["https://ads.test/"], f"exclude_urls={DEFAULT_EXCLUDED_URLS[0]},"),
    ],
)
def test_a_resume_refuses_an_option_that_changes_the_crawl(
    tmp_path: Path, option: str, value: Any, kept: str
) -> None:
    path = archive(tmp_path, excludes=("/x/*",))
    options = GivenOptions({option: value}, frozenset({option}), {"resume": "--resume"})
    with pytest.raises(ConfigError, match=re.escape(f"{option} cannot change with --resume: "
                                                    f"the archive keeps the options it was "
                                                    f"crawled with ({kept}")):
        resume_config(path, options)


def test_spider_arguments_resume_an_archive(tmp_path: Path) -> None:
    path = archive(tmp_path, roots=(ROOT, f"{ROOT}blog/"), dedupe_cap=5)
    config = config_from_spider_args({"resume": "true", "output": str(path),
                                      "parallels": "3"})
    assert (config.roots, config.dedupe_cap, config.parallels) == ((ROOT, f"{ROOT}blog/"), 5, 3)
    # the archive's roots (some of them) may be given again; the same options too
    again = config_from_spider_args({"resume": "true", "output": str(path),
                                     "roots": "http://SITE.test/", "dedupe_cap": "5"})
    assert again == dataclasses.replace(config, parallels=10)
    with pytest.raises(ConfigError, match="^roots cannot change with resume: .*roots=http"):
        config_from_spider_args({"resume": "true", "output": str(path),
                                 "roots": "http://other.test/"})
    with pytest.raises(ConfigError, match="^sitemap cannot change with resume"):
        config_from_spider_args({"resume": "true", "output": str(path), "sitemap": "no"})
    with pytest.raises(ConfigError, match="missing crawl argument: -a output=FILE"):
        config_from_spider_args({"resume": "true", "roots": ROOT})


def test_append_is_not_a_spider_argument(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="append is not a crawl argument: .*--append"):
        config_from_spider_args({"roots": ROOT, "output": str(tmp_path / "a"),
                                 "append": f"{ROOT}docs/"})


# -- an append --------------------------------------------------------------------------------


def test_an_append_adds_roots_and_crawls_them_fully(tmp_path: Path) -> None:
    path = archive(tmp_path, roots=(f"{ROOT}blog/",), recursive=False, excludes=("/x/*",))
    config = append_config(path, [f"{ROOT}docs/", f"{ROOT}blog/"], given(retry=0))
    assert config.roots == (f"{ROOT}blog/", f"{ROOT}docs/")
    assert config.append == (f"{ROOT}docs/",)  # the new ones only
    assert (config.recursive, config.resume, config.excludes, config.retry) == (
        True, True, ("/x/*",), 0)
    again = append_config(path, [f"{ROOT}blog/"], given())
    assert again.append == (f"{ROOT}blog/",)  # nothing new: the roots given


def test_appended_roots_are_normalised_as_the_archives(tmp_path: Path) -> None:
    path = archive(tmp_path, disable_queries=True)
    config = append_config(path, [f"{ROOT}docs/?page=2"], given())
    assert config.append == (f"{ROOT}docs/",)
    assert config.roots == (ROOT, f"{ROOT}docs/")


def test_an_append_refuses_an_option_that_changes_the_crawl(tmp_path: Path) -> None:
    path = archive(tmp_path)
    options = GivenOptions({"recursive": False}, frozenset({"recursive"}),
                           {"recursive": "--no-recursive", "append": "--append"})
    with pytest.raises(ConfigError, match="^--no-recursive cannot change with --append: "):
        append_config(path, [f"{ROOT}docs/"], options)
    assert append_config(path, [f"{ROOT}docs/"], options.with_values(recursive=True)).recursive


def test_the_runtime_options() -> None:
    assert RUNTIME_OPTIONS == ("parallels", "interval", "retry", "max_pages", "max_duration",
                               "max_archive_mb", "strict")
