"""Every ``NITPICKER_*`` setting, its default and what it does: the one table.

The add-on (:class:`nitpicker.addon.Addon`) sets these defaults at ``addon`` priority, so a
project's ``settings.py``, Scrapyd's ``-d setting=…`` and ``scrapy crawl -s`` override them;
the site spider sets them too, when its crawler is made (Scrapy builds the spider before it
loads the add-ons, and the spider reads a few of them in ``from_crawler``). Read sites take
them with Scrapy's typed getters and no default of their own (``settings.getint(NAME)``).
A default of ``None`` means "derived": the help says from what.

Some settings are also crawl options: ``SiteSpider.from_crawler`` projects the option into
the setting (``--dedupe-cap`` → ``NITPICKER_DEDUPE_CAP``, …), see ``OPTIONS``. The README's
settings table and ``tests/test_readme.py`` are checked against this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["ENVIRONMENT", "SETTINGS", "Setting", "defaults", "set_defaults"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class Setting:
    """One ``NITPICKER_*`` setting."""

    name: str
    default: Any
    help: str
    option: str | None = None
    """The crawl option projected into it (a ``CrawlConfig`` field), if any."""


SETTINGS: tuple[Setting, ...] = (
    # -- downloads ------------------------------------------------------------------------------
    Setting("NITPICKER_METADATA_BYTES", 16384,
            "Bytes read of a metadata-only (out-of-scope, --single link) response."),
    Setting("NITPICKER_DENY_PRIVATE_NETWORKS", False,
            "Turn the private-network guard on for every crawl; a job's "
            "deny_private_networks=false cannot turn it off.", "deny_private_networks"),
    # -- sitemaps -------------------------------------------------------------------------------
    Setting("NITPICKER_SITEMAP_ENABLED", True,
            "False removes the sitemap seeder entirely (--no-sitemap, or a crawl that does not "
            "follow links, sets it False).", "sitemap"),
    Setting("NITPICKER_SITEMAP_MAX_BYTES", 10 * MiB,
            "Largest sitemap document read (compressed or not); larger ones are skipped whole."),
    Setting("NITPICKER_SITEMAP_MAX_DOCUMENTS", 1000, "Most sitemap documents read in one crawl."),
    # -- predictive pagination -----------------------------------------------------------------
    Setting("NITPICKER_PREDICT_PAGINATION", True,
            "False removes predictive pagination (--no-predict-pagination, or a crawl that does "
            "not follow links, sets it False).", "predict_pagination"),
    # -- the archive ----------------------------------------------------------------------------
    Setting("NITPICKER_ARCHIVE_MAX_MB", 0.0,
            "Storage budget in MB (0: none), as --max-archive-mb (the option wins).",
            "max_archive_mb"),
    # -- the trap cap ---------------------------------------------------------------------------
    Setting("NITPICKER_DEDUPE_CAP", 100,
            "Trap cap threshold, as --dedupe-cap (0 or None: the trap cap is off; a crawl's "
            "--dedupe-cap other than 100 wins).", "dedupe_cap"),
    Setting("NITPICKER_DEDUPE_AGE_WINDOW", 5000,
            "Newly discovered links after which an uncapped signature is forgotten, as "
            "--dedupe-age-window.", "dedupe_age_window"),
    Setting("NITPICKER_DEDUPE_MAP_CAP", 100_000,
            "Most signatures the trap cap counts at once, as --dedupe-map-cap.", "dedupe_map_cap"),
    # -- the adaptive concurrency window --------------------------------------------------------
    Setting("NITPICKER_THROTTLE_ENABLED", True,
            "Adaptive per-host concurrency; False keeps every host at --parallels."),
    Setting("NITPICKER_THROTTLE_FLOOR", None,
            "Lowest concurrency a struggling host is shrunk to (None: 2, or the ceiling when "
            "that is lower)."),
    Setting("NITPICKER_THROTTLE_CEILING", None,
            "Highest concurrency per host, where every host starts (None: "
            "CONCURRENT_REQUESTS_PER_DOMAIN, i.e. --parallels)."),
    Setting("NITPICKER_THROTTLE_SLOW_MS", 3000,
            "A response whose headers take longer (ms) is slow and halves the host's concurrency."),
    Setting("NITPICKER_THROTTLE_BATCH", 20,
            "Clean fast responses in a row before the host's concurrency grows by one."),
    Setting("NITPICKER_THROTTLE_MAX_BYTES", 8 * MiB,
            "A body larger than this is oversized and halves the host's concurrency."),
    Setting("NITPICKER_THROTTLE_MAX_RETRY_AFTER", 120.0,
            "Longest Retry-After honoured, in seconds; longer waits are cut to this."),
    # -- browser rendering ----------------------------------------------------------------------
    Setting("NITPICKER_RENDER_PAGES", 4,
            "Browser pages kept open and rendering at once (capped by --parallels)."),
    Setting("NITPICKER_NETWORK_IDLE_MS", 5000,
            "Longest wait for the load event and a quiet network after the DOM content loaded."),
    Setting("NITPICKER_NETWORK_QUIET_MS", 100,
            "How long none of a page's requests must be in flight before its snapshot is taken."),
    Setting("NITPICKER_LAZY_WAIT_MS", 3000,
            "Longest wait for lazy images after scrolling, per device preset."),
    Setting("NITPICKER_NAVIGATION_TIMEOUT_MS", 30000, "Browser navigation timeout (ms)."),
    # -- the shared frontier (a distributed crawl) -----------------------------------------------
    Setting("NITPICKER_FRONTIER_URL", "",
            "redis://host:port/db[?crawl=NAME]: take URLs from this shared frontier and record "
            "into a shard archive (as -a frontier=…; the environment variable of the same "
            "name is read too). Empty: the archive's own frontier."),
    Setting("NITPICKER_FRONTIER_LEASE_SECONDS", 60.0,
            "Seconds a worker's lease lives without a renewal (each acknowledgement renews it); "
            "then its URLs are pending again for any worker."),
    Setting("NITPICKER_FRONTIER_CHUNK", 200, "URLs a worker leases from the shared frontier at once."),
    Setting("NITPICKER_FRONTIER_RETRY_SECONDS", 30.0,
            "How long a worker retries an unreachable shared frontier before its run fails "
            "(error_code network)."),
    # -- stopping -------------------------------------------------------------------------------
    Setting("NITPICKER_STOP_GRACE", 3.0,
            "Seconds the downloads in flight may still take once the crawl stops; then they "
            "are cancelled."),
)

ENVIRONMENT: tuple[Setting, ...] = (
    Setting("NITPICKER_CHROMIUM", None,
            "Environment variable (not a setting): the Chromium executable to render with."),
    Setting("NITPICKER_LEASE_SECONDS", 60.0,
            "Environment variable (not a setting), read by crawl --workers N: how long a "
            "worker's frontier lease lives without a renewal."),
)
"""Environment variables, named like settings but read from ``os.environ``."""


def defaults() -> dict[str, Any]:
    """``{name: default}`` of every setting."""
    return {setting.name: setting.default for setting in SETTINGS}


def set_defaults(settings: BaseSettings, priority: str = "addon") -> None:
    """Set every setting's default at ``priority`` (a value set at a higher one is kept)."""
    for setting in SETTINGS:
        settings.set(setting.name, setting.default, priority=priority)
