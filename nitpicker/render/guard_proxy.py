"""GuardProxy: a forward HTTP proxy on 127.0.0.1 through which a browser reaches only public
addresses — the private-network guard (:mod:`nitpicker.policy.netguard`) for a browser.

A browser resolves names and fetches sub-resources itself, outside Scrapy's downloader, so the
crawl's :class:`~nitpicker.middlewares.ssrf.PrivateNetworkGuard` cannot see its requests.
Launched with ``--proxy-server`` pointing here and loopback not bypassed
(:data:`BROWSER_ARGS`), every request the browser makes — navigations, sub-resources, a page
script's ``fetch()``, WebSockets, and Playwright's ``route.fetch()`` when the proxy is given to
``launch(proxy=…)`` — arrives here, as ``CONNECT host:port`` (https, wss) or as an absolute-form
request (``GET http://host/path``). The proxy resolves the host and refuses it when *any* of its
addresses is forbidden (``403`` with the reason in the ``X-Nitpicker-Guard`` header); otherwise
it connects to the very address it checked, so a DNS answer that changes between the check and
the connection (DNS rebinding) has no window, and relays the bytes both ways. A plain-HTTP
request goes upstream in origin form with ``Connection: close``: one request per connection,
never a second one for another host on a checked connection.

It runs on an asyncio loop in a thread of its own: :meth:`GuardProxy.start` returns its URL,
:meth:`GuardProxy.close` stops it. ``blocked`` counts the refused requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from nitpicker.policy.netguard import UnresolvableHostError, check_addresses, resolve_host

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from nitpicker.policy.netguard import IPAddress, Refusal, Resolver

__all__ = ["BLOCKED_HEADER", "BROWSER_ARGS", "GuardProxy", "browser_args"]

logger = logging.getLogger(__name__)

BLOCKED_HEADER: Final = "x-nitpicker-guard"
"""The header of the proxy's refusal: why (``blocked by the private-network guard: …``)."""

BROWSER_ARGS: Final = (
    "--proxy-bypass-list=<-loopback>",  # Chromium sends loopback direct unless told
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",  # WebRTC's UDP goes around
)
"""Chromium's switches, beside ``--proxy-server``, that leave it no way around the proxy."""

_HOP_BY_HOP: Final = frozenset({b"connection", b"keep-alive", b"proxy-connection",
                                b"proxy-authorization", b"te", b"upgrade"})
_HEAD_LIMIT: Final = 64 * 1024
_CHUNK: Final = 64 * 1024

def _public_only(host: str, port: int, addresses: Sequence[IPAddress]) -> Refusal | None:
    return check_addresses(host, addresses)


def browser_args(proxy_url: str) -> list[str]:
    """The Chromium switches that send every request of the browser through ``proxy_url``."""
    return [f"--proxy-server={proxy_url}", *BROWSER_ARGS]


class _Refused(Exception):
    """What the client is answered instead of a connection: a status and the reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class GuardProxy:
    """A forward proxy that connects only to addresses ``check`` lets through (by default:
    public ones, as the crawl's guard)."""

    def __init__(self, *, resolver: Resolver = socket.getaddrinfo,
                 check: Callable[[str, int, Sequence[IPAddress]], Refusal | None] = _public_only,
                 timeout: float = 30.0) -> None:
        self.resolver = resolver
        self.check = check
        self.timeout = timeout
        #: requests refused (a forbidden address)
        self.blocked = 0
        #: the proxy's URL once started (``http://127.0.0.1:<port>``)
        self.url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None

    def start(self) -> str:
        """Listen on a free port of 127.0.0.1; the proxy's URL."""
        if self.url is not None:
            return self.url
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="nitpicker-guard-proxy",
                                  daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_HEAD_LIMIT), loop
        ).result(30)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    def close(self) -> None:
        """Stop listening, end the connections in flight, stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = self._thread = None
        self.url = None
        with contextlib.suppress(TimeoutError):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        current = asyncio.current_task()
        tasks = [task for task in asyncio.all_tasks() if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.get_running_loop().shutdown_default_executor()

    # -- one client connection ------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.timeout)
            line, _, fields = head[:-4].partition(b"\r\n")
            parts = line.split(b" ")
            if len(parts) != 3:
                raise _Refused(400, "not an HTTP request")
            method, target, version = parts
            if method == b"CONNECT":
                host, port = _authority(target.decode("latin-1"))
                up_reader, upstream = await self._connect(host, port)
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                url = urlsplit(target.decode("latin-1"))
                if url.scheme != "http" or not url.hostname:
                    raise _Refused(400, f"not an absolute http:// URL: {target[:200]!r}")
                up_reader, upstream = await self._connect(url.hostname, url.port or 80)
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                kept = [field for field in fields.split(b"\r\n")
                        if field and field.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
                upstream.write(b"\r\n".join([method + b" " + path.encode("latin-1") + b" "
                                             + version, *kept, b"Connection: close", b"", b""]))
            await self._relay(reader, writer, up_reader, upstream)
        except _Refused as refused:
            body = refused.reason.encode("utf-8", "replace")
            writer.write(b"HTTP/1.1 %d %s\r\n%s: %s\r\nContent-Type: text/plain; charset=utf-8"
                         b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (
                             refused.status, _REASONS[refused.status], BLOCKED_HEADER.encode(),
                             body.replace(b"\r", b" ").replace(b"\n", b" "), len(body), body))
            with contextlib.suppress(ConnectionError, OSError):
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError, OSError, ValueError) as exc:
            logger.debug("guard proxy: connection ended: %r", exc)
        finally:
            for stream in (writer, upstream):
                if stream is not None:
                    stream.close()

    async def _connect(self, host: str, port: int
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to ``host`` at an address the check let through (the one checked),
        or :class:`_Refused`."""
        loop = asyncio.get_running_loop()
        try:
            addresses = await loop.run_in_executor(None, resolve_host, host, port, self.resolver)
        except UnresolvableHostError as exc:
            raise _Refused(502, str(exc)) from exc
        refusal = self.check(host, port, addresses)
        if refusal is not None:
            self.blocked += 1
            logger.info("guard proxy: blocked %s:%s (%s)", host, port, refusal)
            raise _Refused(403, f"blocked by the private-network guard: {refusal}")
        error: OSError | None = None
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(str(address), port, limit=_CHUNK), self.timeout)
            except (OSError, TimeoutError) as exc:
                error = exc if isinstance(exc, OSError) else OSError(f"timed out: {address}")
        raise _Refused(502, f"cannot connect to {host}:{port}: {error}")

    async def _relay(self, client_reader: asyncio.StreamReader,
                     client_writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                     upstream: asyncio.StreamWriter) -> None:
        """Bytes both ways until the upstream has answered (closed its side), or the client
        went away and the upstream had ``timeout`` seconds more."""
        up = asyncio.create_task(_pipe(client_reader, upstream))
        down = asyncio.create_task(_pipe(up_reader, client_writer))
        try:
            done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            if down not in done:
                await asyncio.wait({down}, timeout=self.timeout)
        finally:
            for task in (up, down):
                task.cancel()
            await asyncio.gather(up, down, return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, then half-close the other side."""
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


def _authority(target: str) -> tuple[str, int]:
    """``host:port`` of a CONNECT (``[v6]:port`` too), or :class:`_Refused`."""
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise _Refused(400, f"not a host:port: {target[:200]!r}")
    return host.removeprefix("[").removesuffix("]"), int(port)


_REASONS: Final = {400: b"Bad Request", 403: b"Forbidden", 502: b"Bad Gateway"}
