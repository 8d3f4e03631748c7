"""The Page List sheet (SPEC §8.2): one row per in-scope HTML page that was a crawl target.

Cell rules: the title without its parent directory index page's title, path1…path10,
link and bad-link counts with the bad links in a note, the internal referrers with their URLs
in a note, the URLs redirected to the page. Red: bad-link counts above 0, no language, fewer
than 2 referrers, a suspicious path segment or title, ``http:``, a status outside 200–399.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from nitpicker.query._common import INTERNAL_HTML
from nitpicker.query.report.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    Row,
    SheetSpec,
    is_error_status,
    note_of,
    stream,
)
from nitpicker.query.report.plugin_columns import add_plugin_cells, plugin_columns

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["HEADERS", "MAX_PATHS", "is_bad_link", "page_list_count", "page_list_rows", "page_list_spec",
           "path_cells", "strip_parent_title"]

MAX_PATHS: Final = 10

_META_HEADERS: Final = (
    "description", "keywords", "noindex", "nofollow", "noarchive", "canonical", "alternate",
    "twitter:card", "og:site_name", "og:url", "og:title", "og:description", "og:type",
    "og:image",
)

HEADERS: Final = (
    "Title", "Full Title", "URL", "Protocol", "Domain",
    *(f"path{n}" for n in range(1, MAX_PATHS + 1)),
    "Status Code", "Redirect From", "Language", "Internal Links", "Internal Bad Links",
    "External Links", "External Bad Links", "Internal Referrers", *_META_HEADERS,
)

_PATH_COLUMN: Final = HEADERS.index("path1")

_SUSPICIOUS_PATH: Final = re.compile(r"(^/_|_$|_copy|-copy|copy_|copy-|dummy)", re.IGNORECASE)
_ERROR_TITLE: Final = re.compile(r"(^| )(401|403|404|500|501|502|503)", re.IGNORECASE)

_PAGES: Final = f"""SELECT p.id, p.url, p.title, p.status, p.lang, p.description, p.keywords,
    p.noindex, p.nofollow, p.noarchive, p.canonical, p.alternate, p.twitter_card,
    p.og_site_name, p.og_url, p.og_title, p.og_description, p.og_type, p.og_image
    FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1
    ORDER BY p."order" IS NULL, p."order", p.url"""

_COUNT: Final = f"SELECT count(*) FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"

_URLS: Final = f"SELECT p.url FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"

_REDIRECT_SOURCES: Final = "SELECT url FROM pages WHERE redirect_dest_id = ? ORDER BY url"

_ANCHORS: Final = """SELECT a.text, h.url, h.is_external, h.is_skipped,
    coalesce(d.url, h.url), coalesce(d.status, h.status), coalesce(d.status_text, h.status_text)
    FROM anchors a JOIN pages h ON h.id = a.href_id LEFT JOIN pages d ON d.id = h.redirect_dest_id
    WHERE a.page_id = ? ORDER BY a.id"""

_REFERRERS: Final = """SELECT DISTINCT s.url FROM anchors a CROSS JOIN pages s ON s.id = a.page_id
    WHERE a.href_id IN (SELECT ?1 UNION ALL SELECT id FROM pages WHERE redirect_dest_id = ?1)
      AND s.id != ?1 AND s.is_external = 0
    ORDER BY s.url LIMIT ?2"""

_REFERRER_COUNT: Final = """SELECT count(DISTINCT a.page_id) FROM anchors a
    CROSS JOIN pages s ON s.id = a.page_id
    WHERE a.href_id IN (SELECT ?1 UNION ALL SELECT id FROM pages WHERE redirect_dest_id = ?1)
      AND s.id != ?1 AND s.is_external = 0"""

_TITLE: Final = "SELECT title FROM pages WHERE url = ?"

# CROSS JOIN keeps SQLite's join order (anchors first, found by target): left to itself the
# planner walks every in-scope page in URL order to satisfy the ORDER BY, per page listed.


def page_list_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute(_COUNT).fetchone()[0])


def page_list_spec(conn: sqlite3.Connection) -> SheetSpec:
    """Frozen first row and column; the path columns deeper than any page are hidden."""
    deepest = 0
    for chunk in stream(conn, _URLS):
        for (url,) in chunk:
            deepest = max(deepest, len(_segments(url)))
            if deepest >= MAX_PATHS:
                break
    hidden = tuple(range(_PATH_COLUMN + deepest, _PATH_COLUMN + MAX_PATHS))
    headers = (*HEADERS, *(column.title for column in plugin_columns(conn)))
    return SheetSpec("Page List", headers, freeze_rows=1, freeze_cols=1, hidden_columns=hidden,
                     note_columns=tuple(range(len(HEADERS), len(headers))))


def _segments(url: str) -> list[str]:
    path = urlsplit(url).path
    return [s for s in path.split("/") if s]


def path_cells(url: str) -> list[Cell]:
    """path1…path10: ``/<decoded segment>``, the query on the last one; red when suspicious."""
    parts = urlsplit(url)
    segments = [f"/{unquote(s)}" for s in _segments(url)][:MAX_PATHS]
    if parts.query and segments:
        segments[-1] += f"?{parts.query}"
    elif parts.query:
        segments = [f"/?{parts.query}"]
    cells = [Cell(s, error=bool(_SUSPICIOUS_PATH.search(s))) for s in segments]
    return cells + [Cell(None)] * (MAX_PATHS - len(cells))


def parent_index_url(url: str) -> str | None:
    """The URL of the directory index above the page (``/a/b/c`` and ``/a/b/`` → ``/a/``…)."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if path == "/":
        return None
    trimmed = path.removesuffix("/")
    parent = trimmed[: trimmed.rfind("/") + 1]
    return f"{parts.scheme}://{parts.netloc}{parent}"


def strip_parent_title(title: str, parent_title: str | None) -> str:
    """The title minus the parent index page's title and the ``|``/``｜`` around it."""
    if not parent_title or parent_title == title or parent_title not in title:
        return title
    rest = title.replace(parent_title, "").strip(" \t|｜")
    return rest or title


def is_bad_link(status: int | None, skipped: int) -> bool:
    """A bad link: no status or a fetch error, or 400 and above but 401; skipped links aren't."""
    if skipped:
        return False
    return status is None or status < 0 or (status >= 400 and status != 401)


def page_list_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS
                   ) -> Iterator[list[Row]]:
    """The Page List rows, ``chunk_rows`` at a time (the plugin columns last)."""
    title_of = _title_lookup(conn)
    columns = plugin_columns(conn)
    for chunk in stream(conn, _PAGES, (), chunk_rows):
        rows = [_row(conn, page, title_of) for page in chunk]
        if columns:
            add_plugin_cells(conn, columns, [page[0] for page in chunk], rows)
        yield rows


def _title_lookup(conn: sqlite3.Connection) -> Callable[[str], str | None]:
    @lru_cache(maxsize=4096)
    def title_of(url: str) -> str | None:
        row = conn.execute(_TITLE, (url,)).fetchone()
        return str(row[0]) if row else None
    return title_of


def _row(conn: sqlite3.Connection, page: tuple[Any, ...],
         title_of: Callable[[str], str | None]) -> Row:
    page_id, url, title, status, lang, *meta = page
    parts = urlsplit(url)
    parent = parent_index_url(url)
    short = strip_parent_title(title, title_of(parent) if parent else None)
    sources = [r[0] for r in conn.execute(_REDIRECT_SOURCES, (page_id,))]
    links = _link_cells(conn, page_id)
    referrers = [r[0] for r in conn.execute(_REFERRERS, (page_id, NOTE_LINES))]
    referrer_count = int(conn.execute(_REFERRER_COUNT, (page_id,)).fetchone()[0])
    code = status if isinstance(status, int) else -1
    protocol = f"{parts.scheme}:"
    row: Row = [
        Cell(short, note=f"Full-title:\n{title}", error=bool(_ERROR_TITLE.search(title))),
        Cell(title),
        Cell(url, link=url),
        Cell(protocol, error=protocol == "http:"),
        Cell(parts.hostname or ""),
        *path_cells(url),
        Cell(code, error=is_error_status(code)),
        Cell(len(sources), note=note_of(sources)),
        Cell(lang or "N/A", error=not lang),
        *links,
        Cell(referrer_count, note=note_of(referrers, referrer_count), error=referrer_count < 2),
    ]
    for header, value in zip(_META_HEADERS, meta, strict=True):
        if header in ("noindex", "nofollow", "noarchive"):
            row.append(Cell("true" if value else "false"))
        elif header == "og:url" and value:
            row.append(Cell(str(value), link=str(value)))
        else:
            row.append(Cell(str(value) if value is not None else ""))
    return row


def _link_cells(conn: sqlite3.Connection, page_id: object) -> list[Cell]:
    """Internal Links, Internal Bad Links, External Links, External Bad Links."""
    counts = {False: 0, True: 0}
    bad: dict[bool, list[str]] = {False: [], True: []}
    for text, href, external, skipped, final, status, status_text in conn.execute(
            _ANCHORS, (page_id,)):
        side = bool(external)
        counts[side] += 1
        if is_bad_link(status, skipped):
            bad[side].append(f"{text} ({status if status is not None else ''} "
                             f"{status_text or ''} {href} => {final})")
    return [
        Cell(counts[False]),
        Cell(len(bad[False]), note=note_of(bad[False]), error=bool(bad[False])),
        Cell(counts[True]),
        Cell(len(bad[True]), note=note_of(bad[True]), error=bool(bad[True])),
    ]
