"""The content checks' migrations (issue 30, items 1–3): each page's fragment targets and main
content, the near-duplicate clusters, the soft-404 probes: the SQL of each, in the order
:data:`~nitpicker.archive.migrations.MIGRATIONS` applies them."""

from __future__ import annotations

from typing import Final

__all__ = ["PAGE_CONTENT"]

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
