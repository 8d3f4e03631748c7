"""CrawlConfig: every crawl option, parsed once and validated.

The CLI builds a ``CrawlConfig`` from its flags; ``scrapy crawl site -a key=value`` and a
Scrapyd job build one from string arguments (:mod:`nitpicker.crawl.spider_args`); both go
through :mod:`nitpicker.crawl.config_builder` (new crawl, resume, append). The spider keeps this one
frozen object in its crawl session and projects the options components use into settings.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker import __version__
from nitpicker.errors import UserError
from nitpicker.messages import shown_integer
from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS, keyword_pattern
from nitpicker.policy.extract.custom import ExtractError, compile_rules
from nitpicker.policy.request_headers import (
    Credentials,
    HeaderError,
    credentials_of,
    parse_header,
)
from nitpicker.policy.roots import InvalidRoot, root_url
from nitpicker.policy.urls import parse_url
from nitpicker.policy.userinfo import typed_url

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "DEFAULT_DEDUPE_CAP",
    "SECRET_OPTIONS",
    "ConfigError",
    "CrawlConfig",
    "default_output_path",
    "given_credentials",
    "resolve_output_path",
    "stored_secret_names",
    "validate_url",
]

ARCHIVE_SUFFIX = ".nitpicker"


class ConfigError(UserError, ValueError):
    """A crawl option is invalid or contradicts another; the message names them."""


INTEGER_MAX = 2**63 - 1
"""The largest integer SQLite holds: the bound of every count with no smaller natural one."""

INTEGER_OPTIONS: dict[str, tuple[int, int]] = {
    "parallels": (1, 1000),
    "interval": (0, 3_600_000),
    "retry": (0, INTEGER_MAX),
    "max_pages": (1, INTEGER_MAX),
    "dedupe_cap": (0, INTEGER_MAX),
    "dedupe_age_window": (1, INTEGER_MAX),
    "dedupe_map_cap": (1, INTEGER_MAX),
    "max_excluded_depth": (0, INTEGER_MAX),
    "image_file_size_threshold": (0, INTEGER_MAX),
}
"""The accepted range of each integer option: ``--parallels`` up to 1000 concurrent requests,
``--interval`` up to one hour (in ms); the counts up to ``INTEGER_MAX``."""

DEFAULT_DEDUPE_CAP = 100
"""The trap cap's threshold when ``--dedupe-cap`` is not given (the cap is on by default;
``--dedupe-cap 0`` turns it off)."""

MAX_DURATION = 10 * 365 * 24 * 3600.0
"""The longest ``--max-duration``: ten years, in seconds."""

MAX_ARCHIVE_MB = 1e9
"""The largest ``--max-archive-mb``: a petabyte (SQLite's own limit is lower)."""


def default_user_agent() -> str:
    return f"Nitpicker/{__version__}"


@dataclass(frozen=True)
class CrawlConfig:
    """The options of one crawl (SPEC §2.1)."""

    roots: tuple[str, ...] = ()
    list_mode: bool = False
    single: bool = False
    recursive: bool = True
    fetch_external: bool = True
    image: bool = True
    render: bool = True
    """Render in-scope HTML pages in headless Chromium (``--no-render``: plain HTTP)."""
    excludes: tuple[str, ...] = ()
    exclude_keywords: tuple[str, ...] = ()
    exclude_urls: tuple[str, ...] = DEFAULT_EXCLUDED_URLS
    disable_queries: bool = False
    user_agent: str = field(default_factory=default_user_agent)
    ignore_robots: bool = False
    parallels: int = 10
    interval: int = 0
    """Minimum delay between requests, in milliseconds."""
    retry: int = 3
    max_pages: int | None = None
    max_duration: float | None = None
    """Seconds after which the run stops cleanly (resumable), ``--max-duration``."""
    max_archive_mb: float | None = None
    """Storage budget: the run fails with ``disk_full`` when the archive would grow past it."""
    dedupe_cap: int | None = DEFAULT_DEDUPE_CAP
    """Trap cap (seed 003): after this many same-signature pages, their links are not queued.
    ``None`` (``--dedupe-cap 0``, and the archives crawled before the cap was on by default):
    off."""
    dedupe_age_window: int = 5000
    """Links seen after which a signature that never reached the cap is forgotten."""
    dedupe_map_cap: int = 100_000
    """Most signatures the trap cap holds in memory (least recently seen go first)."""
    sitemap: bool = True
    """Seed the frontier from robots.txt ``Sitemap:`` lines and ``/sitemap.xml``."""
    predict_pagination: bool = True
    host_breaker: bool = True
    """Give up on a host after consecutive connection failures (``--no-host-breaker``: fetch
    every URL, ``NITPICKER_HOST_BREAKER_ENABLED``)."""
    """Queue the pages predicted ahead of pager links (SPEC §3.9), ``--no-predict-pagination``."""
    deny_private_networks: bool = False
    """Refuse loopback, private, link-local and metadata addresses (SSRF guard)."""
    inventory: str = ""
    """``--inventory FILE``: the file of URLs known from elsewhere (absolute path), or ``""``."""
    inventory_urls: tuple[str, ...] = field(default=(), repr=False)
    """The inventory's URLs, seeded when the archive is created; not stored in the archive's
    config (the pages carry ``in_inventory``)."""
    inventory_label: str = ""
    """``--inventory-label TEXT``: the name of the inventory's audit record
    (``inventory_runs.label``)."""
    inventory_lines: int = field(default=0, repr=False)
    """The inventory file's URL lines, for its audit record; not stored in the config."""
    inventory_sha256: str = field(default="", repr=False)
    """The sha256 of the inventory file as read, for its audit record; not stored."""
    output: str = ""
    """Absolute path of the archive file."""
    resume: bool = False
    append: tuple[str, ...] = ()
    """Roots added to an existing archive by ``--append`` (already part of ``roots``)."""
    retry_failed: bool = False
    """``--retry-failed``: a resume that first queues the archive's failed URLs again."""
    recrawl: tuple[str, ...] = ()
    """``nitpicker recrawl``: a resume that first queues these URLs of the archive again."""
    strict: bool = False
    max_excluded_depth: int = 10
    """The original's ``--max-excluded-depth`` (``maxExcludedDepth``): accepted and stored so
    its users' scripts run, never enforced — the original never enforced it (SPEC §2.1, §12
    Q4), and no depth limit applies to a crawl."""
    image_file_size_threshold: int | None = None
    """Bytes above which an image file is oversized (``--image-file-size-threshold``):
    ``nitpicker query FILE images --oversized`` lists the images that exceed it."""
    extract: tuple[str, ...] = ()
    """``--extract NAME=css:…|xpath:…|regex:…`` (and ``nitpicker.toml``'s ``[crawl.extract]``):
    the values read from every in-scope HTML page (:mod:`nitpicker.policy.extract.custom`)."""
    headers: tuple[str, ...] = field(default=(), repr=False)
    """``--header 'Name: value'``: sent with in-scope requests only. The archive keeps the
    names (:meth:`to_json`), never the values."""
    credentials: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)
    """``(root, user, password)`` of each root written with credentials (taken from the
    roots, which are stored without them). The archive keeps the user names only."""

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError("no URL to crawl: give a URL, --list or --list-file")
        normalised = [validate_url(root, disable_queries=self.disable_queries) for root in self.roots]
        credentials = _root_credentials(self.roots, normalised, self.credentials)
        object.__setattr__(self, "credentials", credentials)
        object.__setattr__(self, "roots", tuple(dict.fromkeys(normalised)))
        object.__setattr__(self, "headers", tuple(self.headers or ()))
        try:
            for header in self.headers:
                parse_header(header)
        except HeaderError as exc:
            raise ConfigError(str(exc)) from exc
        if self.single and len(self.roots) > 1 and not self.list_mode:
            raise ConfigError("--single cannot be combined with multiple positional URLs")
        for name, (low, high) in INTEGER_OPTIONS.items():
            _check_integer(name, getattr(self, name), low, high)
        if self.dedupe_cap == 0:
            object.__setattr__(self, "dedupe_cap", None)  # --dedupe-cap 0: off
        for name, most in (("max_duration", MAX_DURATION), ("max_archive_mb", MAX_ARCHIVE_MB)):
            _check_positive(name, getattr(self, name), most)
        if self.dedupe_cap is not None:
            if self.dedupe_age_window < self.dedupe_cap:
                raise ConfigError(
                    f"--dedupe-age-window ({self.dedupe_age_window}) must not be smaller than "
                    f"--dedupe-cap ({self.dedupe_cap})"
                )
            if self.dedupe_map_cap < self.dedupe_cap:
                raise ConfigError(
                    f"--dedupe-map-cap ({self.dedupe_map_cap}) must not be smaller than "
                    f"--dedupe-cap ({self.dedupe_cap})"
                )
        if self.deny_private_networks and self.render:
            raise ConfigError(
                "--deny-private-networks needs --no-render: the browser resolves and fetches "
                "on its own, outside the guard"
            )
        for keyword in self.exclude_keywords:
            try:
                keyword_pattern(keyword)
            except ValueError as exc:
                raise ConfigError(f"--exclude-keyword: {exc}") from exc
        try:
            compile_rules(tuple(self.extract))
        except ExtractError as exc:
            raise ConfigError(f"--extract {exc}") from exc
        if self.inventory_label and not self.inventory:
            raise ConfigError("--inventory-label names an --inventory: give the file too")
        if self.inventory and not self.follows_links:
            raise ConfigError("--inventory needs a crawl that follows links: not with --single, "
                              "--no-recursive, --list or --list-file")
        if not self.output:
            raise ConfigError("no output archive path")

    @property
    def follows_links(self) -> bool:
        """Whether in-scope links found on pages are crawled fully."""
        return self.recursive and not self.single and not self.list_mode

    @property
    def base_url(self) -> str:
        return self.roots[0]

    @property
    def name(self) -> str:
        """The archive's name: its file name without ``.nitpicker``."""
        return Path(self.output).name.removesuffix(ARCHIVE_SUFFIX)

    @property
    def request_headers(self) -> tuple[tuple[str, str], ...]:
        """The ``--header`` pairs, ``(name, value)``."""
        return tuple(parse_header(header) for header in self.headers)

    @property
    def root_credentials(self) -> dict[str, Credentials]:
        """Root URL → its credentials."""
        return {root: Credentials(user, password) for root, user, password in self.credentials}

    def to_json(self) -> str:
        """The options as the archive stores them: header names only, the users of the
        credentials only (no value, no password)."""
        data = dataclasses.asdict(self)
        data["headers"] = [name for name, _ in self.request_headers]
        data["credentials"] = [[root, user] for root, user, _ in self.credentials]
        for read_from_the_file in _INVENTORY_READ:
            del data[read_from_the_file]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, **overrides: Any) -> CrawlConfig:
        """The config stored by :meth:`to_json`, with ``overrides``. The secrets were not
        stored: header values and passwords come from ``overrides`` or are absent."""
        data = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)} - set(SECRET_OPTIONS)
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known
        }
        values.update(overrides)
        return cls(**values)


_INVENTORY_READ = ("inventory_urls", "inventory_lines", "inventory_sha256")
"""What is read from ``--inventory FILE`` when the config is built, never stored."""

SECRET_OPTIONS = ("headers", "credentials")
"""Options whose values the archive does not keep (:meth:`CrawlConfig.to_json`)."""

def stored_secret_names(config_json: str) -> tuple[list[str], dict[str, str]]:
    """What an archive's stored config says of its secrets: the ``--header`` names, and
    root → user of the roots crawled with credentials."""
    data = json.loads(config_json)
    names = [str(name) for name in data.get("headers") or ()]
    users = {str(pair[0]): str(pair[1]) for pair in data.get("credentials") or ()}
    return names, users


def given_credentials(urls: Iterable[str], *,
                      disable_queries: bool = False) -> tuple[tuple[str, str, str], ...]:
    """``(root, user, password)`` of the URLs written with credentials (roots normalised)."""
    raw = tuple(urls)
    normalised = [validate_url(url, disable_queries=disable_queries) for url in raw]
    return _root_credentials(raw, normalised, ())


def _root_credentials(raw_roots: tuple[str, ...], normalised: list[str],
                      given: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """``(root, user, password)`` of the roots written with credentials, and of ``given``;
    ``ConfigError`` when one root is given two different ones."""
    found: dict[str, tuple[str, str]] = {}
    pairs: list[tuple[str, Credentials]] = [
        (root, Credentials(user, password)) for root, user, password in given
    ]
    for raw, root in zip(raw_roots, normalised, strict=True):
        parsed = parse_url(typed_url(raw))
        creds = credentials_of(parsed) if parsed is not None else None
        if creds is not None:
            pairs.append((root, creds))
    for root, creds in pairs:
        pair = (creds.username, creds.password)
        if found.setdefault(root, pair) != pair:
            raise ConfigError(f"two different credentials for one root: {root} (users "
                              f"{found[root][0]!r} and {creds.username!r})")
    return tuple((root, user, password) for root, (user, password) in found.items())


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check_integer(name: str, value: int | None, low: int, high: int) -> None:
    """``ConfigError`` naming the option, its bound and ``value`` unless ``low <= value <= high``
    (``None``: the option is off)."""
    if value is None or low <= value <= high:
        return
    if value > high:
        bound = f"must be at most {high}"
    else:
        bound = "must not be negative" if low == 0 else f"must be at least {low}"
    raise ConfigError(f"{_flag(name)} {bound}, got {shown_integer(value)}")


def _check_positive(name: str, value: float | None, high: float) -> None:
    """``ConfigError`` unless ``value`` (seconds, megabytes) is a number above 0, at most
    ``high``: NaN and infinity are refused, not read as "no limit"."""
    if value is None or (math.isfinite(value) and 0 < value <= high):
        return
    raise ConfigError(f"{_flag(name)} must be a number above 0 and at most {high:.0f}, got {value}")


def validate_url(url: str, *, disable_queries: bool = False) -> str:
    """The normalised form of an http(s) URL; ``ConfigError`` naming it otherwise
    (:func:`~nitpicker.policy.roots.root_url`: a host that cannot be one, a URL longer than
    the archive keeps, credentials typed raw)."""
    try:
        return root_url(url, disable_queries=disable_queries)
    except InvalidRoot as exc:
        raise ConfigError(str(exc)) from None


def default_output_path(first_url: str, cwd: Path | None = None, now: datetime | None = None) -> Path:
    """``<cwd>/<hostname>-<YYYYMMDDHHmmssSSS>.nitpicker`` (local time), SPEC §3.18."""
    parsed = parse_url(first_url)
    host = parsed.hostname if parsed else "archive"
    stamp = (now or datetime.now()).strftime("%Y%m%d%H%M%S%f")[:-3]
    return (cwd or Path.cwd()) / f"{host}-{stamp}{ARCHIVE_SUFFIX}"


def resolve_output_path(output: str, first_url: str, cwd: Path | None = None) -> str:
    """The archive path for ``--output`` (``.nitpicker`` appended) or the default name.

    An ``output`` ending in ``/`` or naming an existing directory is where the default name
    goes: ``-o archives/`` writes ``archives/<host>-<timestamp>.nitpicker``.
    """
    if not output:
        return str(default_output_path(first_url, cwd))
    path = Path(output).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    if output.endswith(("/", os.sep)) or path.is_dir():
        if not path.is_dir():
            raise ConfigError(
                f"Output directory does not exist: {path}. "
                "Please create the directory before running the command."
            )
        return str(default_output_path(first_url, path))
    if path.suffix != ARCHIVE_SUFFIX:
        path = path.with_name(path.name + ARCHIVE_SUFFIX)
    if not path.parent.is_dir():
        raise ConfigError(
            f"Output directory does not exist: {path.parent}. "
            "Please create the directory before running the command."
        )
    return str(path)
