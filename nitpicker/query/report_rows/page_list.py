"""The Page List sheet (SPEC §8.2): one row per in-scope HTML page that was a crawl target.

Cell rules: the title without its parent directory index page's title, path1…path10,
link and bad-link counts with the bad links in a note, the internal referrers with their URLs
in a note, the URLs redirected to the page. Red: bad-link counts above 0, no language, fewer
than 2 referrers, a suspicious path segment or title, ``http:``, a status outside 200–399.
"""

from __future__ import annotations

import json
import json.scanner
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import SplitResult, unquote, urlsplit

from nitpicker.query._common import INTERNAL_HTML, listed_filter
from nitpicker.query.report_rows.cells import (
    CHUNK_ROWS,
    NOTE_LINES,
    Cell,
    Chunk,
    Mark,
    SheetSpec,
    Value,
    is_error_status,
    joined_note,
    note_of,
    stream,
)
from nitpicker.query.report_rows.page_columns import add_page_columns, page_column_titles
from nitpicker.query.report_rows.plugin_columns import add_plugin_values, plugin_columns

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = ["HEADERS", "MAX_PATHS", "is_bad_link", "page_list_count", "page_list_rows",
           "page_list_spec", "path_cells", "split_url", "strip_parent_title"]

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

def _pages_sql(condition: str) -> str:
    """One row a Page List page with everything its cells need, worked out by SQLite in the same
    statement (no query a row from Python): the redirect sources (count, the first lines), the
    anchors (internal and external counts, the bad ones as note lines), the internal referrers
    (count, the first URLs); then og:url (its link) and the meta columns' cells as they are shown
    (text, ``""`` for none; ``true``/``false``).

    Only the pages' ids are sorted (``listed``, which ``LIMIT -1`` keeps a subquery walked in its
    order rather than folded into a join that drops it): the rest of a row is worked out as it
    streams, not held in a sorter with all the notes before the first row comes out.

    ``condition``: SQL added to the pages' own conditions (``report --urls``)."""
    return f"""SELECT p.id, p.url, p.title, p.status, p.lang,
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
    p.og_url, coalesce(p.description, ''), coalesce(p.keywords, ''),
    CASE WHEN p.noindex THEN 'true' ELSE 'false' END,
    CASE WHEN p.nofollow THEN 'true' ELSE 'false' END,
    CASE WHEN p.noarchive THEN 'true' ELSE 'false' END,
    coalesce(p.canonical, ''), coalesce(p.alternate, ''), coalesce(p.twitter_card, ''),
    coalesce(p.og_site_name, ''), coalesce(p.og_url, ''), coalesce(p.og_title, ''),
    coalesce(p.og_description, ''), coalesce(p.og_type, ''), coalesce(p.og_image, '')
    FROM (SELECT p.id FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1{condition}
          ORDER BY p."order" IS NULL, p."order", p.url LIMIT -1) listed
    CROSS JOIN pages p ON p.id = listed.id"""


_PAGES: Final = _pages_sql("")
_PAGES_LISTED: Final = _pages_sql(f" AND {listed_filter('p.id')}")
"""The same, of the listed pages only (``report --urls``)."""

_COUNT: Final = f"SELECT count(*) FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"
_COUNT_LISTED: Final = f"{_COUNT} AND {listed_filter('p.id')}"

_URLS: Final = f"SELECT p.url FROM pages p WHERE {INTERNAL_HTML} AND +p.is_target = 1"
_URLS_LISTED: Final = f"{_URLS} AND {listed_filter('p.id')}"

_TITLE: Final = "SELECT title FROM pages WHERE url = ?"

# CROSS JOIN keeps SQLite's join order (anchors first, found by target): left to itself the
# planner walks every in-scope page in URL order to satisfy the ORDER BY, per page listed.


def page_list_count(conn: sqlite3.Connection, *, listed: bool = False) -> int:
    return int(conn.execute(_COUNT_LISTED if listed else _COUNT).fetchone()[0])


def page_list_spec(conn: sqlite3.Connection, *, listed: bool = False) -> SheetSpec:
    """Frozen first row and column; the path columns deeper than any page are hidden."""
    deepest = 0
    for chunk in stream(conn, _URLS_LISTED if listed else _URLS):
        for (url,) in chunk:
            deepest = max(deepest, len(_segments_of(split_url(url)[0])))
            if deepest >= MAX_PATHS:
                break
    hidden = tuple(range(_PATH_COLUMN + deepest, _PATH_COLUMN + MAX_PATHS))
    own = len(HEADERS) + len(page_column_titles(conn))
    headers = (*HEADERS, *page_column_titles(conn),
               *(column.title for column in plugin_columns(conn)))
    return SheetSpec("Page List", headers, freeze_rows=1, freeze_cols=1, hidden_columns=hidden,
                     note_columns=tuple(range(own, len(headers))),
                     url_columns=(HEADERS.index("canonical"),))


def path_cells(url: str) -> list[Cell]:
    """path1…path10 as the builder makes them: ``/<decoded segment>``, the query on the last
    one; red when suspicious."""
    segments = _segments_of(split_url(url)[0])
    cells = [Cell(s, error=_is_suspicious(str(s))) for s in segments]
    return cells + [_NONE] * (MAX_PATHS - len(cells))


def _is_suspicious(segment: str) -> bool:
    return bool(_SUSPICIOUS_PATH.search(segment))


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


def page_list_rows(conn: sqlite3.Connection, chunk_rows: int = CHUNK_ROWS, *,
                   listed: bool = False) -> Iterator[Chunk]:
    """The Page List rows, ``chunk_rows`` at a time (the link score and ``--extract`` columns,
    then the plugin columns, last); ``listed``: of
    the listed pages only (:mod:`~nitpicker.query.report_rows.listed`)."""
    title_of = _title_lookup(conn)
    columns = plugin_columns(conn)
    titles = page_column_titles(conn)
    facts = _Facts()
    for pages in stream(conn, _PAGES_LISTED if listed else _PAGES, (), chunk_rows):
        values: list[list[Value]] = []
        marks: list[Mark] = []
        for number, page in enumerate(pages):
            values.append(_row(number, page, title_of, facts, marks))
        add_page_columns(conn, titles, [page[0] for page in pages], values)
        if columns:
            add_plugin_values(conn, columns, [page[0] for page in pages], values, marks)
        yield Chunk(values, marks)  # type: ignore[arg-type]  # rows of lists


def _title_lookup(conn: sqlite3.Connection) -> Callable[[str], str | None]:
    @lru_cache(maxsize=4096)
    def title_of(url: str) -> str | None:
        row = conn.execute(_TITLE, (url,)).fetchone()
        return str(row[0]) if row else None
    return title_of


class _Facts:
    """The Page List's red rules of repeated values, looked up once a value (one run)."""

    def __init__(self) -> None:
        self.paths = _RedCache(_is_suspicious)
        self.codes = _RedCache(is_error_status)


class _RedCache(dict[Any, bool]):
    """``cache[value]``: ``red(value)``, worked out once a value (at most 4,096 held)."""

    def __init__(self, red: Callable[[Any], bool]) -> None:
        super().__init__()
        self.red = red

    def __missing__(self, value: Any) -> bool:
        if len(self) >= 4096:
            self.clear()
        red = self[value] = self.red(value)
        return red


_NONE: Final = Cell(None)
_CODE: Final = HEADERS.index("Status Code")
_SOURCES: Final = HEADERS.index("Redirect From")
_LANGUAGE: Final = HEADERS.index("Language")
_LINKS: Final = HEADERS.index("Internal Links")
_REFERRERS: Final = HEADERS.index("Internal Referrers")
_OG_URL: Final = HEADERS.index("og:url")
_NO_PATHS: Final[list[Value]] = [None] * MAX_PATHS


def _row(number: int, page: tuple[Any, ...], title_of: Callable[[str], str | None],
         facts: _Facts, marks: list[Mark]) -> list[Value]:
    """Row ``number`` of a chunk: its values; its red, linked and noted cells onto ``marks``."""
    (_page_id, url, title, status, lang, source_count, sources, anchors, referrer_count,
     referrers, og_url) = page[:_META + 1]
    parts, hostname = split_url(url)
    parent = _parent_index(parts)
    short = strip_parent_title(title, title_of(parent) if parent else None)
    protocol = f"{parts.scheme}:"
    marks.append((number, 0, f"Full-title:\n{title}", None, bool(_ERROR_TITLE.search(title))))
    marks.append((number, 2, None, url, False))
    if protocol == "http:":
        marks.append((number, 3, None, None, True))
    segments = _segments_of(parts)
    if segments:
        red_path = facts.paths
        for column, segment in enumerate(segments, _PATH_COLUMN):
            if red_path[segment]:
                marks.append((number, column, None, None, True))
        paths = segments + _NO_PATHS[len(segments):]
    else:
        paths = _NO_PATHS
    code = status if isinstance(status, int) else -1
    if facts.codes[code]:
        marks.append((number, _CODE, None, None, True))
    if source_count and (note := joined_note(sources, source_count)):
        marks.append((number, _SOURCES, note, None, False))
    if not lang:
        marks.append((number, _LANGUAGE, None, None, True))
    internal, external, internal_bad, external_bad = _scan(anchors, 0)[0]
    if internal_bad:
        marks.append((number, _LINKS + 1, note_of(internal_bad), None, True))
    if external_bad:
        marks.append((number, _LINKS + 3, note_of(external_bad), None, True))
    note = joined_note(referrers, referrer_count) if referrer_count else None
    if note or referrer_count < 2:
        marks.append((number, _REFERRERS, note, None, referrer_count < 2))
    if og_url:
        marks.append((number, _OG_URL, None, str(og_url), False))
    return [
        short, title, url, protocol, hostname, *paths, code, source_count, lang or "N/A",
        internal, len(internal_bad), external, len(external_bad), referrer_count,
        *page[_META + 1:],
    ]


_META: Final = 10
"""Where og:url (its link) sits in a :data:`_PAGES` row; the meta columns' cells follow."""

_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: the C scanner takes a decoder
"""``_scan(text, 0)[0]``: the value of JSON ``text`` SQLite wrote (no space around it), without
``json.loads``' checks around the C scanner."""

_PLAIN_URL: Final = re.compile(
    r"(https?)://([a-z0-9.-]*)((?:/[^?#\t\r\n]*)?)(?:\?([^#\t\r\n]*))?(?:#[^\t\r\n]*)?")
"""A URL :func:`urllib.parse.urlsplit` would split as it stands: ``http`` or ``https``, a host
name in lower case without port or user, no tab or line break anywhere."""


def split_url(url: str) -> tuple[SplitResult, str]:
    """``urlsplit(url)`` (without the fragment) and its host name (``""`` for none): a plain URL
    (most of an archive's) split by one regular expression, any other by ``urlsplit``."""
    match = _PLAIN_URL.fullmatch(url)
    if match is None:
        parts = urlsplit(url)
        return parts._replace(fragment=""), parts.hostname or ""
    scheme, netloc, path, query = match.groups()
    return SplitResult(scheme, netloc, path, query or "", ""), netloc


def _segments_of(parts: SplitResult) -> list[Value]:
    """path1…: ``/<decoded segment>``, the query on the last one (at most ten)."""
    segments: list[Value] = []
    segments += [f"/{unquote(s)}" for s in parts.path.split("/") if s][:MAX_PATHS]
    if parts.query and segments:
        segments[-1] = f"{segments[-1]}?{parts.query}"
    elif parts.query:
        segments = [f"/?{parts.query}"]
    return segments
