"""Every ``NITPICKER_*`` setting, its default and what it does: the one table.

The add-on (:class:`nitpicker.addon.Addon`) sets these defaults at ``addon`` priority, so a
project's ``settings.py``, Scrapyd's ``-d setting=…`` and ``scrapy crawl -s`` override them;
the site spider sets them too, when its crawler is made (Scrapy builds the spider before it
loads the add-ons, and the spider reads a few of them in ``from_crawler``). Read sites take
them with Scrapy's typed getters and no default of their own (``settings.getint(NAME)``).
A default of ``None`` means "derived": the help says from what.

Some settings are also crawl options: ``SiteSpider.from_crawler`` projects the option into
the setting (``--dedupe-cap`` → ``NITPICKER_DEDUPE_CAP``, …), see ``OPTIONS``. The manual's
settings page (``docs/reference/settings.md``) is generated from this table, its help texts
written in Markdown; ``tests/test_docs.py`` fails when the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.settings import BaseSettings

__all__ = ["ENVIRONMENT", "SETTINGS", "Setting", "defaults", "from_environment", "set_defaults"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class Setting:
    """One ``NITPICKER_*`` setting."""

    name: str
    default: Any
    help: str
    option: str | None = None
    """The crawl option projected into it (a ``CrawlConfig`` field), if any."""
    kind: str | None = None
    """The value's type, when the default (``None``) does not show it."""


SETTINGS: tuple[Setting, ...] = (
    # -- downloads ------------------------------------------------------------------------------
    Setting("NITPICKER_METADATA_BYTES", 16384,
            "Bytes read of a metadata-only (out-of-scope, `--single` link) response."),
    Setting("NITPICKER_DENY_PRIVATE_NETWORKS", False,
            "Turn the private-network guard on for every crawl of the project; a job's "
            "`deny_private_networks=false` cannot turn it off (`--deny-private-networks` sets "
            "it true for one crawl, whatever its priority).", "deny_private_networks"),
    # -- sitemaps -------------------------------------------------------------------------------
    Setting("NITPICKER_SITEMAP_ENABLED", True,
            "`False` removes the sitemap seeder entirely (`--no-sitemap`, `--single`, list mode "
            "and a resume set it `False`, whatever its priority).", "sitemap"),
    Setting("NITPICKER_SITEMAP_MAX_BYTES", 10 * MiB,
            "Largest sitemap document read (compressed or not); larger ones are skipped whole."),
    Setting("NITPICKER_SITEMAP_MAX_DOCUMENTS", 1000, "Most sitemap documents read in one crawl."),
    # -- TLS certificates ---------------------------------------------------------------------
    Setting("NITPICKER_TLS_CHECK", True,
            "Look at the certificate of each https origin in the crawl's scope once (a TLS "
            "handshake of its own, verified as a browser would, with the system's trusted "
            "certificates or `SSL_CERT_FILE`): the `security/tls-invalid` and "
            "`security/tls-expiring` checks read it. `False` leaves it out."),
    Setting("NITPICKER_TLS_CHECK_TIMEOUT", 10.0,
            "Seconds for that handshake, connection included."),
    # -- predictive pagination -----------------------------------------------------------------
    Setting("NITPICKER_PREDICT_PAGINATION", True,
            "`False` removes predictive pagination (`--no-predict-pagination`, `--single`, "
            "`--no-recursive` and list mode set it `False`, whatever its priority).",
            "predict_pagination"),
    # -- the archive ----------------------------------------------------------------------------
    Setting("NITPICKER_ARCHIVE_MAX_MB", 0.0,
            "Storage budget in MB (`0`: none), as `--max-archive-mb` (the option, when given, "
            "wins at any priority).", "max_archive_mb"),
    Setting("NITPICKER_SITE_CHECKS", True,
            "Run the [site checks](../guide/check.md) when a crawl ends (`nitpicker check` runs "
            "them later). `False` leaves the archive without check findings: for a crawl whose "
            "archive budget has no room for them, or one whose checks run elsewhere."),
    Setting("NITPICKER_CLOSE_READER_PAGES", 1000,
            "Pages a crawl records from which its close reads the pages' link scores and click "
            "depths in a process of its own, on another core, while it builds the archive's "
            "indexes and runs the site checks (`nitpicker/archive/close_reader.py`; the same "
            "results). Below it, or `0`, they are computed in the crawl's process."),
    Setting("NITPICKER_CONTENT_FACTS", True,
            "Record each in-scope HTML page's fragment targets (its elements' ids, its "
            "`<a name>`s) and its main content's hash and MinHash signature, from the parse "
            "that reads its links: `links/broken-fragment`, `content/exact-duplicate` and "
            "`content/near-duplicate` read them. `False` leaves them out (those checks then "
            "judge no page)."),
    Setting("NITPICKER_PAGE_READER", True,
            "Read each in-scope HTML page's links and facts in a child process beside the "
            "crawl (`nitpicker/spiders/page_reader.py`), so the crawl's own threads share "
            "less of one GIL. `False` reads them in the crawl's process (the same results; "
            "a crawl does so by itself when the child cannot start or ends). Off by default for "
            "the workers of `--workers N`: they fill the cores already."),
    Setting("NITPICKER_NEAR_DUPLICATE_THRESHOLD", 0.9,
            "The estimated Jaccard similarity of two pages' main contents (their 3-word "
            "shingles) from which `content/near-duplicate` clusters them, above 0 and at most "
            "1 (`nitpicker check --near-duplicate-threshold` for a later run)."),
    Setting("NITPICKER_SOFT404_PROBES", 50,
            "Directories of in-scope pages probed for soft 404s at most (one random missing "
            "URL fetched once for each; `content/soft-404` compares the pages with the probes "
            "that answered 200). `0` turns the probes off."),
    # -- the trap cap ---------------------------------------------------------------------------
    Setting("NITPICKER_DEDUPE_CAP", 100,
            "The trap cap's threshold, as `--dedupe-cap` (a crawl's `--dedupe-cap` other than "
            "100 overrides the project's settings, `--dedupe-cap 0` turning it off; `-s` "
            "overrides the option). `0` or `None` turns the trap cap off.", "dedupe_cap"),
    Setting("NITPICKER_DEDUPE_AGE_WINDOW", 5000,
            "Newly discovered links after which a signature not capped is forgotten, as "
            "`--dedupe-age-window` (always projected from the crawl option).",
            "dedupe_age_window"),
    Setting("NITPICKER_DEDUPE_MAP_CAP", 100_000,
            "Most signatures the trap cap counts at once, as `--dedupe-map-cap` (always "
            "projected from the crawl option).", "dedupe_map_cap"),
    # -- the adaptive concurrency window --------------------------------------------------------
    Setting("NITPICKER_THROTTLE_ENABLED", True,
            "Adaptive per-host concurrency (`nitpicker.crawl.throttle.AdaptiveConcurrency`). "
            "`False` keeps every host at `--parallels`."),
    Setting("NITPICKER_THROTTLE_FLOOR", None,
            "Lowest concurrency a struggling host is shrunk to (`None`: `2`, lowered to "
            "`--parallels` when that is smaller). Set above the ceiling, the crawl refuses to "
            "start with a message naming both settings.", kind="int"),
    Setting("NITPICKER_THROTTLE_CEILING", None,
            "Highest concurrency per host, and where every host starts (`None`: "
            "`CONCURRENT_REQUESTS_PER_DOMAIN`, i.e. `--parallels`).", kind="int"),
    Setting("NITPICKER_THROTTLE_SLOW_MS", 3000,
            "A response whose headers take longer than this (ms) is slow and halves the host's "
            "concurrency. Browser renders are not timed."),
    Setting("NITPICKER_THROTTLE_BATCH", 20,
            "Clean fast responses in a row (status below 500, not slow, not oversized) before "
            "the host's concurrency grows by one."),
    Setting("NITPICKER_THROTTLE_MAX_BYTES", 8 * MiB,
            "A body larger than this (8 MiB) is oversized and halves the host's concurrency."),
    Setting("NITPICKER_THROTTLE_MAX_RETRY_AFTER", 120.0,
            "Longest `Retry-After` honoured, in seconds; longer waits are cut to this."),
    # -- browser rendering ----------------------------------------------------------------------
    Setting("NITPICKER_RENDER_PAGES", 4,
            "Browser pages kept open and rendering at once, one browser context each (capped "
            "by `--parallels`). More does not help on 2 cores."),
    Setting("NITPICKER_NETWORK_IDLE_MS", 5000,
            "Longest wait for the `load` event and a quiet network after the DOM content "
            "loaded."),
    Setting("NITPICKER_NETWORK_QUIET_MS", 100,
            "How long none of a page's requests must be in flight before its snapshot is taken "
            "(`0`: right at the `load` event)."),
    Setting("NITPICKER_LAZY_WAIT_MS", 3000,
            "Longest wait for lazy images after scrolling, per device preset."),
    Setting("NITPICKER_NAVIGATION_TIMEOUT_MS", 30000,
            "Browser navigation timeout, in ms (a whole browser download is bounded by twice "
            "it plus the other render bounds, see Browser rendering)."),
    # -- the shared frontier (a distributed crawl) -----------------------------------------------
    Setting("NITPICKER_FRONTIER_URL", "",
            "`redis://host:port/db[?crawl=NAME]`: the shared frontier of a distributed crawl, "
            "as `-a frontier=…` (the argument wins; an environment variable of the same name is "
            "read last). Empty: the archive's own frontier."),
    Setting("NITPICKER_FRONTIER_LEASE_SECONDS", 60.0,
            "How long a worker's lease of a chunk lives without a renewal (each "
            "acknowledgement and each lease call renews it); then its URLs not done are pending "
            "again for any worker."),
    Setting("NITPICKER_FRONTIER_CHUNK", 200,
            "URLs a worker leases from the shared frontier at once (one round trip per chunk)."),
    Setting("NITPICKER_FRONTIER_RETRY_SECONDS", 30.0,
            "How long a worker retries an unreachable Redis (a restart) before its run fails "
            "with `error_code = network`."),
    # -- dead hosts -----------------------------------------------------------------------------
    Setting("NITPICKER_HOST_BREAKER_ENABLED", True,
            "The host breaker (`nitpicker.middlewares.host_breaker.HostBreaker`, see "
            "[How a crawl works](../topics/how-a-crawl-works.md)): after "
            "`NITPICKER_HOST_BREAKER_FAILURES` connection failures in a row to one host, its "
            "other URLs are recorded with the same error (`pages.untried = 1`) without a "
            "request. `False` requests every URL, in every crawl of the project "
            "(`--no-host-breaker` does it for one crawl)."),
    Setting("NITPICKER_HOST_BREAKER_FAILURES", 3,
            "Connection failures in a row (DNS lookup failed, refused, reset, timeout, TLS "
            "error) after which a host is given up on; any HTTP answer resets the count. A "
            "host's robots.txt that fails so counts for all of them (not a root's host's). With "
            "`--workers N` or a Redis frontier, a host one worker gives up on is given up on "
            "by all."),
    Setting("NITPICKER_HOST_BREAKER_PROBE_AFTER", 60.0,
            "Seconds after which one request to a given-up host is sent as a probe: an "
            "answer fetches its URLs again, a failure gives it up for as long again."),
    # -- network outages -----------------------------------------------------------------------
    Setting("NITPICKER_OUTAGE_ENABLED", True,
            "Network outage detection (`nitpicker.middlewares.outage.OutageGuard`, see "
            "[Network outages](../topics/outages.md)). `False` records every connection "
            "failure as a fetch error as it comes."),
    Setting("NITPICKER_OUTAGE_PROBE_INTERVAL", 5.0,
            "Seconds between two probes during an outage; doubled after each probe that "
            "fails, up to `NITPICKER_OUTAGE_PROBE_MAX_INTERVAL`."),
    Setting("NITPICKER_OUTAGE_PROBE_MAX_INTERVAL", 60.0,
            "Longest wait between two probes, in seconds. Below "
            "`NITPICKER_OUTAGE_PROBE_INTERVAL`, the crawl refuses to start with a message "
            "naming both settings."),
    Setting("NITPICKER_OUTAGE_PROBE_TIMEOUT", 10.0,
            "Seconds a probe may take to get an answer's headers."),
    Setting("NITPICKER_OUTAGE_GIVE_UP", 1800.0,
            "Seconds an outage may last; then the run fails with `error_code = outage` "
            "(resumable)."),
    Setting("NITPICKER_OUTAGE_PROBE_URL", "",
            "The URL probed (e.g. a health endpoint); empty: the last in-scope URL that "
            "answered in this run. Set, it also arms detection before anything answered."),
    # -- the end-of-run retry pass ---------------------------------------------------------------
    Setting("NITPICKER_AUTO_RETRY_CONCURRENCY", 2,
            "Requests at once during the end-of-run retry pass, which fetches once more the URLs "
            "that failed for a passing reason (a timeout, a connection reset, a 429 or 503; see "
            "[The retry pass at the end of a run](../guide/crawl.md#the-retry-pass-at-the-end-of-a-run)). `0` "
            "turns the pass off."),
    Setting("NITPICKER_AUTO_RETRY_PAUSE", 10.0,
            "Seconds between the end of the crawl and its retry pass (0 to 3600)."),
    # -- stopping -------------------------------------------------------------------------------
    Setting("NITPICKER_STOP_GRACE", 3.0,
            "Seconds the downloads in flight may still take once the crawl stops (SIGINT, "
            "SIGTERM, a failure); then they are cancelled and their URLs stay in the queue. "
            "`0` cancels them at once."),
)

ENVIRONMENT: tuple[Setting, ...] = (
    Setting("NITPICKER_CHROMIUM", None,
            "The Chromium executable to render with (see Browser rendering).", kind="str"),
    Setting("NITPICKER_LEASE_SECONDS", 60.0,
            "Read by `crawl --workers N`: how long a worker's frontier lease lives without a "
            "renewal."),
)
"""Environment variables, named like settings but read from ``os.environ``."""


def defaults() -> dict[str, Any]:
    """``{name: default}`` of every setting."""
    return {setting.name: setting.default for setting in SETTINGS}


def from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``{name: value}`` of the settings of the table given as environment variables of the
    same name: ``nitpicker crawl`` sets them at ``project`` priority (a crawl option still wins),
    as values of the project's ``settings.py``; each component checks its own."""
    return {setting.name: environ[setting.name] for setting in SETTINGS if setting.name in environ}


def set_defaults(settings: BaseSettings, priority: str = "addon") -> None:
    """Set every setting's default at ``priority`` (a value set at a higher one is kept)."""
    for setting in SETTINGS:
        settings.set(setting.name, setting.default, priority=priority)
