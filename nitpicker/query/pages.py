"""Pages: the filtered page list, one page's full record, and its HTML snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from nitpicker.query._common import (
    PAGE_LIST_BASE,
    Paged,
    check_choice,
    check_integer,
    check_paging,
    fetch_all,
    fetch_one,
    find_page_id,
    has_column,
    has_migration,
    like_escape,
    paged,
    url_candidates,
)
from nitpicker.query.extracted import extract_names, page_extracted_values
from nitpicker.query.snapshot_encoding import decode

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "SORT_FIELDS",
    "SORT_ORDERS",
    "HeaderItem",
    "InboundLink",
    "OutboundLink",
    "PageDetail",
    "PageHtml",
    "PageListItem",
    "get_page_detail",
    "get_page_html",
    "list_pages",
]

SORT_FIELDS = ("url", "status", "title", "link_score")
SORT_ORDERS = ("asc", "desc")
_SORT_SQL = {
    ("url", "asc"): "p.url ASC",
    ("url", "desc"): "p.url DESC",
    ("status", "asc"): "p.status ASC NULLS LAST, p.url ASC",
    ("status", "desc"): "p.status DESC NULLS LAST, p.url ASC",
    ("title", "asc"): "p.title ASC, p.url ASC",
    ("title", "desc"): "p.title DESC, p.url ASC",
    ("link_score", "asc"): "p.link_score ASC NULLS LAST, p.url ASC",
    ("link_score", "desc"): "p.link_score DESC NULLS LAST, p.url ASC",
}

_PATH_SQL = "substr(p.url, instr(substr(p.url, instr(p.url, '://') + 3), '/') + instr(p.url, '://') + 2)"
"""The path (and query) of ``p.url``: what follows the authority."""


class PageListItem(TypedDict):
    url: str
    title: str
    status: int | None
    content_type: str | None
    is_external: bool
    has_description: bool
    has_og_title: bool
    noindex: bool
    charset: str | None
    """The character encoding the page declares, lower-case (its ``Content-Type`` header's,
    else its ``<meta charset>``); ``None`` when none does, or recorded before migration
    ``0019_page_charset``."""
    link_score: float | None
    """The page's PageRank in the in-scope link graph, times the graph's pages: 1 is an
    average page (:mod:`nitpicker.query.link_graph`); ``None`` out of the graph (not an
    internal 2xx HTML page) or before the site checks ran."""
    extracted: dict[str, list[str]]
    """The values of each of the crawl's ``--extract`` rules on the page, by rule name (every
    rule present; ``[]``: no match)."""


def _directory_filter(directory: str) -> tuple[str, str]:
    """SQL and its parameter for "the page is in this directory (or below)".

    An absolute URL is a URL prefix; anything else is a path prefix (``/blog``, ``blog/`` and
    ``/blog/`` all mean the pages under ``/blog/``), matched against the URL's path only.
    """
    if "://" in directory:
        return "p.url LIKE ? ESCAPE '\\'", like_escape(directory.rstrip("/")) + "/%"
    path = "/" + directory.strip("/")
    prefix = path if path == "/" else path + "/"
    return f"{_PATH_SQL} LIKE ? ESCAPE '\\'", like_escape(prefix) + "%"


def _page_filters(**options: Any) -> tuple[list[str], list[Any]]:
    where: list[str] = [PAGE_LIST_BASE]
    params: list[Any] = []
    for key, sql in (("status", "p.status = ?"), ("status_min", "p.status >= ?"),
                     ("status_max", "p.status <= ?")):
        if options[key] is not None:
            where.append(sql)
            params.append(options[key])
    if options["is_external"] is not None:
        where.append("p.is_external = ?")
        params.append(int(options["is_external"]))
    for key, sql in (("missing_title", "p.title = ''"),
                     ("missing_description", "p.description = ''"), ("noindex", "p.noindex = 1")):
        if options[key]:
            where.append(sql)
    if options["url_pattern"]:
        where.append("p.url LIKE ?")
        params.append(options["url_pattern"])
    if options["search"]:
        where.append("(p.url LIKE ? ESCAPE '\\' OR p.title LIKE ? ESCAPE '\\')")
        params += [f"%{like_escape(options['search'])}%"] * 2
    if options["directory"]:
        sql, param = _directory_filter(options["directory"])
        where.append(sql)
        params.append(param)
    return where, params


def list_pages(
    conn: sqlite3.Connection,
    *,
    status: int | None = None,
    status_min: int | None = None,
    status_max: int | None = None,
    is_external: bool | None = None,
    missing_title: bool = False,
    missing_description: bool = False,
    noindex: bool = False,
    url_pattern: str | None = None,
    directory: str | None = None,
    search: str | None = None,
    sort_by: str = "url",
    sort_order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> Paged[PageListItem]:
    """The page list (redirect sources and known non-HTML left out), filtered and sorted.

    Filters combine with AND: ``status`` exact, ``status_min``/``status_max`` inclusive,
    ``is_external`` (``None`` = both), ``missing_title``/``missing_description`` (empty),
    ``noindex``, ``url_pattern`` (SQL ``LIKE`` on the URL, ``%`` wildcard), ``directory``
    (path prefix such as ``/blog/``, or a URL prefix), ``search`` (text in the URL or the title,
    taken literally; ASCII letters in any case). ``sort_by`` is ``url``, ``status`` or
    ``title`` or ``link_score`` (``desc``: the most important pages first); ``sort_order`` ``asc`` or
    ``desc``.
    """
    check_choice("sort field", sort_by, SORT_FIELDS)
    check_choice("sort order", sort_order, SORT_ORDERS)
    check_paging(limit, offset)
    for name, value in (("status", status), ("status_min", status_min),
                        ("status_max", status_max)):
        check_integer(name, value)
    where, params = _page_filters(
        status=status, status_min=status_min, status_max=status_max, is_external=is_external,
        missing_title=missing_title, missing_description=missing_description, noindex=noindex,
        url_pattern=url_pattern, directory=directory, search=search,
    )
    condition = " AND ".join(where)
    charset = "p.charset" if has_migration(conn, "0019_page_charset") else "NULL"
    scored = has_column(conn, "pages", "link_score")
    score = "p.link_score" if scored else "NULL"
    order = _SORT_SQL[sort_by, sort_order] if scored or sort_by != "link_score" else "p.url ASC"
    rows = fetch_all(
        conn,
        "SELECT p.id, p.url, p.title, p.status, p.content_type, p.is_external,"
        f" p.description != '', p.og_title != '', p.noindex, {charset}, {score}"
        f" FROM pages p WHERE {condition} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    total = fetch_one(conn, f"SELECT count(*) FROM pages p WHERE {condition}", params)
    names = extract_names(conn)
    extracted = page_extracted_values(conn, [row[0] for row in rows], names)
    items: list[PageListItem] = [
        {"url": url, "title": title, "status": status_, "content_type": content_type,
         "is_external": bool(external), "has_description": bool(has_description),
         "has_og_title": bool(has_og_title), "noindex": bool(noindex_), "charset": declared,
         "link_score": link_score, "extracted": extracted[page_id]}
        for (page_id, url, title, status_, content_type, external, has_description,
             has_og_title, noindex_, declared, link_score) in rows
    ]
    return paged(items, total[0] if total else 0, limit, offset)


# -- one page -----------------------------------------------------------------------------------


class HeaderItem(TypedDict):
    name: str
    value: str


class OutboundLink(TypedDict):
    url: str
    """The link's target as written (normalised)."""
    text: str
    hash: str
    status: int | None
    """Status of the final page: ``final_url`` when the target redirects, else the target."""
    is_external: bool
    final_url: str | None
    """Where the target redirects to, or ``None``."""


class InboundLink(TypedDict):
    url: str
    """The linking page."""
    text: str
    through: str
    """The URL the link names: this page, or a URL that redirects to it."""


class PageDetail(TypedDict):
    url: str
    status: int | None
    status_text: str | None
    content_type: str | None
    content_length: int | None
    response_time_ms: int | None
    """From the request to the response headers, in ms (a rendered page: its HTML preflight's);
    ``None`` when not timed, or recorded before migration ``0014_response_time``."""
    charset: str | None
    """The character encoding the page declares (see :class:`PageListItem`)."""
    is_external: bool
    is_target: bool
    is_skipped: bool
    skip_reason: str | None
    depth: int | None
    fetched_at: str | None
    title: str
    description: str
    keywords: str
    lang: str
    canonical: str
    alternate: str
    noindex: bool
    nofollow: bool
    noarchive: bool
    og_type: str
    og_title: str
    og_site_name: str
    og_description: str
    og_url: str
    og_image: str
    twitter_card: str
    redirect_to: str | None
    """The final URL when this URL is a redirect source."""
    redirect_kind: str | None
    """How this URL sends on when it is a redirect source: ``http`` (a 3xx answer),
    ``meta-refresh`` (``<meta http-equiv=refresh>``, read without a browser) or ``script``
    (the browser left the loaded page by itself); ``None`` otherwise."""
    response_headers: list[HeaderItem]
    outbound_links: list[OutboundLink]
    outbound_total: int
    inbound_links: list[InboundLink]
    inbound_total: int
    redirect_from: list[str]
    """URLs that redirect to this page."""


_DETAIL_COLUMNS = (  # the last three: an archive before 0008 / 0014 / 0018 derives them
    "status", "status_text", "content_type", "content_length", "is_external", "is_target",
    "is_skipped", "skip_reason", "depth", "fetched_at", "title", "description", "keywords",
    "lang", "canonical", "alternate", "noindex", "nofollow", "noarchive", "og_type", "og_title",
    "og_site_name", "og_description", "og_url", "og_image", "twitter_card", "redirect_kind",
    "response_time_ms", "charset",
)
_BOOLEAN_COLUMNS = frozenset({"is_external", "is_target", "is_skipped", "noindex", "nofollow",
                              "noarchive"})

_REDIRECT_KIND_BEFORE_0008 = (
    "CASE WHEN p.redirect_dest_id IS NULL THEN NULL WHEN p.status = 0 THEN 'meta-refresh'"
    " ELSE 'http' END"
)
"""``redirect_kind`` of an archive from before migration ``0008_redirect_kind`` (readers never
migrate): what the migration fills in (a meta refresh hop was recorded with status 0)."""

_OUTBOUND_SQL = """SELECT t.url, a.text, a.hash, coalesce(f.status, t.status), t.is_external, f.url
    FROM anchors a JOIN pages t ON t.id = a.href_id LEFT JOIN pages f ON f.id = t.redirect_dest_id
    WHERE a.page_id = ? ORDER BY a.id LIMIT ?"""

_INBOUND_DIRECT_SQL = """SELECT s.url, a.text FROM anchors a JOIN pages s ON s.id = a.page_id
    WHERE a.href_id = ? ORDER BY a.page_id, a.id LIMIT ?"""

_INBOUND_REDIRECTED_SQL = """SELECT s.url, a.text, r.url FROM pages r
    JOIN anchors a ON a.href_id = r.id JOIN pages s ON s.id = a.page_id
    WHERE r.redirect_dest_id = ? ORDER BY r.url, a.page_id, a.id LIMIT ?"""

_INBOUND_COUNT_SQL = """SELECT (SELECT count(*) FROM anchors WHERE href_id = :id)
    + (SELECT count(*) FROM pages r JOIN anchors a ON a.href_id = r.id
       WHERE r.redirect_dest_id = :id)"""


def get_page_detail(conn: sqlite3.Connection, url: str, *, link_limit: int = 1000
                    ) -> PageDetail | None:
    """Everything recorded about one URL, or ``None`` when the archive has no such URL.

    ``url`` is looked up as given, then normalised. Outbound links are in document order,
    inbound links grouped by linking page; each list holds at most ``link_limit`` entries and
    ``outbound_total``/``inbound_total`` say how many there are.
    """
    check_integer("link_limit", link_limit)
    found = find_page_id(conn, url)
    if found is None:
        return None
    page_id, page_url = found
    columns = ", ".join(f"p.{c}" for c in _DETAIL_COLUMNS[:-3])
    kind = ("p.redirect_kind" if has_migration(conn, "0008_redirect_kind")
            else _REDIRECT_KIND_BEFORE_0008)
    timed = "p.response_time_ms" if has_migration(conn, "0014_response_time") else "NULL"
    charset = "p.charset" if has_migration(conn, "0019_page_charset") else "NULL"
    columns = f"{columns}, {kind}, {timed}, {charset}"
    row = fetch_one(conn, f"SELECT {columns}, f.url FROM pages p"
                          " LEFT JOIN pages f ON f.id = p.redirect_dest_id WHERE p.id = ?",
                    (page_id,))
    assert row is not None  # found above, and the connection is a snapshot-consistent reader
    facts: dict[str, Any] = {
        name: bool(value) if name in _BOOLEAN_COLUMNS else value
        for name, value in zip(_DETAIL_COLUMNS, row, strict=False)
    }
    detail = {
        "url": page_url,
        **facts,
        "redirect_to": row[-1],
        "response_headers": _headers(conn, page_id),
        "outbound_links": _outbound(conn, page_id, link_limit),
        "outbound_total": _scalar(conn, "SELECT count(*) FROM anchors WHERE page_id = ?",
                                  (page_id,)),
        "inbound_links": _inbound(conn, page_id, page_url, link_limit),
        "inbound_total": _scalar(conn, _INBOUND_COUNT_SQL, {"id": page_id}),
        "redirect_from": [r[0] for r in fetch_all(
            conn, "SELECT url FROM pages WHERE redirect_dest_id = ? ORDER BY url", (page_id,))],
    }
    return cast("PageDetail", detail)  # the column fields come from _DETAIL_COLUMNS


def _scalar(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] | dict[str, Any]) -> int:
    row = fetch_one(conn, sql, params)
    return int(row[0]) if row else 0


def _headers(conn: sqlite3.Connection, page_id: int) -> list[HeaderItem]:
    rows = fetch_all(conn, "SELECT name, value FROM response_headers WHERE page_id = ?"
                           " ORDER BY rowid", (page_id,))
    return [{"name": name, "value": value} for name, value in rows]


def _outbound(conn: sqlite3.Connection, page_id: int, limit: int) -> list[OutboundLink]:
    return [
        {"url": url, "text": text, "hash": hash_, "status": status,
         "is_external": bool(external), "final_url": final_url}
        for url, text, hash_, status, external, final_url
        in fetch_all(conn, _OUTBOUND_SQL, (page_id, limit))
    ]


def _inbound(conn: sqlite3.Connection, page_id: int, page_url: str, limit: int
             ) -> list[InboundLink]:
    links: list[InboundLink] = [
        {"url": url, "text": text, "through": page_url}
        for url, text in fetch_all(conn, _INBOUND_DIRECT_SQL, (page_id, limit))
    ]
    if len(links) < limit:
        rows = fetch_all(conn, _INBOUND_REDIRECTED_SQL, (page_id, limit - len(links)))
        links += [{"url": url, "text": text, "through": through} for url, text, through in rows]
    return links


# -- snapshot -----------------------------------------------------------------------------------


class PageHtml(TypedDict):
    html: str
    truncated: bool


def get_page_html(conn: sqlite3.Connection, url: str, max_length: int = 100_000
                  ) -> PageHtml | None:
    """The HTML snapshot of a page (its first ``max_length`` characters), or ``None``.

    ``None`` when the archive has no such URL or no snapshot of it (only in-scope HTML pages
    have one).
    """
    check_integer("max_length", max_length)
    row = None
    for candidate in url_candidates(url):
        row = fetch_one(conn, "SELECT s.encoding, s.html FROM pages p"
                              " JOIN snapshots s ON s.page_id = p.id WHERE p.url = ?", (candidate,))
        if row is not None:
            break
    if row is None:
        return None
    encoding, blob = row
    data = decode(encoding, blob)
    html = data.decode("utf-8", errors="replace")
    return {"html": html[:max_length], "truncated": len(html) > max_length}
