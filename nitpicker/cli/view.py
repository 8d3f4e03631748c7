"""``nitpicker view FILE [FILE …]``: serve a local web viewer over archives.

The archives are opened read-only here, before anything listens, so a missing file, a file
that is not an archive or one from a newer nitpicker is one ``Error:`` line; so is a port in
use. Starlette, Jinja2 and uvicorn are imported only when the command runs.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
import threading
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.cli.output import fail

__all__ = ["app", "is_loopback", "view"]

app = typer.Typer()


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine (``127.0.0.1``, ``::1``,
    ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port), or one ``Error:`` line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        fail(f"Invalid host: {host!r} ({exc.strerror})")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        fail(f"Cannot listen on {host}:{port}: {exc.strerror or exc}")
    return sock


@app.command()
def view(
    files: Annotated[list[Path], typer.Argument(
        help="The archives (.nitpicker files) to serve; opened read-only.", show_default=False,
        metavar="FILE")],
    host: Annotated[str, typer.Option(
        help="Address to listen on. Anything but a loopback address shows the archives to "
             "the network (a warning is printed).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(
        min=0, max=65535, help="Port to listen on; 0 picks a free one.")] = 0,
    open_browser: Annotated[bool, typer.Option(
        "--open", help="Open the viewer in the default web browser.")] = False,
) -> None:
    """Serve a local web viewer over archives: summary, pages, page detail with its snapshot,
    links, resources, images, violations, duplicates, mismatches, security headers, duplicate
    clusters and the trap-cap log. Prints its URL; Ctrl-C stops it.

    The archives are opened read-only and never modified; a request can open no other file.

    Example: nitpicker view site.nitpicker --port 8000
    """
    from nitpicker.query import ArchiveOpenError, get_summary, open_archive
    from nitpicker.viewer import LOOPBACK_NAMES, OpenArchive, create_app

    archives: list[OpenArchive] = []
    for index, path in enumerate(files):
        try:
            conn = open_archive(path)
        except ArchiveOpenError as exc:
            fail(str(exc))
        archives.append(OpenArchive(index, path, conn, get_summary(conn)["base_url"]))
    if not is_loopback(host):
        print(f"Warning: listening on {host}: anyone who can reach this address can read the "
              "archives", file=sys.stderr)
    sock = _listen(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}/"
    print(f"Serving {len(archives)} archive{'s' if len(archives) != 1 else ''} at {url}"
          " (Ctrl-C to stop)", flush=True)
    if open_browser:  # in the background: a browser command may take its time to return
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    hosts = LOOPBACK_NAMES | {shown.lower()} if is_loopback(host) else None
    _serve(create_app(archives, hosts=hosts), sock)
    for archive in archives:
        archive.conn.close()


def _serve(asgi: object, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off")  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled
        server.run(sockets=[sock])
    print("Viewer stopped", file=sys.stderr)
