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
    /a/<n>/content-clusters?kind=exact|near|any&min=2&page=   Content Clusters
    /a/<n>/content-cluster?kind=&id=  the pages of one content cluster
    /a/<n>/traps?page=                the trap cap's audit log
    /a/<n>/violations?validator=&rule=&url=   rules → the pages with one → its findings
    /compare?old=<n>&new=<m>&category=&page=  what ``nitpicker diff`` says changed

Every view answers JSON of the same data with ``?format=json`` or ``Accept:
application/json``. Every response carries a strict CSP (no script at all, styles and images
from the viewer only); the snapshot its own (``sandbox``: no script, an opaque origin).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

from nitpicker.viewer.compare import compare_view
from nitpicker.viewer.fragments import environment
from nitpicker.viewer.params import BadRequest, NotFound, ascii_int
from nitpicker.viewer.views import VIEWS, OpenArchive, snapshot_html

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def _wants_json(request: Request) -> bool:
    if request.query_params.get("format") == "json":
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


class Viewer:
    """The app's state: the archives named on the command line and the templates."""

    def __init__(self, archives: Sequence[OpenArchive]) -> None:
        self.archives = list(archives)
        self.templates = environment(HERE / "templates")

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
        index = ascii_int(raw) if raw[:1] != "-" else None
        if index is None or index >= len(self.archives):
            raise NotFound(f"No archive number {raw[:20]!r}: this viewer serves "
                           f"{len(self.archives)} (0 to {len(self.archives) - 1})")
        return self.archives[index]

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
