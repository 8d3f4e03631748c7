"""The SQL :class:`~nitpicker.archive.page_recorder.PageRecorder` writes a page's rows with
(values always as parameters; the table names of the ``*_CHILDREN`` tuples are constants,
formatted into statements)."""

from __future__ import annotations

__all__ = [
    "FETCHED_CHILDREN", "FORGET_JSON_LD_TYPES", "FORGET_PAGE_FACTS", "LINK_CONSOLE_MESSAGE", "MARK_INVENTORY",
    "MARK_SITEMAP", "RECORD_CONSOLE_MESSAGE", "RECORD_HOP", "RECORD_IMAGE", "RECORD_IMAGES",
    "RECORD_PAGE", "RECORD_RESOURCES",
    "REFER_RESOURCES",
    "REPLACED_CHILDREN", "REPOINT", "SCRAPED",
]

RECORD_PAGE = """INSERT INTO pages(url, scraped, is_target, is_external, depth, status,
    status_text, content_type, content_length, lang, title, description, keywords, noindex,
    nofollow, noarchive, canonical, alternate, og_type, og_title, og_site_name,
    og_description, og_url, og_image, twitter_card, is_skipped, skip_reason, fetched_at,
    links_capped, response_time_ms, charset, h1_count, canonical_relative, untried)
VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET scraped = 1, redirect_dest_id = NULL, redirect_kind = NULL,
    redirect_next = NULL, is_target = excluded.is_target, is_external = excluded.is_external,
    depth = coalesce(pages.depth, excluded.depth), status = excluded.status,
    status_text = excluded.status_text, content_type = excluded.content_type,
    content_length = excluded.content_length, lang = excluded.lang,
    title = excluded.title, description = excluded.description,
    keywords = excluded.keywords, noindex = excluded.noindex,
    nofollow = excluded.nofollow, noarchive = excluded.noarchive,
    canonical = excluded.canonical, alternate = excluded.alternate,
    og_type = excluded.og_type, og_title = excluded.og_title,
    og_site_name = excluded.og_site_name, og_description = excluded.og_description,
    og_url = excluded.og_url, og_image = excluded.og_image,
    twitter_card = excluded.twitter_card, is_skipped = excluded.is_skipped,
    skip_reason = excluded.skip_reason, fetched_at = excluded.fetched_at,
    links_capped = excluded.links_capped, response_time_ms = excluded.response_time_ms,
    charset = excluded.charset, h1_count = excluded.h1_count,
    canonical_relative = excluded.canonical_relative, untried = excluded.untried RETURNING id"""

_IMAGE_COLUMNS = ("page_id, src, current_src, alt, width, height, natural_width,"
                  " natural_height, is_lazy, viewport_width, source_code, file_size")

RECORD_IMAGES = (f"INSERT INTO images({_IMAGE_COLUMNS}) SELECT ?, value ->> 0, value ->> 1,"
                 " value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7,"
                 " value ->> 8, value ->> 9, value ->> 10 FROM json_each(?) ORDER BY key")
"""A page's images from one JSON array of rows (``RECORD_IMAGE``'s values but the page id),
in the array's order: one statement, one hand-back of the GIL, not one a row."""

RECORD_IMAGE = f"INSERT INTO images({_IMAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
"""One image row: for a page whose widths or heights are not finite numbers (a hostile
page's), which JSON cannot carry (SQLite stores NaN as NULL and keeps an infinity)."""

RECORD_HOP = """INSERT INTO pages(url, scraped, is_external, depth, status, redirect_dest_id,
    redirect_kind, redirect_next, fetched_at) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET scraped = 1, status = excluded.status,
    redirect_dest_id = excluded.redirect_dest_id, redirect_kind = excluded.redirect_kind,
    redirect_next = excluded.redirect_next
RETURNING id, content_type"""
"""A hop's row, and its content type: not NULL when the URL was recorded as a page before
(fetched again, by a recrawl, it now redirects): :data:`FORGET_PAGE_FACTS` then."""

FORGET_PAGE_FACTS = """UPDATE pages SET is_target = 0, content_type = NULL, content_length = NULL,
    lang = '', title = '', description = '', keywords = '', noindex = 0, nofollow = 0,
    noarchive = 0, canonical = '', alternate = '', og_type = '', og_title = '',
    og_site_name = '', og_description = '', og_url = '', og_image = '', twitter_card = '',
    links_capped = 0, charset = NULL, h1_count = NULL, canonical_relative = NULL,
    http_form_action = NULL
WHERE id = ?"""
"""A page that is a redirect now keeps none of the facts it had as a page (its child rows,
:data:`FETCHED_CHILDREN`, go too)."""

REPOINT = "UPDATE pages SET redirect_dest_id = ? WHERE redirect_dest_id = ? AND id != ?"
"""Sources that pointed at a URL now known to redirect: they point where it leads."""

RECORD_RESOURCES = (
    "INSERT INTO resources(url, kind, is_external, status, status_text, content_type,"
    " content_length, compress, cdn)"
    " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,"
    " value ->> 6, value ->> 7, value ->> 8 FROM json_each(?) WHERE true"  # (an upsert's SELECT)
    " ON CONFLICT(url) DO UPDATE SET"
    " kind = CASE WHEN resources.kind = '' THEN excluded.kind ELSE resources.kind END,"
    " status = coalesce(excluded.status, resources.status),"
    " status_text = coalesce(excluded.status_text, resources.status_text),"
    " content_type = coalesce(excluded.content_type, resources.content_type),"
    " content_length = coalesce(excluded.content_length, resources.content_length),"
    " compress = coalesce(excluded.compress, resources.compress),"
    " cdn = coalesce(excluded.cdn, resources.cdn)"
)
"""A page's resources, a JSON array of their rows: new ones inserted, known ones given what
they lacked."""

REFER_RESOURCES = (
    "INSERT OR IGNORE INTO resource_referrers(resource_id, page_id)"
    " SELECT r.id, ? FROM json_each(?) AS j JOIN resources AS r ON r.url = j.value"
)
"""The page (the first parameter) refers to each resource of a JSON array of URLs."""

RECORD_CONSOLE_MESSAGE = (
    'INSERT INTO console_messages(digest, kind, level, text, source_url, line, "column")'
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(digest) DO NOTHING"
)
LINK_CONSOLE_MESSAGE = (
    "INSERT OR IGNORE INTO page_console_messages(page_id, message_id, position, count)"
    " SELECT ?, id, ?, ? FROM console_messages WHERE digest = ?"
)
FORGET_JSON_LD_TYPES = (
    "DELETE FROM json_ld_types WHERE block_id IN"
    " (SELECT id FROM json_ld_blocks WHERE page_id = ?)"
)

MARK_SITEMAP = "UPDATE pages SET in_sitemap = 1 WHERE id = ?"
MARK_INVENTORY = "UPDATE pages SET in_inventory = 1 WHERE id = ?"

FETCHED_CHILDREN = ("anchors", "images", "response_headers", "snapshots", "resource_referrers",
                     "page_console_messages", "json_ld_blocks", "hreflang_links",
                     "structured_items", "structured_data_errors", "extracted_values",
                     "page_content", "page_fragment_ids")
"""The child tables of a fetched page (constant names: formatted into statements)."""

REPLACED_CHILDREN = ("response_headers", "anchors", "images", "json_ld_blocks",
                      "page_console_messages", "hreflang_links", "structured_items",
                      "structured_data_errors", "extracted_values", "page_content",
                      "page_fragment_ids")
"""The child tables a fetch of the page again replaces (the snapshot is replaced by its own
insert, resource referrers are kept)."""

SCRAPED = "SELECT scraped FROM pages WHERE url = ?"
