"""The content checks' migrations (issue 30, items 1–3): each page's fragment targets and main
content, the near-duplicate clusters, the soft-404 probes: the SQL of each, in the order
:data:`~nitpicker.archive.migrations.MIGRATIONS` applies them."""

from __future__ import annotations

from typing import Final

__all__ = ["CONTENT_SIGNATURES", "PAGE_CONTENT", "SOFT404_PROBES"]

PAGE_CONTENT: Final = """
CREATE TABLE page_content (       -- what an in-scope HTML page's links can point at, read once
    page_id INTEGER PRIMARY KEY REFERENCES pages(id),
    ids INTEGER NOT NULL            -- its fragment targets recorded (page_fragment_ids)
);

CREATE TABLE page_fragment_ids (  -- each element id and <a name> of a page: a #fragment target
    page_id INTEGER NOT NULL REFERENCES pages(id),
    name TEXT NOT NULL,             -- as written (case-sensitive, as a browser matches it)
    PRIMARY KEY (page_id, name)
) WITHOUT ROWID
"""
"""Fragment links checked against the page as read (issue 30, item 1): the rendered DOM when
the browser rendered it. A page with no ``page_content`` row was not read (crawled before this
migration, or not an in-scope HTML page): its fragments are not judged."""

CONTENT_SIGNATURES: Final = """
-- where the main content was taken from: main, div#content; '' the body (no element matched)
ALTER TABLE page_content ADD COLUMN main TEXT;
-- the main content's tokens (words; a Han or kana character is one)
ALTER TABLE page_content ADD COLUMN words INTEGER;
-- 64-bit hash of its normalised tokens (nitpicker.policy.minhash); NULL: no text
ALTER TABLE page_content ADD COLUMN content_hash INTEGER;
-- its MinHash signature: 128 x uint32 little-endian (512 bytes); NULL: no text
ALTER TABLE page_content ADD COLUMN minhash BLOB;
CREATE INDEX page_content_hash ON page_content(content_hash) WHERE content_hash IS NOT NULL;

CREATE TABLE content_clusters (   -- near-duplicate clusters, computed with the site checks
    page_id INTEGER PRIMARY KEY REFERENCES pages(id),
    cluster_id INTEGER NOT NULL,    -- the cluster's first page (its smallest page id)
    similarity REAL NOT NULL        -- estimated Jaccard similarity to that page, 0..1
);
CREATE INDEX content_clusters_cluster ON content_clusters(cluster_id, page_id)
"""
"""Near-duplicate content (issue 30, item 3): each page's main content as a content hash
(exact duplicates, in SQL) and a MinHash signature; the clusters of pages whose signatures
are alike, by LSH banding after the crawl (:mod:`nitpicker.archive.content_clusters`)."""

SOFT404_PROBES: Final = """
CREATE TABLE soft404_probes (     -- one guaranteed-missing URL fetched per directory of pages
    directory TEXT PRIMARY KEY,     -- https://host/path/ of the in-scope pages it stands for
    url TEXT NOT NULL,              -- the probe: the directory and a random token
    checked_at TEXT NOT NULL,       -- ISO 8601, UTC
    status INTEGER,                 -- its HTTP status after redirects; NULL: no answer
    final_url TEXT,                 -- where its redirects ended; NULL: no answer
    title TEXT,                     -- an HTML answer's title; NULL: none
    words INTEGER,                  -- its main content's tokens
    content_hash INTEGER,           -- as page_content's (nitpicker.policy.minhash)
    minhash BLOB,                   -- as page_content's
    error TEXT                      -- why there is no answer; NULL: answered
) WITHOUT ROWID
"""
"""Soft 404s by probe (issue 30, item 2): never pages of the site (no ``pages`` row, no
frontier row); ``content/soft-404`` compares the pages with the probes that answered 200."""
