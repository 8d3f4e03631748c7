"""nitpicker.crawl.config: validation, spider arguments and output naming (SPEC §2.1, §3.18)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nitpicker.crawl.config import (
    ConfigError,
    CrawlConfig,
    default_output_path,
    resolve_output_path,
    validate_url,
)
from nitpicker.crawl.spider_args import config_from_spider_args
from nitpicker.items import MAX_URL_LENGTH
from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS

ROOT = "http://example.com/"


def make(**overrides: Any) -> CrawlConfig:
    values: dict[str, Any] = {"roots": (ROOT,), "output": "/tmp/x.nitpicker"}
    values.update(overrides)
    return CrawlConfig(**values)


def test_defaults() -> None:
    config = make()
    assert config.roots == (ROOT,)
    assert config.recursive and config.fetch_external and config.image
    assert config.parallels == 10 and config.interval == 0 and config.retry == 3
    assert config.max_pages is None
    assert config.exclude_urls == DEFAULT_EXCLUDED_URLS
    assert config.user_agent.startswith("Nitpicker/")
    assert config.follows_links
    assert config.base_url == ROOT
    assert config.name == "x"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"roots": ()}, "no URL to crawl: give a URL, --list or --list-file"),
        (
            {"roots": ("not a url",)},
            'Invalid URL: "not a url". Please provide a valid URL (e.g., https://example.com)',
        ),
        ({"roots": (ROOT, "http://[::1")}, 'Invalid URL: "http://[::1"'),
        ({"roots": ("mailto:a@example.com",)}, 'Invalid URL: "mailto:a@example.com"'),
        (
            {"roots": (ROOT, "http://example.com/blog/"), "single": True},
            "--single cannot be combined with multiple positional URLs",
        ),
        ({"parallels": 0}, "--parallels must be at least 1, got 0"),
        ({"parallels": -3}, "--parallels must be at least 1, got -3"),
        ({"interval": -1}, "--interval must not be negative, got -1"),
        ({"retry": -1}, "--retry must not be negative, got -1"),
        ({"max_pages": 0}, "--max-pages must be at least 1, got 0"),
        ({"parallels": 1001}, "--parallels must be at most 1000, got 1001"),
        ({"interval": 3_600_001}, "--interval must be at most 3600000, got 3600001"),
        ({"interval": 2**64}, f"--interval must be at most 3600000, got {2**64}"),
        ({"retry": 2**64}, f"--retry must be at most {2**63 - 1}, got {2**64}"),
        ({"max_pages": 2**64}, f"--max-pages must be at most {2**63 - 1}, got {2**64}"),
        ({"dedupe_cap": 2**64}, f"--dedupe-cap must be at most {2**63 - 1}, got {2**64}"),
        ({"dedupe_age_window": 0}, "--dedupe-age-window must be at least 1, got 0"),
        ({"max_excluded_depth": -1}, "--max-excluded-depth must not be negative, got -1"),
        ({"image_file_size_threshold": -1},
         "--image-file-size-threshold must not be negative, got -1"),
        ({"image_file_size_threshold": 2**64},
         f"--image-file-size-threshold must be at most {2**63 - 1}, got {2**64}"),
        ({"dedupe_map_cap": 2**64}, f"--dedupe-map-cap must be at most {2**63 - 1}, got {2**64}"),
        ({"retry": 10**50}, f"--retry must be at most {2**63 - 1}, got 100000000000… (51 digits)"),
        ({"max_duration": float("nan")},
         "--max-duration must be a number above 0 and at most 315360000, got nan"),
        ({"max_duration": float("inf")}, "--max-duration must be a number above 0"),
        ({"max_duration": 0.0}, "--max-duration must be a number above 0"),
        ({"max_duration": 1e300}, "--max-duration must be a number above 0"),
        ({"max_archive_mb": float("nan")},
         "--max-archive-mb must be a number above 0 and at most 1000000000, got nan"),
        ({"max_archive_mb": -1.0}, "--max-archive-mb must be a number above 0"),
        ({"max_archive_mb": 0.0}, "--max-archive-mb must be a number above 0"),
        (
            {"exclude_keywords": ("/[/",)},
            "--exclude-keyword: invalid regex in exclude keyword '/[/'",
        ),
        ({"exclude_keywords": ("ok", "/x/z")}, "--exclude-keyword: unsupported regex flag(s) 'z'"),
        ({"output": ""}, "no output archive path"),
    ],
)
def test_validation_errors(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        make(**overrides)


@pytest.mark.parametrize(
    "overrides",
    [
        {"parallels": 1},
        {"interval": 0, "retry": 0},
        {"max_pages": 1},
        {"parallels": 1000, "interval": 3_600_000, "retry": 2**63 - 1, "max_pages": 2**63 - 1},
        {"dedupe_cap": 2**63 - 1, "dedupe_age_window": 2**63 - 1, "dedupe_map_cap": 2**63 - 1},
        {"max_duration": 0.001, "max_archive_mb": 0.001},
        {"max_duration": 315_360_000.0, "max_archive_mb": 1e9},
        {"exclude_keywords": ("a.b", "/draft/gim")},
        {"max_excluded_depth": 0, "image_file_size_threshold": 0},
        {"max_excluded_depth": 2**63 - 1, "image_file_size_threshold": 2**63 - 1},
        # --single with several URLs is allowed in list mode (a warning in the CLI)
        {"roots": (ROOT, "http://example.com/a"), "single": True, "list_mode": True},
    ],
)
def test_valid_edges(overrides: dict[str, Any]) -> None:
    make(**overrides)


def test_roots_are_normalised_and_deduplicated_in_order() -> None:
    config = make(
        roots=("http://Example.com/b?z=1&a=2#x", "http://example.com:80/", "http://example.com/")
    )
    assert config.roots == ("http://example.com/b?a=2&z=1", "http://example.com/")
    assert config.base_url == "http://example.com/b?a=2&z=1"


def test_roots_respect_disable_queries() -> None:
    assert make(roots=("http://example.com/a?x=1",), disable_queries=True).roots == (
        "http://example.com/a",
    )


@pytest.mark.parametrize(
    ("overrides", "follows"),
    [
        ({}, True),
        ({"single": True}, False),
        ({"recursive": False}, False),
        ({"list_mode": True}, False),
    ],
)
def test_follows_links(overrides: dict[str, Any], follows: bool) -> None:
    assert make(**overrides).follows_links is follows


def test_validate_url() -> None:
    assert validate_url("HTTP://Example.com") == "http://example.com/"
    with pytest.raises(ConfigError, match='Invalid URL: "ftp://example.com/"'):
        validate_url("ftp://example.com/")


def test_validate_url_keys_a_root_as_scrapy_requests_it() -> None:
    assert validate_url("http://example.com/[root]/?f[t]=x") == (
        "http://example.com/%5Broot%5D/?f%5Bt%5D=x")


@pytest.mark.parametrize("url", ["http://exa mple.com/", "http://exa<mple.com/", 'http://a"b.com/'])
def test_validate_url_refuses_a_host_that_cannot_be_one(url: str) -> None:
    with pytest.raises(ConfigError, match=f'Invalid URL: "{re.escape(url)}"'):
        validate_url(url)


def test_validate_url_applies_the_overlong_url_guard() -> None:
    longest = "http://example.com/" + "x" * (MAX_URL_LENGTH - len("http://example.com/"))
    assert validate_url(longest) == longest
    with pytest.raises(ConfigError, match=rf"URL too long \({MAX_URL_LENGTH + 1} characters, at most"):
        validate_url(longest + "y")
    # measured on the key: three characters for each encoded one
    with pytest.raises(ConfigError, match="URL too long"):
        validate_url("http://example.com/" + "[" * (MAX_URL_LENGTH // 3))


# -- from_spider_args -------------------------------------------------------------------------


def spider(tmp_path: Path, **args: str) -> CrawlConfig:
    args.setdefault("output", str(tmp_path / "out"))
    return config_from_spider_args(args)


def test_spider_args_roots_and_output(tmp_path: Path) -> None:
    config = spider(tmp_path, roots="http://example.com/, http://example.com/blog/")
    assert config.roots == ("http://example.com/", "http://example.com/blog/")
    assert config.output == str(tmp_path / "out.nitpicker")


@pytest.mark.parametrize(
    ("raw", "value"),
    [("true", True), ("false", False), ("1", True), ("0", False), ("TRUE", True), ("False", False),
     ("yes", True), ("off", False)],
)
def test_spider_args_booleans(tmp_path: Path, raw: str, value: bool) -> None:
    config = spider(tmp_path, roots=ROOT, ignore_robots=raw, fetch_external=raw)
    assert config.ignore_robots is value
    assert config.fetch_external is value


def test_spider_args_bad_boolean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="argument image: expected true or false, got 'maybe'"):
        spider(tmp_path, roots=ROOT, image="maybe")


def test_spider_args_ints(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=ROOT, parallels="4", interval="250", retry="0", max_pages="7")
    assert (config.parallels, config.interval, config.retry, config.max_pages) == (4, 250, 0, 7)


def test_spider_args_the_originals_remaining_flags(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=ROOT, max_excluded_depth="3",
                    **{"image-file-size-threshold": "204800"})
    assert (config.max_excluded_depth, config.image_file_size_threshold) == (3, 204800)
    stored = json.loads(config.to_json())
    assert (stored["max_excluded_depth"], stored["image_file_size_threshold"]) == (3, 204800)
    assert spider(tmp_path, roots=ROOT).max_excluded_depth == 10  # the original's default
    with pytest.raises(ConfigError, match="argument image_file_size_threshold: expected a "
                                          "number, got '2MB'"):
        spider(tmp_path, roots=ROOT, image_file_size_threshold="2MB")


def test_spider_args_bad_int(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="argument parallels: expected a number, got 'many'"):
        spider(tmp_path, roots=ROOT, parallels="many")


def test_spider_args_validation_still_applies(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--parallels must be at least 1, got 0"):
        spider(tmp_path, roots=ROOT, parallels="0")


def test_spider_args_dashed_names(tmp_path: Path) -> None:
    config = spider(tmp_path, **{"roots": ROOT, "max-pages": "3", "disable-queries": "true"})
    assert config.max_pages == 3
    assert config.disable_queries is True


def test_spider_args_excludes_keep_braces(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=ROOT, excludes="/blog/*.{html,php},/admin/*")
    assert config.excludes == ("/blog/*.{html,php}", "/admin/*")


def test_spider_args_exclude_keywords_split_on_commas(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=ROOT, exclude_keywords="draft, /secret/i")
    assert config.exclude_keywords == ("draft", "/secret/i")


def test_spider_args_exclude_urls_extend_the_defaults(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=ROOT, exclude_urls="https://a.example/x,https://b.example")
    extra = ("https://a.example/x", "https://b.example")
    assert config.exclude_urls == (*DEFAULT_EXCLUDED_URLS, *extra)


def test_spider_args_without_exclude_urls_keep_the_defaults(tmp_path: Path) -> None:
    assert spider(tmp_path, roots=ROOT).exclude_urls == DEFAULT_EXCLUDED_URLS


def test_spider_args_list_mode_is_not_recursive(tmp_path: Path) -> None:
    config = spider(tmp_path, roots=f"{ROOT},http://example.com/a", list_mode="true")
    assert config.list_mode and not config.recursive
    assert not config.follows_links


def test_spider_args_leave_out_scrapys_own(tmp_path: Path) -> None:
    """``name`` and Scrapyd's ``_job`` are Scrapy's arguments, not crawl options."""
    config = spider(tmp_path, roots=ROOT, name="site", _job="0123abcd")
    assert config.roots == (ROOT,)


@pytest.mark.parametrize(("raw", "message"), [
    ("nan", "--max-duration must be a number above 0 and at most 315360000, got nan"),
    ("inf", "--max-duration must be a number above 0 and at most 315360000, got inf"),
])
def test_spider_args_refuse_nan_and_infinity(tmp_path: Path, raw: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        spider(tmp_path, roots=ROOT, max_duration=raw)


def test_spider_args_unknown_argument(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown crawl argument 'depth'"):
        spider(tmp_path, roots=ROOT, depth="3")


@pytest.mark.parametrize("roots", [None, "", " , "])
def test_spider_args_missing_roots(tmp_path: Path, roots: str | None) -> None:
    args = {} if roots is None else {"roots": roots}
    with pytest.raises(ConfigError, match=re.escape("missing crawl argument: -a roots=URL")):
        spider(tmp_path, **args)


def test_spider_args_default_output_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = config_from_spider_args({"roots": "http://example.com/"})
    path = Path(config.output)
    assert path.parent == tmp_path
    assert re.fullmatch(r"example\.com-\d{17}\.nitpicker", path.name)


# -- output naming ----------------------------------------------------------------------------


def test_resolve_relative_output_against_cwd(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    expected = str(tmp_path / "reports" / "run.nitpicker")
    assert resolve_output_path("reports/run", ROOT, cwd=tmp_path) == expected


def test_resolve_relative_output_against_process_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_output_path("custom-name", ROOT) == str(tmp_path / "custom-name.nitpicker")


@pytest.mark.parametrize(
    ("output", "name"),
    [
        ("my-report", "my-report.nitpicker"),
        ("my-report.nitpicker", "my-report.nitpicker"),
        ("site.v2", "site.v2.nitpicker"),
        ("archive.db", "archive.db.nitpicker"),
    ],
)
def test_resolve_appends_suffix(tmp_path: Path, output: str, name: str) -> None:
    assert resolve_output_path(output, ROOT, cwd=tmp_path) == str(tmp_path / name)


def test_resolve_absolute_output(tmp_path: Path) -> None:
    target = tmp_path / "abs"
    resolved = resolve_output_path(str(target), ROOT, cwd=Path("/nonexistent"))
    assert resolved == str(tmp_path / "abs.nitpicker")


def test_resolve_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError) as info:
        resolve_output_path("nope/out", ROOT, cwd=tmp_path)
    assert str(info.value) == (
        f"Output directory does not exist: {missing}. "
        "Please create the directory before running the command."
    )


@pytest.mark.parametrize("output", ["reports/", "reports", "./reports/", "reports//"])
def test_resolve_a_directory_gets_the_default_name_inside(tmp_path: Path, output: str) -> None:
    """A path ending in ``/``, or naming an existing directory, is where the default name
    goes (it was ``reports.nitpicker`` beside the directory)."""
    (tmp_path / "reports").mkdir()
    path = Path(resolve_output_path(output, "https://www.example.com/", cwd=tmp_path))
    assert path.parent == tmp_path / "reports"
    assert re.fullmatch(r"www\.example\.com-\d{17}\.nitpicker", path.name)


def test_resolve_a_missing_directory_with_a_slash(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=re.escape(
            f"Output directory does not exist: {tmp_path / 'reports'}. Please create")):
        resolve_output_path("reports/", ROOT, cwd=tmp_path)


def test_resolve_without_output_uses_default_name(tmp_path: Path) -> None:
    path = Path(resolve_output_path("", "https://www.example.com/blog/", cwd=tmp_path))
    assert path.parent == tmp_path
    assert re.fullmatch(r"www\.example\.com-\d{17}\.nitpicker", path.name)


@pytest.mark.parametrize(
    ("url", "now", "name"),
    [
        (
            "https://example.com/",
            datetime(2025, 1, 1, 12, 0, 0, 0),
            "example.com-20250101120000000.nitpicker",
        ),
        (
            "http://Example.com:8080/a",
            datetime(2024, 3, 7, 9, 5, 3, 42_999),
            "example.com-20240307090503042.nitpicker",
        ),
        (
            "http://localhost:3000/",
            datetime(2025, 12, 31, 23, 59, 59, 999_999),
            "localhost-20251231235959999.nitpicker",
        ),
    ],
)
def test_default_output_path(tmp_path: Path, url: str, now: datetime, name: str) -> None:
    assert default_output_path(url, cwd=tmp_path, now=now) == tmp_path / name


# -- JSON round trip --------------------------------------------------------------------------


def test_json_round_trip(tmp_path: Path) -> None:
    config = make(
        roots=(ROOT, "http://example.com/blog/"),
        excludes=("/blog/*.{html,php}",),
        exclude_keywords=("/draft/i",),
        exclude_urls=(*DEFAULT_EXCLUDED_URLS, "https://a.example"),
        parallels=3,
        interval=100,
        retry=1,
        max_pages=50,
        user_agent="Test/1.0 (日本語)",
        output=str(tmp_path / "a.nitpicker"),
        image=False,
    )
    text = config.to_json()
    data = json.loads(text)
    assert data["roots"] == [ROOT, "http://example.com/blog/"]
    assert data["max_pages"] == 50
    assert "日本語" in text  # not ASCII-escaped
    assert CrawlConfig.from_json(text) == config


def test_from_json_overrides(tmp_path: Path) -> None:
    config = make(output=str(tmp_path / "a.nitpicker"), parallels=3)
    again = CrawlConfig.from_json(config.to_json(), resume=True, parallels=5)
    assert again.resume is True and again.parallels == 5
    assert again.roots == config.roots and again.output == config.output
    assert config.resume is False and config.parallels == 3


def test_from_json_ignores_unknown_keys_and_validates() -> None:
    data = json.loads(make().to_json())
    data["removed_option"] = 1
    assert CrawlConfig.from_json(json.dumps(data)) == make()
    with pytest.raises(ConfigError, match="--parallels must be at least 1"):
        CrawlConfig.from_json(json.dumps(data), parallels=0)


def test_private_network_guard_needs_no_render() -> None:
    with pytest.raises(ConfigError, match="--deny-private-networks needs --no-render"):
        CrawlConfig(roots=("http://example.com/",), output="/tmp/x.nitpicker",
                    deny_private_networks=True)
    config = CrawlConfig(roots=("http://example.com/",), output="/tmp/x.nitpicker",
                         deny_private_networks=True, render=False)
    assert config.deny_private_networks


def test_the_trap_cap_is_on_by_default_and_0_turns_it_off() -> None:
    def cap(**options: int) -> int | None:
        return CrawlConfig(roots=("http://example.com/",), output="/tmp/x.nitpicker",
                           **options).dedupe_cap

    assert cap() == 100
    assert cap(dedupe_cap=0) is None
    assert cap(dedupe_cap=0, dedupe_age_window=1) is None  # off: no window to check
    assert cap(dedupe_cap=7) == 7


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dedupe_cap": -5}, "--dedupe-cap must not be negative, got -5"),
        ({"dedupe_cap": 100, "dedupe_age_window": 50}, "--dedupe-age-window (50) must not be smaller"),
        ({"dedupe_cap": 100, "dedupe_map_cap": 10}, "--dedupe-map-cap (10) must not be smaller"),
    ],
)
def test_trap_cap_options_are_checked(options: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        CrawlConfig(roots=("http://example.com/",), output="/tmp/x.nitpicker", **options)
    assert message in str(raised.value)
