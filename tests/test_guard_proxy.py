"""The browser's private-network guard (nitpicker/render/guard_proxy.py): a forward proxy that
connects only where the policy allows, to the address it checked, and says why it refused.

Two local servers count what reaches them; the policy is the real one (loopback refused) or one
that lets exactly one of them through, so the allowed path is tested on 127.0.0.1 too.
"""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from nitpicker.policy.netguard import Refusal, check_addresses
from nitpicker.render.guard_proxy import BLOCKED_HEADER, GuardProxy, browser_args
from tests.counting_server import CountingServer as Counter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from nitpicker.policy.netguard import IPAddress


@pytest.fixture
def servers() -> Iterator[tuple[Counter, Counter]]:
    allowed, forbidden = Counter(), Counter()
    yield allowed, forbidden
    for server in (allowed, forbidden):
        server.stop()


def only_port(port: int) -> Callable[[str, int, Sequence[IPAddress]], Refusal | None]:
    """A policy that lets only ``port`` through (loopback included), the rest as the guard."""
    def check(host: str, to: int, addresses: Sequence[IPAddress]) -> Refusal | None:
        return None if to == port else check_addresses(host, addresses)
    return check


def through(proxy: str, url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        with opener.open(url, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def connect(proxy: str, authority: str, then: bytes = b"") -> bytes:
    """A CONNECT to ``authority``; what came back (after ``then`` is sent into the tunnel)."""
    host, port = proxy.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
        answer = sock.recv(65536)
        if then and answer.startswith(b"HTTP/1.1 200"):
            sock.sendall(then)
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(65536):
                answer += chunk
        return answer


def test_loopback_is_refused_with_the_reason_and_nothing_reaches_it(
        servers: tuple[Counter, Counter]) -> None:
    _, forbidden = servers
    proxy = GuardProxy()
    url = proxy.start()
    try:
        status, headers, body = through(url, f"http://127.0.0.1:{forbidden.port}/delete?all=1")
        assert status == 403
        reason = "blocked by the private-network guard: 127.0.0.1 resolves to 127.0.0.1 (loopback)"
        assert headers[BLOCKED_HEADER] == reason
        assert body.decode() == reason
        assert connect(url, f"localhost:{forbidden.port}").startswith(b"HTTP/1.1 403 Forbidden")
        assert connect(url, f"[::1]:{forbidden.port}").startswith(b"HTTP/1.1 403 Forbidden")
        status, _, _ = through(url, f"http://2130706433:{forbidden.port}/")  # 127.0.0.1
        assert status == 403
        assert proxy.blocked == 4
        assert forbidden.taken() == []
    finally:
        proxy.close()


def test_an_allowed_request_goes_through_in_origin_form(servers: tuple[Counter, Counter]) -> None:
    allowed, forbidden = servers
    proxy = GuardProxy(check=only_port(allowed.port))
    url = proxy.start()
    try:
        status, _, body = through(url, f"http://127.0.0.1:{allowed.port}/own.css?v=2")
        assert (status, body) == (200, b"hit")
        assert allowed.taken() == ["/own.css?v=2"]  # origin form: no scheme or host in the path
        assert through(url, f"http://127.0.0.1:{forbidden.port}/x")[0] == 403
        assert forbidden.taken() == []
    finally:
        proxy.close()


def test_a_connect_tunnel_to_an_allowed_address_relays_both_ways(
        servers: tuple[Counter, Counter]) -> None:
    allowed, _ = servers
    proxy = GuardProxy(check=only_port(allowed.port))
    url = proxy.start()
    try:
        answer = connect(url, f"127.0.0.1:{allowed.port}",
                         b"GET /tunnelled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.0 200")
        assert answer.endswith(b"hit")
        assert allowed.taken() == ["/tunnelled"]
    finally:
        proxy.close()


def test_the_address_checked_is_the_address_connected(servers: tuple[Counter, Counter]) -> None:
    """One lookup per request: a name whose second answer would differ (DNS rebinding) is
    connected at the address the policy saw."""
    allowed, _ = servers
    answers: list[str] = []

    def resolver(host: str, port: int, *_: Any) -> list[tuple[Any, ...]]:
        answers.append(host)
        address = "127.0.0.1" if len(answers) == 1 else "10.9.9.9"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    proxy = GuardProxy(resolver=resolver, check=only_port(allowed.port))
    url = proxy.start()
    try:
        status, _, body = through(url, f"http://rebind.test:{allowed.port}/once")
        assert (status, body) == (200, b"hit")
        assert answers == ["rebind.test"]
    finally:
        proxy.close()


def test_a_name_that_does_not_resolve_is_a_bad_gateway() -> None:
    def resolver(*_: Any) -> list[tuple[Any, ...]]:
        raise socket.gaierror(-2, "Name or service not known")

    proxy = GuardProxy(resolver=resolver)
    url = proxy.start()
    try:
        status, headers, _ = through(url, "http://nowhere.test/")
        assert status == 502
        assert headers[BLOCKED_HEADER].startswith("cannot resolve 'nowhere.test'")
    finally:
        proxy.close()


def test_browser_args_leave_no_way_around() -> None:
    assert browser_args("http://127.0.0.1:9") == [
        "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]


def test_close_ends_the_thread_and_frees_the_port() -> None:
    proxy = GuardProxy()
    url = proxy.start()
    port = int(url.rsplit(":", 1)[1])
    proxy.close()
    assert proxy.url is None
    assert not any(thread.name == "nitpicker-guard-proxy" for thread in threading.enumerate())
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
