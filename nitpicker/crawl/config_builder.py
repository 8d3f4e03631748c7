"""One way to a CrawlConfig: from the options a user gave, for a new crawl, a resume or an append.

Every entry point hands what the user typed to this module as :class:`GivenOptions` (the
values in ``CrawlConfig`` field names, which of them were given, and how the user wrote each):
``nitpicker crawl`` from its flags, ``scrapy crawl site -a key=value`` and Scrapyd jobs from
their arguments (:func:`~nitpicker.crawl.spider_args.config_from_spider_args`). Here, and only here:

- a new crawl's options become a config (:func:`new_config`): excludes split, the built-in
  excluded URLs added once, the default User-Agent, the archive path resolved; the roots are
  validated by ``CrawlConfig`` itself;
- a resume (:func:`resume_config`), a retry of failed URLs (:func:`retry_failed_config`), a
  recrawl of some of its URLs (:func:`recrawl_config`) and an append (:func:`append_config`)
  start from the options stored in the archive. The options of :data:`RUNTIME_OPTIONS` (how the crawl runs)
  are this run's. Any other option given must be what the archive holds already — then it is
  honoured as is — or the run is refused with one line naming it: an option is never dropped
  silently;
- ``crawl --like OLD`` (:func:`like_config`) is a new crawl whose options are OLD's, each
  option given replacing OLD's (the URLs given replace its roots).

A recrawl and ``--like`` refuse an archive whose crawl cannot be reproduced
(:mod:`nitpicker.crawl.reproducible`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker.crawl.config import (
    SECRET_OPTIONS,
    ConfigError,
    CrawlConfig,
    default_user_agent,
    given_credentials,
    resolve_output_path,
    stored_secret_names,
    validate_url,
)
from nitpicker.crawl.extract_config import configured_rules, merged_rules
from nitpicker.policy.excludes import DEFAULT_EXCLUDED_URLS, split_globs
from nitpicker.policy.request_headers import HeaderError, parse_header, shown_url

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["RUNTIME_OPTIONS", "GivenOptions", "append_config", "like_config", "new_config",
           "recrawl_config", "resume_config", "retry_failed_config"]

logger = logging.getLogger(__name__)

RUNTIME_OPTIONS = ("parallels", "interval", "retry", "max_pages", "max_duration",
                   "max_archive_mb", "strict")
"""How a crawl runs, not what it crawls: a resume or an append takes this run's values (the
defaults when not given), whatever the archive's crawl had."""

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(CrawlConfig)
             if f.default is not dataclasses.MISSING}


@dataclass(frozen=True)
class GivenOptions:
    """The crawl options of one command line, before they become a :class:`CrawlConfig`.

    ``values`` are in ``CrawlConfig`` field names and as typed: ``excludes`` globs not split
    yet, ``exclude_urls`` without the built-in ones, ``user_agent`` ``None`` for the default,
    ``output`` as written. ``given`` are the fields the user set (the others hold defaults);
    ``names`` say how the user wrote each (``--dedupe-cap``, ``dedupe_cap``), for messages.
    """

    values: Mapping[str, Any]
    given: frozenset[str] = frozenset()
    names: Mapping[str, str] = field(default_factory=dict)

    def name(self, option: str) -> str:
        return self.names.get(option, option)

    def with_values(self, **values: Any) -> GivenOptions:
        """These options with ``values`` set (and counted as given)."""
        return dataclasses.replace(self, values={**self.values, **values},
                                   given=self.given | values.keys())


def config_value(option: str, value: Any) -> Any:
    """What an option as given is in a :class:`CrawlConfig`."""
    if option == "excludes":
        return tuple(glob for raw in value or () for glob in split_globs(raw))
    if option == "exclude_urls":
        return DEFAULT_EXCLUDED_URLS + tuple(value or ())
    if option == "user_agent":
        return value or default_user_agent()
    if option == "dedupe_cap" and value == 0:
        return None  # --dedupe-cap 0: off
    if option == "inventory":
        return str(Path(value).expanduser().resolve()) if value else ""
    if isinstance(value, list):
        return tuple(value)
    return value


def _with_header_file(options: GivenOptions) -> GivenOptions:
    """``--header-file FILE``'s headers added to ``--header``'s (given, then)."""
    path = options.values.get("header_file")
    values = {key: value for key, value in options.values.items() if key != "header_file"}
    given = options.given - {"header_file"}
    if path:
        from nitpicker.crawl.header_file import read_header_file

        values["headers"] = (*(values.get("headers") or ()),
                             *read_header_file(Path(path).expanduser()))
        given |= {"headers"}
    return dataclasses.replace(options, values=values, given=given)


def new_config(options: GivenOptions, *, cwd: Path | None = None,
               warn: Callable[[str], None] = logger.warning) -> CrawlConfig:
    """The config of a new crawl; ``warn`` is told about an option that is ignored."""
    options = _with_header_file(options)
    values = {key: config_value(key, value) for key, value in options.values.items()}
    roots = values.get("roots") or ()
    list_mode = bool(values.get("list_mode"))
    single = bool(values.get("single"))
    if list_mode and single:
        warn(f"{options.name('single')} is ignored when {options.name('list_mode')} is specified.")
        values["single"] = single = False
    values["recursive"] = values.get("recursive", True) and not single and not list_mode
    values["output"] = resolve_output_path(values.get("output") or "", roots[0] if roots else "",
                                           cwd)
    values["extract"] = merged_rules(configured_rules(cwd or Path.cwd()),
                                     values.get("extract") or ())
    if values.get("inventory"):
        from nitpicker.crawl.inventory import read_inventory_file

        inventory = read_inventory_file(Path(values["inventory"]),
                                        disable_queries=bool(values.get("disable_queries")))
        values["inventory_urls"] = inventory.urls
        values["inventory_lines"] = inventory.lines
        values["inventory_sha256"] = inventory.sha256
    return CrawlConfig(**values)


def resume_config(path: Path, options: GivenOptions) -> CrawlConfig:
    """The config of a resumed crawl: the archive's, with this run's runtime options."""
    from nitpicker.crawl.append import stored_crawl_info

    options = _with_header_file(options)
    info = stored_crawl_info(path)
    config = CrawlConfig.from_json(info.config_json, resume=True, output=str(path),
                                   **_runtime(options),
                                   **_secrets(info.config_json, options, options.name("resume"),
                                              options.values.get("roots") or ()))
    _refuse_changes(config, options, options.name("resume"), ("resume", "output"))
    return config


def retry_failed_config(path: Path, options: GivenOptions) -> CrawlConfig:
    """The config of ``--retry-failed``: a resume (the archive's options, this run's runtime
    options) that first queues the archive's failed URLs again."""
    from nitpicker.crawl.append import LIST_MODE_RETRY_REFUSAL, stored_crawl_info

    options = _with_header_file(options)
    info = stored_crawl_info(path)
    if info.from_list:  # its metadata-only links would come back as full pages
        raise ConfigError(LIST_MODE_RETRY_REFUSAL)
    config = CrawlConfig.from_json(info.config_json, resume=True, retry_failed=True,
                                   output=str(path), **_runtime(options),
                                   **_secrets(info.config_json, options,
                                              options.name("retry_failed"),
                                              options.values.get("roots") or ()))
    _refuse_changes(config, options, options.name("retry_failed"), ("retry_failed", "output"))
    return config


def recrawl_config(path: Path, urls: Sequence[str], options: GivenOptions) -> CrawlConfig:
    """The config of ``nitpicker recrawl``: a resume (the archive's options, this run's runtime
    options) that first queues ``urls`` again. A URL given with credentials gives them for the
    root it is under (the archive does not keep them)."""
    from nitpicker.crawl.recrawl import normalised_urls
    from nitpicker.crawl.reproducible import reproducible_settings, stored_settings

    options = _with_header_file(options)
    info = stored_settings(path)
    reproducible_settings(info, path, given=RUNTIME_OPTIONS)
    stored = CrawlConfig.from_json(info.config_json)
    wanted = normalised_urls(urls, disable_queries=stored.disable_queries)
    if not wanted:
        raise ConfigError("recrawl needs at least one URL of the archive (URL… or --list-file)")
    _, users = stored_secret_names(info.config_json)
    credentials = tuple(
        (root, user, password)
        for url, user, password in given_credentials(urls, disable_queries=stored.disable_queries)
        for root in users if url.startswith(root))
    return CrawlConfig.from_json(
        info.config_json, resume=True, recrawl=tuple(wanted), output=str(path),
        **_runtime(options),
        **_secrets(info.config_json, options, "recrawl", (), credentials=credentials))


def like_config(old: Path, options: GivenOptions, *,
                warn: Callable[[str], None] = logger.warning) -> CrawlConfig:
    """The config of ``crawl --like OLD``: a new crawl with OLD's roots and options, each
    option given replacing OLD's (``roots`` given: its roots and list mode). The header names
    and the roots crawled with credentials are OLD's unless given: their values must be."""
    from nitpicker.crawl.reproducible import (
        NOT_REPRODUCIBLE,
        reproducible_settings,
        stored_settings,
    )

    info = stored_settings(old)
    stored = reproducible_settings(info, old, given=options.given)
    values = _as_given(stored, info.version)
    values.update({name: options.values[name] for name in options.given})
    names, users = stored_secret_names(info.config_json)
    if names and not {"headers", "header_file"} & options.given:
        raise ConfigError(
            f"--like {old}: its crawl sent --header {', '.join(names)}, whose values are not "
            "stored: give the headers again (--header or --header-file)")
    inventory = values.get("inventory") if "inventory" not in options.given else None
    if inventory and not Path(inventory).is_file():
        raise ConfigError(NOT_REPRODUCIBLE.format(
            path=old, why=f"its --inventory file {inventory} is gone (give --inventory FILE)"))
    config = new_config(dataclasses.replace(options, values=values), warn=warn)
    given_with = {root for root, _, _ in config.credentials}
    for root, user in users.items():
        if root in config.roots and root not in given_with:
            example = shown_url(root.replace("://", f"://{user}:secret@", 1))
            raise ConfigError(
                f"--like {old}: its crawl sent credentials to {root} (user {user!r}), which "
                f"are not stored: give its roots again, that one with them ('{example}')")
    if inventory:
        read = _inventory_sha256(old, inventory)
        if read != config.inventory_sha256:
            why = ("its crawl's record of it is missing" if read is None
                   else "it changed since its crawl read it (another sha256)")
            raise ConfigError(NOT_REPRODUCIBLE.format(
                path=old, why=f"its --inventory file {inventory}: {why}; give --inventory FILE "
                              "to crawl with a file as it is now"))
    return config


_NOT_CARRIED = ("output", "resume", "append", "retry_failed", "recrawl", "headers",
                "credentials")
"""What ``--like`` does not take from OLD's settings: the run it was, and the secrets (their
names only are stored)."""


def _as_given(stored: dict[str, Any], version: str) -> dict[str, Any]:
    """OLD's stored options as a command line gives them (what :func:`new_config` takes)."""
    values = {name: value for name, value in stored.items() if name not in _NOT_CARRIED}
    values["exclude_urls"] = [url for url in stored.get("exclude_urls") or ()
                              if url not in DEFAULT_EXCLUDED_URLS]
    if stored.get("user_agent") == f"Nitpicker/{version}":
        values["user_agent"] = None  # its version's default: this version's default
    if stored.get("dedupe_cap") is None:
        values["dedupe_cap"] = 0  # off
    if stored.get("single") or stored.get("list_mode"):
        values["recursive"] = True  # off by --single or the list, not by --no-recursive
    return values


def _inventory_sha256(path: Path, inventory: str) -> str | None:
    """The sha256 of ``inventory`` as the crawl of the archive at ``path`` read it."""
    from nitpicker.query import open_archive
    from nitpicker.query.inventory_runs import list_inventory_runs

    conn = open_archive(path)
    try:
        records = list_inventory_runs(conn, limit=1000)["items"]
    finally:
        conn.close()
    return next((record["sha256"] for record in reversed(records)
                 if record["path"] == inventory), None)


def append_config(path: Path, new_urls: Sequence[str], options: GivenOptions) -> CrawlConfig:
    """The config of an append: the archive's options, roots old ∪ new, crawled fully, with
    this run's runtime options."""
    from nitpicker.crawl.append import LIST_MODE_REFUSAL, stored_crawl_info

    options = _with_header_file(options)
    if not new_urls:
        raise ConfigError(f"{options.name('append')} needs at least one URL to add")
    info = stored_crawl_info(path)
    if info.from_list:
        raise ConfigError(LIST_MODE_REFUSAL)
    stored = CrawlConfig.from_json(info.config_json)
    # Normalised as the roots are, to tell the new ones from those the archive has already.
    added = [validate_url(url, disable_queries=stored.disable_queries) for url in new_urls]
    fresh = tuple(url for url in dict.fromkeys(added) if url not in info.roots)
    config = CrawlConfig.from_json(
        info.config_json, roots=(*info.roots, *added), append=fresh or tuple(added),
        recursive=True, single=False, list_mode=False, resume=True, output=str(path),
        **_runtime(options),
        **_secrets(info.config_json, options, options.name("append"), new_urls),
    )
    _refuse_changes(config, options, options.name("append"), ("append", "output", "roots"))
    return config


def _runtime(options: GivenOptions) -> dict[str, Any]:
    return {key: options.values.get(key, _DEFAULTS[key]) for key in RUNTIME_OPTIONS}


def _secrets(config_json: str, options: GivenOptions, mode: str,
             urls: Sequence[str], *,
             credentials: tuple[tuple[str, str, str], ...] | None = None) -> dict[str, Any]:
    """The secrets of a resumed or appended crawl, given anew: the archive keeps the names of
    its ``--header`` and the users of its credentials, not their values. The same header
    names must be given again, and each root crawled with credentials given again with them
    (among the URLs; or as ``credentials``, ``(root, user, password)``); ``ConfigError``
    naming what is missing otherwise."""
    names, users = stored_secret_names(config_json)
    headers = tuple(options.values.get("headers") or ())
    try:
        given = sorted({parse_header(header)[0].lower() for header in headers})
    except HeaderError as exc:
        raise ConfigError(str(exc)) from exc
    if given != sorted({name.lower() for name in names}):
        stored = ", ".join(names) or "none"
        raise ConfigError(
            f"{options.name('headers')} must be given again with {mode}, the same names as the "
            f"archive's crawl (the values are not stored): it had {stored}, this run gives "
            f"{', '.join(given) or 'none'}"
        )
    if credentials is None:
        archived = CrawlConfig.from_json(config_json)
        credentials = given_credentials(urls, disable_queries=archived.disable_queries)
    have = {root for root, _, _ in credentials}
    for root, user in users.items():
        if root not in have:
            example = shown_url(root.replace("://", f"://{user}:secret@", 1))
            raise ConfigError(
                f"the archive's crawl sent credentials to {root} (user {user!r}), which are not "
                f"stored: give that root again with them ({mode} FILE '{example}')"
            )
    return {"headers": headers, "credentials": credentials}


def _refuse_changes(config: CrawlConfig, options: GivenOptions, mode: str,
                    exempt: tuple[str, ...]) -> None:
    """``ConfigError`` naming the first option given that would change what the archive's
    crawl is: it keeps its options (only :data:`RUNTIME_OPTIONS` may be given anew; the
    secrets, :data:`SECRET_OPTIONS`, must be)."""
    for option in sorted(options.given - {*RUNTIME_OPTIONS, *SECRET_OPTIONS, *exempt}):
        kept = getattr(config, option)
        value = options.values[option]
        if option == "roots":
            wanted = {_normalised(url, config) for url in value}
            if wanted <= set(kept):
                continue  # the archive's own roots (or some of them): nothing changes
        elif config_value(option, value) == kept:
            continue
        runtime = ", ".join(options.name(key) for key in RUNTIME_OPTIONS)
        raise ConfigError(
            f"{options.name(option)} cannot change with {mode}: the archive keeps the options "
            f"it was crawled with ({option}={_shown(kept)}); only {runtime} may be given anew"
        )


def _normalised(url: str, config: CrawlConfig) -> str:
    return validate_url(url, disable_queries=config.disable_queries)


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) or "none"
    return str(value)
