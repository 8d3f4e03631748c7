"""The crawl's own record: where the trap cap stopped following pages."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import Check

__all__ = ["CHECKS"]

_TRAP_CAP_SQL: Final = """SELECT (SELECT id FROM pages WHERE url = t.first_url) AS page_id,
        t.first_url AS url, t.parent_path || ' ' || t.signature AS element,
        printf('The trap cap stopped following links under %s after %d pages with one title'
               || ' and description (last: %s)', t.parent_path, t.count, t.last_url) AS message
    FROM trap_events t
    WHERE t.id = (SELECT min(u.id) FROM trap_events u WHERE u.signature = t.signature
                  AND u.parent_path = t.parent_path)"""
"""One finding per signature and directory (a resumed crawl may fire it again)."""

CHECKS: Final = (
    Check(
        id="crawl/trap-cap",
        title="Crawler traps capped",
        explanation=(
            "The crawl met many pages under one directory that share their title and "
            "description (a calendar, a faceted search, session ids in URLs) and stopped "
            "following their links (--dedupe-cap). They are either a trap that makes crawlers "
            "(search engines included) fetch endless pages, or real pages whose metadata is "
            "all the same; either way, pages past the cap were not audited."),
        fix=(
            "Open the first URL and its siblings: if they are endless variations, stop linking "
            "them (nofollow, robots.txt, fewer parameters); if they are real pages, give each "
            "its own title and description, or raise --dedupe-cap and crawl again."),
        priority="medium", category="crawl", sql=_TRAP_CAP_SQL,
    ),
)
