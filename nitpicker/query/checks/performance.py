"""Performance: internal URLs slow to answer, and HTML pages too large.

Thresholds: ``SLOW_RESPONSE_MS`` (the server's answer, headers received, ``pages.
response_time_ms``) and ``LARGE_PAGE_BYTES`` (the HTML document's size).
"""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import PAGE, Check

__all__ = ["CHECKS", "LARGE_PAGE_BYTES", "SLOW_RESPONSE_MS"]

SLOW_RESPONSE_MS: Final = 1000
LARGE_PAGE_BYTES: Final = 1024 * 1024

CHECKS: Final = (
    Check(
        id="performance/slow-response",
        title="Slow responses",
        explanation=(
            f"These internal URLs took more than {SLOW_RESPONSE_MS} ms to answer (from the "
            "request to the response's headers). Every visitor waits that long before the "
            "page even starts to load, and search engines crawl slow sites less."),
        fix=(
            "Find what the server does for these URLs (database queries, uncached rendering, "
            "an overloaded host); cache the pages or their parts. A crawl with many parallel "
            "requests can slow a small server down: compare with a gentler crawl."),
        priority="medium", category="performance",
        sql="SELECT p.id AS page_id, p.url AS url, NULL AS element,"
            " printf('Answered in %d ms', p.response_time_ms) AS message FROM pages p"
            " WHERE p.is_external = 0 AND p.response_time_ms > :slow",
        params={"slow": SLOW_RESPONSE_MS},
    ),
    Check(
        id="performance/large-page",
        title="Large HTML pages",
        explanation=(
            f"The HTML document alone is larger than {LARGE_PAGE_BYTES // 1024} KiB, before "
            "its images, styles and scripts: slow on mobile connections, and search engines "
            "may stop reading it."),
        fix=(
            "Look for what bloats the markup: inlined images or data (base64), huge inline "
            "scripts or styles, very long lists that could be paginated."),
        priority="low", category="performance",
        sql=f"SELECT p.id AS page_id, p.url AS url, NULL AS element,"
            f" printf('The HTML is %d KiB', p.content_length / 1024) AS message FROM pages p"
            f" WHERE {PAGE} AND p.content_length > :large",
        params={"large": LARGE_PAGE_BYTES},
    ),
)
