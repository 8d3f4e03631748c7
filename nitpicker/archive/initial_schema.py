"""Migration ``0001_initial``: the tables every archive starts with, as commented SQL.

The later migrations (:mod:`nitpicker.archive.migrations`) add to it; what a column means is
said here, beside it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["INITIAL"]

INITIAL: Final = """
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
