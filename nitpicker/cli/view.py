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

__all__ = ["app", "is_loopback", "normalise_host", "parse_address", "view"]

app = typer.Typer()


def normalise_host(host: str) -> str:
    """``--host`` as the resolver and the loopback test take it: lower case, without the
    brackets of an IPv6 literal (``[::1]``) or the trailing dot of a fully qualified name
    (``localhost.``)."""
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name.endswith(".") and name != ".":
        name = name[:-1]
    return name


def parse_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``host`` spells (after :func:`normalise_host`), in any form the C
    resolver takes (``127.1``, ``0x7f.1``, ``017700000001``, ``2130706433``); ``None`` for a
    name. An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is its IPv4 address."""
    name = normalise_host(host)
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        # inet_aton stops at whitespace and ignores what follows: such a string is no address
        if not name or not name.isascii() or any(c.isspace() for c in name):
            return None
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine: ``localhost`` in any case or
    with a trailing dot, and every spelling of a loopback address (``127.0.0.1``, ``127.1``,
    ``0x7f.1``, ``2130706433``, ``::1``, ``[0:0:0:0:0:0:0:1]``, ``::ffff:127.0.0.1``)."""
    if normalise_host(host) == "localhost":
        return True
    address = parse_address(host)
    return address is not None and address.is_loopback


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port), or one ``Error:`` line."""
    try:
        infos = socket.getaddrinfo(normalise_host(host), port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        fail(f"Invalid host: {host!r} ({exc.strerror})")
    except UnicodeError as exc:  # a name the IDNA codec refuses (an empty label, too long)
        fail(f"Invalid host: {host!r} ({exc})")
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
    from nitpicker.query import get_summary, open_archive
    from nitpicker.viewer import LOOPBACK_NAMES, OpenArchive, create_app

    archives: list[OpenArchive] = []
    for index, path in enumerate(files):
        conn = open_archive(path)
        archives.append(OpenArchive(index, path, conn, get_summary(conn)["base_url"]))
    sock = _listen(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    # Loopback or not is the address bound, whatever the spelling of --host (LOCALHOST,
    # 127.1, 0x7f.1, a name the hosts file maps to 127.0.0.1): on loopback, only requests
    # naming the viewer by a loopback name are answered (DNS rebinding).
    loopback = is_loopback(bound_host)
    if not loopback:
        print(f"Warning: listening on {host}: anyone who can reach this address can read the "
              "archives", file=sys.stderr)
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}/"
    print(f"Serving {len(archives)} archive{'s' if len(archives) != 1 else ''} at {url}"
          " (Ctrl-C to stop)", flush=True)
    if open_browser:  # in the background: a browser command may take its time to return
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    hosts = _loopback_names(host, shown) | LOOPBACK_NAMES if loopback else None
    _serve(create_app(archives, hosts=hosts), sock)
    for archive in archives:
        archive.conn.close()


def _loopback_names(host: str, shown: str) -> frozenset[str]:
    """The ``Host`` names of a loopback viewer beside :data:`LOOPBACK_NAMES`: the address
    bound (``[::1]``), and the name ``--host`` gave (``localhost.``, a hosts-file alias) as a
    browser sends it, with and without its trailing dot. An address in another spelling
    (``127.1``) is not one: a browser sends it as the address bound."""
    names = {shown.lower()}
    typed = normalise_host(host)
    if typed and parse_address(typed) is None:
        names |= {typed, typed + "."}
    return frozenset(names)


def _serve(asgi: object, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off")  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled
        server.run(sockets=[sock])
    print("Viewer stopped", file=sys.stderr)
