"""A small HTTP server on 127.0.0.1 that answers from a table of routes and records every path
it is asked for: the "other local service" of the tests that check what a browser may reach."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CountingServer"]


class CountingServer(ThreadingHTTPServer):
    """Answers from ``routes`` (path without query → (status, headers, body)), anything else
    with ``200 hit``; :meth:`taken` returns the paths asked for (query included) and forgets
    them. GET, HEAD and POST alike."""

    daemon_threads = True

    def __init__(self, routes: dict[str, tuple[int, dict[str, str], str]] | None = None) -> None:
        self.routes = dict(routes or {})
        self.seen: list[str] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with server.lock:
                    server.seen.append(self.path)
                status, headers, body = server.routes.get(
                    self.path.split("?", 1)[0], (200, {"Content-Type": "text/plain"}, "hit"))
                data = body.encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_HEAD = do_GET
            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                return None

        super().__init__(("127.0.0.1", 0), Handler)
        self.port = int(self.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def taken(self) -> list[str]:
        """The paths asked for since the last call."""
        with self.lock:
            seen, self.seen = self.seen, []
        return seen

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
