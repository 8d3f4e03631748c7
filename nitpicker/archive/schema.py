"""The archive schema, as ordered, named migrations.

A ``.nitpicker`` file is a SQLite database. ``migrations`` records which named steps were
applied; applying them again is a no-op. Readers never migrate: an archive whose newest
migration is unknown to this version is refused as "written by a newer nitpicker".
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Final

__all__ = [
    "MIGRATIONS",
    "SchemaError",
    "applied_migrations",
    "check_archive",
    "check_readable",
    "migrate",
]


class SchemaError(Exception):
    """The file is not a nitpicker archive, or was written by a newer version."""


_INITIAL: Final = """
CREATE TABLE info (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version TEXT NOT NULL,
    name TEXT NOT NULL,
    base_url TEXT NOT NULL,
    roots TEXT NOT NULL,            -- JSON array, in the order given
    from_list INTEGER NOT NULL DEFAULT 0,
    config TEXT NOT NULL,           -- JSON of every crawl option (CrawlConfig)
    created_at TEXT NOT NULL
);

CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,       -- normalised, no fragment, no credentials
    redirect_dest_id INTEGER REFERENCES pages(id),
    scraped INTEGER NOT NULL DEFAULT 0,
    is_target INTEGER NOT NULL DEFAULT 0,
    is_external INTEGER NOT NULL DEFAULT 0,
    depth INTEGER,
    status INTEGER,                 -- HTTP status; -1 = fetch error; NULL = never fetched
    status_text TEXT,
    content_type TEXT,
    content_length INTEGER,
    lang TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '',
    noindex INTEGER NOT NULL DEFAULT 0,
    nofollow INTEGER NOT NULL DEFAULT 0,
    noarchive INTEGER NOT NULL DEFAULT 0,
    canonical TEXT NOT NULL DEFAULT '',
    alternate TEXT NOT NULL DEFAULT '',
    og_type TEXT NOT NULL DEFAULT '',
    og_title TEXT NOT NULL DEFAULT '',
    og_site_name TEXT NOT NULL DEFAULT '',
    og_description TEXT NOT NULL DEFAULT '',
    og_url TEXT NOT NULL DEFAULT '',
    og_image TEXT NOT NULL DEFAULT '',
    twitter_card TEXT NOT NULL DEFAULT '',
    is_skipped INTEGER NOT NULL DEFAULT 0,
    skip_reason TEXT,
    "order" INTEGER,                -- natural URL order of internal pages, set at the end
    fetched_at TEXT
);
CREATE INDEX pages_is_external ON pages(is_external);
CREATE INDEX pages_content_type ON pages(content_type);
CREATE INDEX pages_scraped ON pages(scraped);
CREATE INDEX pages_redirect_dest_id ON pages(redirect_dest_id);
CREATE INDEX pages_order ON pages("order");

CREATE TABLE response_headers (
    page_id INTEGER NOT NULL REFERENCES pages(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX response_headers_page_id ON response_headers(page_id);

CREATE TABLE anchors (
    id INTEGER PRIMARY KEY,         -- insertion order = document order
    page_id INTEGER NOT NULL REFERENCES pages(id),
    href_id INTEGER NOT NULL REFERENCES pages(id),
    hash TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT ''
);
CREATE INDEX anchors_page_id ON anchors(page_id);
CREATE INDEX anchors_href_id ON anchors(href_id);

CREATE TABLE images (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    src TEXT NOT NULL DEFAULT '',
    current_src TEXT NOT NULL DEFAULT '',
    alt TEXT,                       -- NULL when the attribute is absent
    width REAL,                     -- rendered CSS px, or the width attribute over HTTP
    height REAL,
    natural_width INTEGER,
    natural_height INTEGER,
    is_lazy INTEGER NOT NULL DEFAULT 0,
    viewport_width INTEGER,         -- NULL when read from markup only (no browser)
    source_code TEXT NOT NULL DEFAULT ''
);
CREATE INDEX images_page_id ON images(page_id);

CREATE TABLE resources (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL DEFAULT '',  -- stylesheet, script, image, icon, media, preload, manifest
    is_external INTEGER NOT NULL DEFAULT 0,
    status INTEGER,                 -- NULL until a browser has loaded it
    status_text TEXT,
    content_type TEXT,
    content_length INTEGER,
    compress TEXT,
    cdn TEXT
);

CREATE TABLE resource_referrers (
    resource_id INTEGER NOT NULL REFERENCES resources(id),
    page_id INTEGER NOT NULL REFERENCES pages(id),
    PRIMARY KEY (resource_id, page_id)
) WITHOUT ROWID;
CREATE INDEX resource_referrers_page_id ON resource_referrers(page_id);

CREATE TABLE snapshots (
    page_id INTEGER PRIMARY KEY REFERENCES pages(id),
    encoding TEXT NOT NULL,         -- 'zlib': html is zlib-compressed UTF-8
    html BLOB NOT NULL
);

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,             -- crawl, resume
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    status TEXT NOT NULL,           -- running, finished, stopped, failed
    stop_reason TEXT,               -- Scrapy's close reason (finished, max_pages, shutdown, …)
    pages_done INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    error_code TEXT,
    error_detail TEXT
);

CREATE TABLE frontier (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,       -- protocol-agnostic URL key
    url TEXT NOT NULL,
    depth INTEGER NOT NULL,
    mode INTEGER NOT NULL,          -- 0 full crawl, 1 metadata only
    state INTEGER NOT NULL DEFAULT 0  -- 0 pending, 1 leased, 2 done
);
CREATE INDEX frontier_pending ON frontier(depth, id) WHERE state = 0;
CREATE INDEX frontier_leased ON frontier(id) WHERE state = 1;
"""

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

_VIOLATION_DETAILS: Final = """
ALTER TABLE violations ADD COLUMN status TEXT NOT NULL DEFAULT 'violation' /* or needs-review */;
ALTER TABLE violations ADD COLUMN impact TEXT /* the engine's weight: axe's minor … critical */;
ALTER TABLE violations ADD COLUMN tags TEXT /* JSON list of the rule's tags: wcag2aa, … */;
ALTER TABLE violations ADD COLUMN help_url TEXT /* where the rule is explained */;
ALTER TABLE violations ADD COLUMN selector TEXT /* the element at fault, a CSS selector */;
ALTER TABLE violations ADD COLUMN summary TEXT /* why it fails there: a contrast ratio … */;
CREATE INDEX violations_status ON violations(status, validator, rule)
"""
"""What an engine says beside the rule (issue 29; ``Violation``'s optional fields): needs-review
is what it could not decide (axe's incomplete). Rows written before: violations, NULL facts."""
_PAGE_TEMPLATES: Final = """
CREATE TABLE templates (
    id INTEGER PRIMARY KEY,         -- 1, 2, …: most pages first
    signature TEXT NOT NULL,        -- sha1 of the representative's skeleton (sorted paths)
    pages INTEGER NOT NULL,
    example_page_id INTEGER NOT NULL REFERENCES pages(id),  -- the representative page
    paths INTEGER NOT NULL          -- how many structural paths the representative has
);
CREATE TABLE page_templates (
    page_id INTEGER PRIMARY KEY REFERENCES pages(id),
    template_id INTEGER REFERENCES templates(id),  -- NULL: no skeleton, in no cluster
    similarity REAL                 -- Jaccard similarity to the representative, 0..1
);
CREATE INDEX page_templates_template ON page_templates(template_id, page_id);
ALTER TABLE analysis_runs ADD COLUMN scope TEXT /* JSON: --sample, --pages; NULL: every page */
"""
"""Template clusters (issue 29): pages grouped by DOM skeleton; the pages a run analysed."""
MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    ("0001_initial", _INITIAL),
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
    ("0019_violation_details", _VIOLATION_DETAILS),
    ("0020_page_templates", _PAGE_TEMPLATES),
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the applied migrations; raises ``SchemaError`` for a non-archive."""
    try:
        rows = conn.execute("SELECT name FROM migrations ORDER BY name").fetchall()
    except sqlite3.DatabaseError as exc:
        raise SchemaError("not a nitpicker archive") from exc
    return [r[0] for r in rows]


def check_readable(conn: sqlite3.Connection) -> None:
    """Raise ``SchemaError`` unless this version understands every applied migration."""
    known = {name for name, _ in MIGRATIONS}
    unknown = [n for n in applied_migrations(conn) if n not in known]
    if unknown:
        raise SchemaError(f"written by a newer nitpicker (schema {unknown[-1]})")


_NO_CRAWL_INFO: Final = "not a nitpicker archive (it has no crawl information)"


def check_archive(conn: sqlite3.Connection) -> None:
    """Raise ``SchemaError`` unless ``conn`` holds an archive this version can open.

    The one check every opener shares (``query``, the MCP server, ``--resume``, ``--append``):
    the migrations are all known (:func:`check_readable`) and the crawl information row an
    archive is created with is there. A SQLite file with a ``migrations`` table and nothing
    else is not an archive.
    """
    check_readable(conn)
    try:
        row = conn.execute("SELECT count(*) FROM info WHERE id = 1").fetchone()
    except sqlite3.OperationalError as exc:  # no such table (a corrupt file raises on)
        raise SchemaError(_NO_CRAWL_INFO) from exc
    if not row[0]:
        raise SchemaError(_NO_CRAWL_INFO)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet applied, each in its own transaction. Idempotent."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    check_readable(conn)
    done = set(applied_migrations(conn))
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN")
        try:
            for statement in sql.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO migrations(name, applied_at) VALUES (?, ?)", (name, _now()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(name)
    return applied
