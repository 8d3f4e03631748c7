"""Every migration of the archive schema, in order: the schema as commented SQL.

A ``.nitpicker`` file is built by applying :data:`MIGRATIONS` in order
(:func:`nitpicker.archive.schema.migrate`); each is named, applied once, recorded in the
``migrations`` table. A schema change is a new named migration at the end of the list, never
an edit of one already released: an archive remembers which it has.
"""

from __future__ import annotations

from typing import Final

from nitpicker.archive.audit_migrations import (
    EXTRACTED_VALUES,
    FINDINGS,
    LINK_SCORE,
    PAGE_TEMPLATES,
    REDIRECT_NEXT,
    RUN_AUTO_RETRY,
    SITE_AUDIT,
    STRUCTURED_DATA,
    TECHNOLOGIES,
    VIOLATION_DETAILS,
)
from nitpicker.archive.content_migrations import (
    CONTENT_SIGNATURES,
    PAGE_CONTENT,
    SOFT404_PROBES,
)
from nitpicker.archive.initial_schema import INITIAL

__all__ = ["MIGRATIONS"]


_INTERNAL_HTML_PAGE: Final = (
    "scraped = 1 AND is_external = 0 AND content_type = 'text/html' AND redirect_dest_id IS NULL"
)

_QUERY_INDEXES: Final = f"""
DROP INDEX IF EXISTS anchors_href_id;
CREATE INDEX anchors_href_page ON anchors(href_id, page_id);
DROP INDEX IF EXISTS pages_is_external;
CREATE INDEX pages_external_url ON pages(is_external, url);
CREATE INDEX pages_status ON pages(status);
CREATE INDEX pages_internal_title ON pages(title, url) WHERE {_INTERNAL_HTML_PAGE};
CREATE INDEX pages_internal_description ON pages(description, url) WHERE {_INTERNAL_HTML_PAGE};
DROP INDEX IF EXISTS response_headers_page_id;
CREATE INDEX response_headers_page_name ON response_headers(page_id, name COLLATE NOCASE);
CREATE INDEX images_missing_alt ON images(page_id) WHERE alt IS NULL OR alt = '';
CREATE INDEX images_missing_dimensions ON images(page_id)
    WHERE width IS NULL OR width = 0 OR height IS NULL OR height = 0
"""
"""Indexes for ``nitpicker.query`` (``bench/README-query.md`` says what each one serves).

Three replace a 0001 index they extend: ``anchors(href_id, page_id)``,
``pages(is_external, url)`` and ``response_headers(page_id, name)``.
"""

_RESOURCE_HEADERS: Final = """
CREATE TABLE resource_headers (
    resource_id INTEGER NOT NULL REFERENCES resources(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX resource_headers_resource_id ON resource_headers(resource_id);
"""

_IN_SITEMAP: Final = """
ALTER TABLE pages ADD COLUMN in_sitemap INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pages_in_sitemap ON pages(in_sitemap) WHERE in_sitemap = 1
"""

_TRAP_EVENTS: Final = """
CREATE TABLE trap_events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    signature TEXT NOT NULL,        -- nitpicker.policy.signature.meta_signature
    parent_path TEXT NOT NULL,
    count INTEGER NOT NULL,         -- same-signature pages seen when the cap fired
    first_url TEXT NOT NULL,
    last_url TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""

_ANALYSIS: Final = """
CREATE TABLE analysis_runs (
    id INTEGER PRIMARY KEY,
    plugin TEXT NOT NULL,           -- the entry-point name (axe, search, …)
    version TEXT NOT NULL,          -- the plugin's version
    settings_hash TEXT NOT NULL,    -- sha256 of the settings as canonical JSON
    settings TEXT NOT NULL,         -- the settings, JSON
    headers TEXT NOT NULL,          -- JSON object: header key -> column title
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    outcome TEXT NOT NULL,          -- running, finished, interrupted, failed, lost
    pages_done INTEGER NOT NULL DEFAULT 0,
    pages_skipped INTEGER NOT NULL DEFAULT 0,  -- already analysed with this version and settings
    errors INTEGER NOT NULL DEFAULT 0,
    detail TEXT                     -- why a failed run failed
);
CREATE INDEX analysis_runs_plugin ON analysis_runs(plugin, id);

CREATE TABLE analyzed_pages (     -- the latest analysis of each page by each plugin
    plugin TEXT NOT NULL,
    phase TEXT NOT NULL,            -- page (each_page, the snapshot) or url (each_url)
    page_id INTEGER NOT NULL REFERENCES pages(id),
    run_id INTEGER NOT NULL REFERENCES analysis_runs(id),
    version TEXT NOT NULL,
    settings_hash TEXT NOT NULL,
    ok INTEGER NOT NULL,            -- 1 analysed, 0 the plugin failed on it (a plugin error)
    PRIMARY KEY (plugin, phase, page_id)
) WITHOUT ROWID;

CREATE TABLE page_values (        -- the cells of a plugin's per-page table
    plugin TEXT NOT NULL,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    key TEXT NOT NULL,              -- the header key
    phase TEXT NOT NULL,            -- page or url: which call gave it
    value TEXT NOT NULL,            -- JSON: a string, number, boolean or null
    note TEXT,
    PRIMARY KEY (plugin, page_id, key)
) WITHOUT ROWID;
CREATE INDEX page_values_page ON page_values(page_id);

CREATE TABLE violations (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    plugin TEXT NOT NULL,
    phase TEXT NOT NULL,            -- page or url: which call found it
    validator TEXT NOT NULL,
    severity TEXT NOT NULL,
    rule TEXT NOT NULL,
    code TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL,
    url TEXT NOT NULL,              -- the URL the plugin reported (the page's, as a rule)
    location TEXT                   -- line:col in the snapshot, when the plugin knows it
);
CREATE INDEX violations_plugin_page ON violations(plugin, page_id);
CREATE INDEX violations_page ON violations(page_id);
CREATE INDEX violations_validator ON violations(validator, severity, rule);
CREATE INDEX violations_rule ON violations(rule);

CREATE TABLE plugin_errors (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES analysis_runs(id),
    plugin TEXT NOT NULL,
    phase TEXT NOT NULL,            -- page or url
    page_id INTEGER REFERENCES pages(id),
    url TEXT NOT NULL,
    message TEXT NOT NULL,          -- the second failure's exception, one line
    created_at TEXT NOT NULL
);
CREATE INDEX plugin_errors_run ON plugin_errors(run_id);
CREATE INDEX plugin_errors_plugin_page ON plugin_errors(plugin, page_id)
"""
"""What ``nitpicker analyze`` records (SPEC §7): one row per plugin run, the latest analysis of
each page by each plugin (what a re-run skips), its table cells and violations, and the pages a
plugin failed on."""
_REDIRECT_KIND: Final = """
-- how a redirect source sent the crawler on: http, meta-refresh, script (NULL: not a source)
ALTER TABLE pages ADD COLUMN redirect_kind TEXT;
UPDATE pages SET redirect_kind = CASE WHEN status = 0 THEN 'meta-refresh' ELSE 'http' END
    WHERE redirect_dest_id IS NOT NULL
"""
"""How a redirect source (``redirect_dest_id`` set) sent the crawler on: ``http`` (a 3xx
``Location``), ``meta-refresh`` (``<meta http-equiv=refresh>``, read without a browser) or
``script`` (the browser left the loaded page by itself: ``location.href = …`` on load). NULL
on every other row. Rows written before it are filled from their status (a meta refresh hop
was recorded with status 0)."""
_CONSOLE_MESSAGES: Final = """
CREATE TABLE console_messages (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,    -- sha1 of (kind, level, text, source_url, line, column)
    kind TEXT NOT NULL,             -- console (console.log/warn/…), exception (uncaught)
    level TEXT NOT NULL,            -- error, warning, info, log, debug
    text TEXT NOT NULL,
    source_url TEXT NOT NULL DEFAULT '',  -- '' when the browser did not say
    line INTEGER NOT NULL DEFAULT 0,      -- 1-based; 0 when unknown
    "column" INTEGER NOT NULL DEFAULT 0   -- 1-based; 0 when unknown
);
CREATE TABLE page_console_messages (
    page_id INTEGER NOT NULL REFERENCES pages(id),
    message_id INTEGER NOT NULL REFERENCES console_messages(id),
    position INTEGER NOT NULL,      -- order of its first occurrence on the page, from 0
    count INTEGER NOT NULL,         -- times the page showed it
    PRIMARY KEY (page_id, message_id)
) WITHOUT ROWID;
CREATE INDEX page_console_messages_message ON page_console_messages(message_id)
"""
"""Console messages and uncaught exceptions of rendered pages (issue 13, item 10): a message
shown by many pages (a shared script's warning) is one row, linked to each of its pages."""

_JSON_LD: Final = """
CREATE TABLE json_ld_blocks (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    position INTEGER NOT NULL,      -- document order on the page, from 0
    is_valid INTEGER NOT NULL,
    error TEXT,                     -- why the block is not JSON-LD; NULL when valid
    source TEXT NOT NULL            -- the block as written
);
CREATE INDEX json_ld_blocks_page_id ON json_ld_blocks(page_id);
CREATE INDEX json_ld_blocks_invalid ON json_ld_blocks(page_id) WHERE is_valid = 0;
CREATE TABLE json_ld_types (
    block_id INTEGER NOT NULL REFERENCES json_ld_blocks(id),
    type TEXT NOT NULL,             -- as written: Product, schema:Product, https://schema.org/…
    PRIMARY KEY (block_id, type)
) WITHOUT ROWID;
CREATE INDEX json_ld_types_type ON json_ld_types(type, block_id)
"""
"""Every ``<script type="application/ld+json">`` of an in-scope page (issue 13, item 11) and
the ``@type`` values of its top-level entities (:mod:`nitpicker.policy.extract.json_ld`)."""
_PAGE_ORIGIN: Final = """
ALTER TABLE pages ADD COLUMN in_inventory INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pages_in_inventory ON pages(in_inventory) WHERE in_inventory = 1
"""
"""Where a page's URL came from besides links: ``in_inventory`` (``--inventory FILE``: URLs
known from elsewhere), beside ``in_sitemap`` (0005)."""
_IMAGE_SIZE: Final = """
-- bytes (the Content-Length of the response the image was loaded with); NULL when unknown
ALTER TABLE images ADD COLUMN file_size INTEGER;
CREATE INDEX images_file_size ON images(file_size) WHERE file_size IS NOT NULL
"""
"""The file size of an image, for ``--image-file-size-threshold`` and ``images --oversized``:
the ``Content-Length`` of the response the browser loaded the image with (NULL when unknown:
no browser, no ``Content-Length``, a ``data:`` URL)."""

_TRAP_SCORE: Final = """
ALTER TABLE trap_events ADD COLUMN threshold INTEGER /* the firing page's threshold */;
ALTER TABLE trap_events ADD COLUMN trap_signals TEXT /* JSON list: its trap signals */;
ALTER TABLE trap_events ADD COLUMN legit_signals TEXT /* JSON list: its legit signals */
"""
"""The trap cap's score at each firing (seed 003 §3, SPEC §9 M8): the signals on the page that
made the signature reach its threshold (trap signals count for a trap, legit ones against) and
the threshold they gave it. NULL in the rows of an archive written before."""
_RESPONSE_TIME: Final = """
-- milliseconds from sending the request to the response's headers (Scrapy's download_latency);
-- a rendered page: its HTML preflight's, the main document over HTTP. NULL: not timed
ALTER TABLE pages ADD COLUMN response_time_ms INTEGER
"""
"""How long the server took to answer a page: from sending the request to its response
headers, in milliseconds (Scrapy's ``download_latency`` of the request, connection set-up
included; the last hop of a redirect chain). A rendered page is timed by its HTML preflight:
the main document's answer over HTTP, not the browser's load and rendering. NULL on rows
written before it, and on URLs never answered."""
_FRONTIER_LEASE: Final = """
-- the worker holding a leased row (--workers N)
ALTER TABLE frontier ADD COLUMN lease_owner TEXT;
-- the unix time its lease ends unless renewed
ALTER TABLE frontier ADD COLUMN lease_expires REAL;
CREATE INDEX frontier_lease_expires ON frontier(lease_expires) WHERE state = 1
"""
"""Leases with an owner and an expiry (``nitpicker crawl --workers N``): each crawler process
leases rows under its own owner token and renews them while it lives; a row whose lease expired
(its worker was killed) is leased again by another. A single-process crawl leaves both NULL."""

_OUTAGES: Final = """
CREATE TABLE outages (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    worker INTEGER,                 -- crawl --workers N: the worker that paused (from 0); else NULL
    started_at TEXT NOT NULL,       -- the first connection failure of the outage
    ended_at TEXT,                  -- when it ended (NULL: the process died during it)
    seconds REAL,                   -- how long the crawl was paused
    outcome TEXT,                   -- resumed, gave_up, stopped (NULL: not ended)
    probes INTEGER NOT NULL DEFAULT 0,    -- probes sent, the one that confirmed it included
    requeued INTEGER NOT NULL DEFAULT 0,  -- URLs that failed in it, not recorded: fetched again
    error TEXT NOT NULL,            -- the failure that started it (DNS lookup failed: …)
    probe_url TEXT NOT NULL         -- the URL probed
);
CREATE INDEX outages_run ON outages(run_id)
"""
"""Network outages (:mod:`nitpicker.middlewares.outage`): while one lasts the crawl is paused,
the URLs that failed in it are not recorded but fetched again when a probe answers (or left
pending for ``--resume`` when the run gives up or stops)."""

_INVENTORY_RUNS: Final = """
CREATE TABLE inventory_runs (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    label TEXT NOT NULL DEFAULT '', -- --inventory-label
    path TEXT NOT NULL,             -- the file, absolute
    sha256 TEXT NOT NULL,           -- of the file's bytes
    lines_read INTEGER NOT NULL,    -- URL lines (not blank, not a # comment)
    urls INTEGER NOT NULL,          -- distinct URLs (a URL's http and https forms are one)
    new_pages INTEGER NOT NULL,     -- in scope, new to the archive: queued (an HTML path)
    new_resources INTEGER NOT NULL, -- in scope, new: queued (a path naming another file type)
    scope_skipped INTEGER NOT NULL, -- out of scope: rows, never fetched
    excluded INTEGER NOT NULL,      -- --exclude / --exclude-url: skipped rows
    created_at TEXT NOT NULL
)
"""
"""The audit record of each ``--inventory`` file a crawl seeded (one row per file read): what
it listed and what the crawl made of it, with its digest, so a later look can tell which
export was crawled."""

_PAGE_CHARSET: Final = """
-- lower-case, as declared: the Content-Type header's charset, else the page's <meta charset>
-- or <meta http-equiv=content-type>; NULL when none declares one (or before this migration)
ALTER TABLE pages ADD COLUMN charset TEXT
"""
"""The character encoding a page declares (:attr:`nitpicker.items.PageItem.charset`): the
``Content-Type`` header's ``charset`` wins over the markup's, as in a browser."""

_FRONTIER_SITE_FIRST: Final = """
DROP INDEX IF EXISTS frontier_pending;
-- the lease order: the site's URLs (mode 0 full, 6 predicted) before the checks (mode 1:
-- out-of-scope URLs fetched for their metadata), each lane shallowest first
CREATE INDEX frontier_pending ON frontier(mode = 1, depth, id) WHERE state = 0
"""
"""The site first (issue 27, item 1): pending rows are leased in two lanes, the URLs the crawl
reads in full before the URLs it only checks (``FollowMode.METADATA``), so that a slow or dead
external host never holds the site's own pages back (:mod:`nitpicker.archive.frontier_store`)."""

_UNTRIED: Final = """
-- 1: recorded with its host's connection failure, without a request of its own (the host
-- breaker had given up on the host: nitpicker.middlewares.host_breaker)
ALTER TABLE pages ADD COLUMN untried INTEGER NOT NULL DEFAULT 0
"""
"""A dead host costs one timeout (issue 27, item 2): after ``NITPICKER_HOST_BREAKER_FAILURES``
consecutive connection failures to a host, its other URLs are recorded with the same error
(``status`` -1) and ``untried = 1``, not fetched one by one."""

_GIVEN_UP_HOSTS: Final = """
CREATE TABLE given_up_hosts (     -- hosts a worker of --workers N gave up on, for the others
    host TEXT PRIMARY KEY,          -- host:port
    error TEXT NOT NULL,            -- its last connection error, as recorded
    why TEXT NOT NULL,              -- 'after 3 connection failures in a row', ...
    probe_at REAL NOT NULL          -- Unix time after which it may be probed; then ignored
) WITHOUT ROWID
"""
"""The host breaker shared by the workers of ``--workers N`` (issue 27, item 2): a host one
worker gave up on is given up on by the others when they next lease
(:mod:`nitpicker.archive.host_board`); a host that answers again is deleted."""

# 0044_snapshot_zstd changes no table: it marks an archive whose snapshots a crawl may have
# stored as Zstandard (``snapshots.encoding = 'zstd'``, nitpicker/archive/snapshots.py), so
# that a nitpicker from before, which reads only zlib, refuses the file ("written by a newer
# nitpicker") instead of showing compressed bytes as a page's HTML.

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    ("0001_initial", INITIAL),
    ("0002_query_indexes", _QUERY_INDEXES),
    ("0003_resource_headers", _RESOURCE_HEADERS),
    ("0004_run_phase", "ALTER TABLE runs ADD COLUMN phase TEXT"),
    ("0005_in_sitemap", _IN_SITEMAP),
    ("0006_links_capped",
     "ALTER TABLE pages ADD COLUMN links_capped INTEGER NOT NULL DEFAULT 0"),
    ("0007_trap_events", _TRAP_EVENTS),
    ("0008_redirect_kind", _REDIRECT_KIND),
    ("0009_image_size", _IMAGE_SIZE),
    ("0010_console_messages", _CONSOLE_MESSAGES),
    ("0011_json_ld", _JSON_LD),
    ("0012_page_origin", _PAGE_ORIGIN),
    ("0013_analysis", _ANALYSIS),
    ("0014_response_time", _RESPONSE_TIME),
    ("0015_frontier_lease", _FRONTIER_LEASE),
    ("0016_trap_score", _TRAP_SCORE),
    ("0017_outages", _OUTAGES),
    ("0018_inventory_runs", _INVENTORY_RUNS),
    ("0019_page_charset", _PAGE_CHARSET),
    ("0020_findings", FINDINGS),
    ("0021_violation_details", VIOLATION_DETAILS),
    ("0022_page_templates", PAGE_TEMPLATES),
    ("0028_redirect_next", REDIRECT_NEXT),
    ("0029_site_audit", SITE_AUDIT),
    ("0030_structured_data", STRUCTURED_DATA),
    ("0031_extracted_values", EXTRACTED_VALUES),
    ("0032_link_score", LINK_SCORE),
    ("0033_run_auto_retry", RUN_AUTO_RETRY),
    ("0035_technologies", TECHNOLOGIES),
    ("0036_frontier_site_first", _FRONTIER_SITE_FIRST),
    ("0037_untried", _UNTRIED),
    ("0040_page_content", PAGE_CONTENT),
    ("0041_content_signatures", CONTENT_SIGNATURES),
    ("0042_soft404_probes", SOFT404_PROBES),
    ("0043_given_up_hosts", _GIVEN_UP_HOSTS),
    ("0044_snapshot_zstd", ""),
)
