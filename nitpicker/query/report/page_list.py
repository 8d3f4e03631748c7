"""The Page List sheet (SPEC §8.2): one row per in-scope HTML page that was a crawl target.

Cell rules: the title without its parent directory index page's title, path1…path10,
link and bad-link counts with the bad links in a note, the internal referrers with their URLs
in a note, the URLs redirected to the page. Red: bad-link counts above 0, no language, fewer
than 2 referrers, a suspicious path segment or title, ``http:``, a status outside 200–399.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import SplitResult, unquote, urlsplit

from nitpicker.query._common import INTERNAL_HTML
from nitpicker.query.report.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    CellCache,
    Row,
    SheetSpec,
    is_error_status,
    joined_note,
    note_of,
    stream,
)
from nitpicker.query.report.plugin_columns import add_plugin_cells, plugin_columns

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["HEADERS", "MAX_PATHS", "is_bad_link", "page_list_count", "page_list_rows", "page_list_spec",
           "path_cache", "path_cells", "strip_parent_title"]

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

_BAD: Final = """NOT h.is_skipped AND (coalesce(d.status, h.status) IS NULL
    OR coalesce(d.status, h.status) < 0
    OR (coalesce(d.status, h.status) >= 400 AND coalesce(d.status, h.status) != 401))"""
"""SQL twin of :func:`is_bad_link` over an anchor's target ``h`` and its redirect end ``d``."""

_BAD_LINE: Final = """a.text || ' (' || coalesce(coalesce(d.status, h.status), '') || ' '
    || coalesce(coalesce(d.status_text, h.status_text), '') || ' ' || h.url || ' => '
    || coalesce(d.url, h.url) || ')'"""

_PAGES: Final = f"""SELECT p.id, p.url, p.title, p.status, p.lang,
    (SELECT count(*) FROM pages r WHERE r.redirect_dest_id = p.id),
    (SELECT group_concat(url, char(10)) FROM (SELECT r.url FROM pages r
        WHERE r.redirect_dest_id = p.id ORDER BY r.url LIMIT {NOTE_LINES})),
    (SELECT json_array(count(*) FILTER (WHERE NOT ext), count(*) FILTER (WHERE ext),
            json_group_array(line) FILTER (WHERE line IS NOT NULL AND NOT ext),
            json_group_array(line) FILTER (WHERE line IS NOT NULL AND ext))
        FROM (SELECT h.is_external AS ext, CASE WHEN {_BAD} THEN {_BAD_LINE} END AS line
              FROM anchors a JOIN pages h ON h.id = a.href_id
              LEFT JOIN pages d ON d.id = h.redirect_dest_id
              WHERE a.page_id = p.id ORDER BY a.id)),
    (SELECT count(DISTINCT a.page_id) FROM anchors a CROSS JOIN pages s ON s.id = a.page_id
        WHERE a.href_id IN (SELECT p.id UNION ALL SELECT id FROM pages
                            WHERE redirect_dest_id = p.id)
          AND s.id != p.id AND s.is_external = 0),
    (SELECT group_concat(url, char(10)) FROM (SELECT DISTINCT s.url AS url FROM anchors a
        CROSS JOIN pages s ON s.id = a.page_id
        WHERE a.href_id IN (SELECT p.id UNION ALL SELECT id FROM pages
                            WHERE redirect_dest_id = p.id)
          AND s.id != p.id AND s.is_external = 0
        ORDER BY s.url LIMIT {NOTE_LINES})),
    p.description, p.keywords,
    p.noindex, p.nofollow, p.noarchive, p.canonical, p.alternate, p.twitter_card,
    p.og_site_name, p.og_url, p.og_title, p.og_description, p.og_type, p.og_image
    FROM (SELECT p.id FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1
          ORDER BY p."order" IS NULL, p."order", p.url LIMIT -1) listed
    CROSS JOIN pages p ON p.id = listed.id"""
"""One row per listed page with everything its cells need, worked out by SQLite in the same
statement (no query a row from Python): the redirect sources (count, the first lines), the
anchors (internal and external counts, the bad ones as note lines), the internal referrers
(count, the first URLs).

Only the pages' ids are sorted (``listed``, which ``LIMIT -1`` keeps a subquery walked in its
order rather than folded into a join that drops it): the rest of a row is worked out as it
streams, not held in a sorter with all the notes before the first row comes out."""

_COUNT: Final = f"SELECT count(*) FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"

_URLS: Final = f"SELECT p.url FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"

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


def path_cells(url: str, cache: CellCache | None = None) -> list[Cell]:
    """path1…path10: ``/<decoded segment>``, the query on the last one; red when suspicious.

    ``cache``: a :func:`path_cache`, one shared cell a segment (the builder's)."""
    return _path_cells(urlsplit(url), cache)


def _path_cells(parts: SplitResult, cache: CellCache | None) -> list[Cell]:
    segments = [f"/{unquote(s)}" for s in parts.path.split("/") if s][:MAX_PATHS]
    if parts.query and segments:
        segments[-1] += f"?{parts.query}"
    elif parts.query:
        segments = [f"/?{parts.query}"]
    cells = ([cache[s] for s in segments] if cache is not None
             else [Cell(s, error=_is_suspicious(s)) for s in segments])
    return cells + [_NONE] * (MAX_PATHS - len(cells))


def _is_suspicious(segment: str) -> bool:
    return bool(_SUSPICIOUS_PATH.search(segment))


def path_cache() -> CellCache:
    """One shared path cell a segment, red when suspicious."""
    return CellCache(_is_suspicious)


def parent_index_url(url: str) -> str | None:
    """The URL of the directory index above the page (``/a/b/c`` and ``/a/b/`` → ``/a/``…)."""
    return _parent_index(urlsplit(url))


def _parent_index(parts: SplitResult) -> str | None:
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
    cells = _Cells()
    for chunk in stream(conn, _PAGES, (), chunk_rows):
        rows = [_row(page, title_of, cells) for page in chunk]
        if columns:
            add_plugin_cells(conn, columns, [page[0] for page in chunk], rows)
        yield rows


def _title_lookup(conn: sqlite3.Connection) -> Callable[[str], str | None]:
    @lru_cache(maxsize=4096)
    def title_of(url: str) -> str | None:
        row = conn.execute(_TITLE, (url,)).fetchone()
        return str(row[0]) if row else None
    return title_of


class _Cells:
    """The Page List's shared cells of repeated values, for one run of the builder."""

    def __init__(self) -> None:
        self.paths = path_cache()
        self.codes = CellCache(is_error_status)
        self.protocols = CellCache(lambda protocol: protocol == "http:")
        self.texts = CellCache()


_NONE: Final = Cell(None)
_EMPTY: Final = Cell("")
_NO_LANGUAGE: Final = Cell("N/A", error=True)
_TRUE: Final = Cell("true")
_FALSE: Final = Cell("false")


def _row(page: tuple[Any, ...], title_of: Callable[[str], str | None], cells: _Cells) -> Row:
    (_page_id, url, title, status, lang, source_count, sources, anchors, referrer_count,
     referrers, *meta) = page
    parts = urlsplit(url)
    parent = _parent_index(parts)
    short = strip_parent_title(title, title_of(parent) if parent else None)
    texts = cells.texts
    row: Row = [
        Cell(short, note=f"Full-title:\n{title}", error=bool(_ERROR_TITLE.search(title))),
        Cell(title),
        Cell(url, link=url),
        cells.protocols[f"{parts.scheme}:"],
        texts[parts.hostname or ""],
        *_path_cells(parts, cells.paths),
        cells.codes[status if isinstance(status, int) else -1],
        Cell(source_count, note=joined_note(sources, source_count)),
        texts[lang] if lang else _NO_LANGUAGE,
        *_link_cells(anchors),
        Cell(referrer_count, note=joined_note(referrers, referrer_count),
             error=referrer_count < 2),
    ]
    (description, keywords, noindex, nofollow, noarchive, canonical, alternate, twitter_card,
     og_site_name, og_url, og_title, og_description, og_type, og_image) = meta
    row += (
        _text(texts, description), _text(texts, keywords),
        _TRUE if noindex else _FALSE, _TRUE if nofollow else _FALSE,
        _TRUE if noarchive else _FALSE,
        _text(texts, canonical), _text(texts, alternate), _text(texts, twitter_card),
        _text(texts, og_site_name),
        Cell(str(og_url), link=str(og_url)) if og_url else _text(texts, og_url),
        _text(texts, og_title), _text(texts, og_description), _text(texts, og_type),
        _text(texts, og_image),
    )
    return row


def _text(texts: CellCache, value: object) -> Cell:
    """A meta column's text cell (``""`` for none)."""
    return texts[str(value)] if value is not None and value != "" else _EMPTY


def _link_cells(anchors: str) -> list[Cell]:
    """Internal Links, Internal Bad Links, External Links, External Bad Links."""
    internal, external, internal_bad, external_bad = json.loads(anchors)
    return [
        Cell(internal),
        Cell(len(internal_bad), note=note_of(internal_bad), error=bool(internal_bad)),
        Cell(external),
        Cell(len(external_bad), note=note_of(external_bad), error=bool(external_bad)),
    ]
