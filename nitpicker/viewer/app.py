"""The viewer's ASGI app (Starlette): routes, content negotiation, security headers, errors.

URLs (stable, shareable)::

    /                                 the archive picker (one archive: a redirect to it)
    /a/<n>/                           Summary of the n-th archive on the command line
    /a/<n>/pages?status=&scope=&q=&sort=&order=&page=
    /a/<n>/page?url=<page URL>        Page detail
    /a/<n>/snapshot?url=<page URL>    the stored HTML, for the page detail's sandboxed iframe
    /a/<n>/links?type=broken|external|orphaned&page=
    /a/<n>/clusters?min=10&page=      Duplicate Clusters
    /a/<n>/cluster?signature=<sha1>   the pages of one cluster
    /a/<n>/traps?page=                the trap cap's audit log
    /a/<n>/violations?validator=&rule=&url=   rules → the pages with one → its findings
    /compare?old=<n>&new=<m>&category=&page=  what ``nitpicker diff`` says changed

Every view answers JSON of the same data with ``?format=json`` or ``Accept:
application/json``. Every response carries a strict CSP (no script at all, styles and images
from the viewer only); the snapshot its own (``sandbox``: no script, an opaque origin).
"""

from __future__ import annotations

import logging
import re
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from nitpicker.viewer.compare import OLD_URL_FIELDS, URL_FIELDS, compare_view
from nitpicker.viewer.params import BadRequest, NotFound
from nitpicker.viewer.views import PAGE_SIZE, VIEWS, OpenArchive, snapshot_html

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["APP_CSP", "LOOPBACK_NAMES", "SNAPSHOT_CSP", "HostCheck", "create_app"]

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent

APP_CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self';"
           " form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""The viewer's own pages: no script of any kind, nothing from another origin; the only
frame is the snapshot, and a link inside it cannot take the frame to another site."""

SNAPSHOT_CSP = ("sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:;"
                " base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
"""A snapshot: sandboxed even when opened on its own (no script, an opaque origin), nothing
fetched (a crawled page's images and styles would call its site), framed only by the viewer."""

_COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _href(path: str, **params: Any) -> str:
    """A viewer URL: ``path`` with the non-empty ``params`` as its query string."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"{path}?{query}" if query else path


def _with_param(path: str, query: dict[str, str], name: str, value: int) -> str:
    """``path`` with the request's ``query``, its ``name`` set to ``value`` (1: left out)."""
    return _href(path, **{**query, name: "" if value == 1 else value})


_HTML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"), ("'", "&#39;"))

_QUOTED = re.compile(r"[^A-Za-z0-9_.~:/-]")
"""A character :func:`urllib.parse.quote` (``safe=":/"``) would encode."""


def _escape(value: object) -> str:
    """``value`` as HTML text, as markupsafe's ``escape`` writes it (``&#34;``, ``&#39;``) but a
    plain ``str``: the row builders escape hundreds of crawled strings a page detail, and five
    ``str.replace`` calls cost a fraction of ``escape``'s round trip through ``Markup``."""
    text = value if type(value) is str else str(value)
    for char, entity in _HTML_ESCAPES:
        if char in text:
            text = text.replace(char, entity)
    return text


def _query_value(url: str) -> str:
    """``url`` as a query-string value. ":" and "/" may stand in a query string (RFC 3986
    §3.4): left as they are, most URLs need no encoding, and are not run through ``quote``;
    what it does encode leaves nothing HTML would read as markup."""
    return quote(url, safe=":/") if _QUOTED.search(url) else url


def _link_prefix(base: str) -> str:
    return f'<a class="url" href="{_escape(base)}page?url='


def _link(prefix: str, url: str, text: str | None = None) -> str:
    return f'{prefix}{_query_value(url)}">{_escape(text or url)}</a>'


def _page_link(base: str, url: str, text: str | None = None) -> Markup:
    """A link to the page detail of ``url`` (a crawled string: escaped, and only ever a query
    parameter of the viewer's own URL). A function, not a macro: a page detail has hundreds."""
    return Markup(_link(_link_prefix(base), url, text))


def _outbound_rows(base: str, links: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's links out: a function, not a template loop (a most-linked
    page's rows are most of its page detail's rendering; every crawled string escaped)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        fragment = f"#{_escape(link['hash'])}" if link["hash"] else ""
        external = " <small>external</small>" if link["is_external"] else ""
        final = _link(prefix, link["final_url"]) if link["final_url"] else ""
        rows.append(f"<tr><td>{_status_html(link['status'])}</td><td>"
                    f"{_link(prefix, link['url'])}{fragment}{external}</td>\n"
                    f"<td>{_escape(link['text'])}</td><td>{final}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="4">None.</td></tr>')


def _inbound_rows(base: str, links: Sequence[Mapping[str, Any]], page_url: str) -> Markup:
    """The rows of a page detail's links in (as :func:`_outbound_rows`)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        through = _link(prefix, link["through"]) if link["through"] != page_url else ""
        rows.append(f"<tr><td>{_link(prefix, link['url'])}</td>"
                    f"<td>{_escape(link['text'])}</td><td>{through}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="3">None.</td></tr>')


SRC_SHOWN = 200
"""Characters of an image's ``src`` a page detail shows (a ``data:`` URL can be megabytes)."""


def _blank(value: object) -> str:
    """A value as a table cell shows it: nothing for ``None``, ``0`` or ``""``."""
    return _escape(value) if value else ""


def _image_rows(images: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's images (as :func:`_outbound_rows`)."""
    rows = []
    for image in images:
        src = image["src"]
        if len(src) > SRC_SHOWN:
            src = src[:SRC_SHOWN - 1] + "…"
        alt = "<em>absent</em>" if image["alt"] is None else _escape(image["alt"])
        rows.append(f"<tr><td>{_escape(image['viewport_width'] or 'markup')}</td>"
                    f'<td class="url">{_escape(src)}</td>\n<td>{alt}</td>\n'
                    f"<td>{_blank(image['width'])}×{_blank(image['height'])}</td>"
                    f"<td>{_blank(image['natural_width'])}×{_blank(image['natural_height'])}"
                    f"</td><td>{'yes' if image['is_lazy'] else ''}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="6">None.</td></tr>')


def _resource_rows(resources: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's sub-resources (as :func:`_outbound_rows`)."""
    rows = []
    for resource in resources:
        length = resource["content_length"]
        rows.append(f"<tr><td>{_status_html(resource['status'])}</td>"
                    f"<td>{_escape(resource['kind'])}</td>"
                    f'<td class="url">{_escape(resource["url"])}</td>'
                    f"<td>{_blank(resource['content_type'])}</td>"
                    f"<td>{'' if length is None else _escape(length)}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="5">None.</td></tr>')


def _link_rows(base: str, links: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of the Links view (broken or external links; as :func:`_outbound_rows`)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        final = _link(prefix, link["final_url"]) if link["final_url"] else ""
        rows.append(f"<tr><td>{_status_html(link['status'])} "
                    f"{_escape(link['status_text'] or '')}</td>"
                    f"<td class=\"source\">{_link(prefix, link['source_url'])}</td>\n"
                    f"<td class=\"target\">{_link(prefix, link['dest_url'])}</td>"
                    f"<td>{_escape(link['text'])}</td><td>{final}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="5">None.</td></tr>')


def _section_pager(path: str, result: Mapping[str, Any], number: int, query: dict[str, str],
                   param: str, anchor: str) -> Markup:
    """The pager of one list of a page (``?<param>=<number>``, the other lists' parameters
    kept), or nothing when the list fits on one page and this is it. A function, not a macro:
    a page detail has up to six lists, and a macro call costs as much as a dozen link rows."""
    total = result["total"]
    last = (total - 1) // PAGE_SIZE + 1 if total else 1
    if last == 1 and number == 1:
        return Markup("")
    shown = len(result["items"])
    rows = f", rows {result['offset'] + 1}–{result['offset'] + shown}" if shown else ""
    parts = [f'<nav class="pager" data-list="{_escape(param)}">',
             f"  <span>{total} in all{rows}</span>"]
    if number > 1:
        parts.append(f'  <a rel="prev" href="{_escape(_with_param(path, query, param, number - 1))}'
                     f'#{_escape(anchor)}">← previous</a>')
    parts.append(f"  <span>page {number} of {last}</span>")
    if number < last:
        parts.append(f'  <a rel="next" href="{_escape(_with_param(path, query, param, number + 1))}'
                     f'#{_escape(anchor)}">next →</a>')
    parts.append("</nav>")
    return Markup("\n".join(parts))


NAV = (("", "Summary"), ("pages", "Pages"), ("links", "Links"), ("resources", "Resources"),
       ("images", "Images"), ("violations", "Violations"), ("duplicates", "Duplicates"),
       ("mismatches", "Mismatches"), ("headers", "Security headers"),
       ("clusters", "Duplicate Clusters"), ("traps", "Trap log"))
"""The views of an archive in its navigation bar: path (after ``/a/<n>/``) and label."""


@lru_cache(maxsize=256)
def _nav(base: str, current: str) -> Markup:
    """The navigation bar of an archive's views, ``current`` marked: the same few strings on
    every page, built once."""
    current_mark = ' aria-current="page"'
    return Markup("\n".join(
        f'<a href="{_escape(base + name)}"{current_mark if name == current else ""}>{label}</a>'
        for name, label in NAV))


def _status_html(value: int | None) -> str:
    if value is None:
        return '<span class="status none">—</span>'
    kind = value // 100 if value > 0 else "err"
    return f'<span class="status s{kind}">{int(value)}</span>'


def _status(value: int | None) -> Markup:
    """An HTTP status, coloured by class (``-1``: a fetch error; ``None``: never fetched)."""
    return Markup(_status_html(value))


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    env.globals["href"] = _href
    env.globals["page_link"] = _page_link
    env.globals["with_param"] = _with_param
    env.globals["status"] = _status
    env.globals["outbound_rows"] = _outbound_rows
    env.globals["inbound_rows"] = _inbound_rows
    env.globals["link_rows"] = _link_rows
    env.globals["image_rows"] = _image_rows
    env.globals["resource_rows"] = _resource_rows
    env.globals["section_pager"] = _section_pager
    env.globals["nav"] = _nav
    env.globals["page_size"] = PAGE_SIZE
    env.globals["url_fields"] = URL_FIELDS
    env.globals["old_url_fields"] = OLD_URL_FIELDS
    return env


def _wants_json(request: Request) -> bool:
    if request.query_params.get("format") == "json":
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


class Viewer:
    """The app's state: the archives named on the command line and the templates."""

    def __init__(self, archives: Sequence[OpenArchive]) -> None:
        self.archives = list(archives)
        self.templates = _environment()

    def html(self, template: str, http_status: int = 200, **context: Any) -> HTMLResponse:
        body = self.templates.get_template(template).render(archives=self.archives, **context)
        return HTMLResponse(body, status_code=http_status, headers=self._headers(APP_CSP))

    def json(self, data: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(data, status_code=status, headers=self._headers(APP_CSP))

    @staticmethod
    def _headers(csp: str) -> dict[str, str]:
        return {"Content-Security-Policy": csp, **_COMMON_HEADERS}

    def error(self, request: Request, status: int, message: str) -> Response:
        if _wants_json(request):
            return self.json({"error": message, "status": status}, status)
        return self.html("error.html", status, status=status, message=message)

    def archive(self, request: Request) -> OpenArchive:
        raw = request.path_params["index"]
        if not raw.isdigit() or int(raw) >= len(self.archives):
            raise NotFound(f"No archive number {raw[:20]!r}: this viewer serves "
                           f"{len(self.archives)} (0 to {len(self.archives) - 1})")
        return self.archives[int(raw)]

    async def home(self, request: Request) -> Response:
        if len(self.archives) == 1 and not _wants_json(request):
            return RedirectResponse("/a/0/", status_code=302)
        data = [{"index": a.index, "path": str(a.path), "base_url": a.base_url,
                 "url": f"/a/{a.index}/"} for a in self.archives]
        compare = "/compare" if len(self.archives) > 1 else None
        if _wants_json(request):
            return self.json({"archives": data, "compare": compare})
        return self.html("home.html", listing=data, compare=compare)

    async def compare(self, request: Request) -> Response:
        try:  # on a thread (its own connection): the other views answer while it reads
            template, data = await run_in_threadpool(compare_view, self.archives,
                                                     request.query_params)
        except (BadRequest, ValueError) as exc:
            return self.error(request, 400, str(exc))
        if _wants_json(request):
            return self.json(data)
        return self.html(template, view="compare", query=dict(request.query_params), **data)

    async def view(self, request: Request) -> Response:
        try:
            archive = self.archive(request)
            name = request.path_params.get("view", "")
            view = VIEWS.get(name)
            if view is None:
                raise NotFound(f"No view {name!r}")
            template, data = view(archive, request.query_params)
        except BadRequest as exc:
            return self.error(request, 400, str(exc))
        except ValueError as exc:  # the query library's range and choice checks
            return self.error(request, 400, str(exc))
        except NotFound as exc:
            return self.error(request, 404, str(exc))
        if _wants_json(request):
            return self.json(data)
        return self.html(template, archive=archive, view=name, base=f"/a/{archive.index}/",
                         query=dict(request.query_params), **data)

    async def snapshot(self, request: Request) -> Response:
        try:
            html = snapshot_html(self.archive(request), request.query_params)
        except BadRequest as exc:
            return self.error(request, 400, str(exc))
        except NotFound as exc:
            return self.error(request, 404, str(exc))
        return HTMLResponse(html, headers={**self._headers(SNAPSHOT_CSP),
                                           "X-Frame-Options": "SAMEORIGIN"})

    async def not_found(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        message = "No such page in the viewer" if status == 404 else str(
            getattr(exc, "detail", "Bad request"))
        return self.error(request, status, message)

    async def server_error(self, request: Request, exc: Exception) -> Response:
        # Starlette calls this for any exception a view did not handle: log it, show no trace
        logger.error("Error serving %s", request.url.path, exc_info=exc)
        message = ("The archive could not be read" if isinstance(exc, sqlite3.Error)
                   else "Internal error (see the viewer's log)")
        return self.error(request, 500, message)


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""The names a browser on this machine reaches a loopback viewer by."""


class HostCheck:
    """Refuse a request whose ``Host`` is not one of ``hosts`` (400): a web page that rebinds
    its own DNS name to 127.0.0.1 then reaches the viewer under that name, and is refused."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "").lower()
            name = host if host.endswith("]") else host.rsplit(":", 1)[0]
            if name not in self.hosts:
                response = PlainTextResponse(f"Invalid Host header: {host[:100]!r}", 400,
                                             headers={"Content-Security-Policy": APP_CSP})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(archives: Sequence[OpenArchive], *, hosts: frozenset[str] | None = LOOPBACK_NAMES
               ) -> Starlette:
    """The viewer over ``archives`` (already opened read-only, in command-line order).

    ``hosts``: the ``Host`` names it answers (default: the loopback names); ``None`` answers
    any (a viewer the user chose to serve on the network).
    """
    viewer = Viewer(archives)
    middleware = [] if hosts is None else [Middleware(HostCheck, hosts=hosts)]
    routes = [
        Route("/", viewer.home),
        Route("/compare", viewer.compare),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/a/{index}/", viewer.view),
        Route("/a/{index}/snapshot", viewer.snapshot),
        Route("/a/{index}/{view}", viewer.view),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(routes=routes, middleware=middleware, exception_handlers={
        HTTPException: viewer.not_found,
        Exception: viewer.server_error,
    })
