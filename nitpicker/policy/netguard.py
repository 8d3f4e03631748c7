"""Address policy of the private-network guard: which destinations a service crawl refuses.

Pure functions, no Scrapy and no Twisted. :func:`is_forbidden_address` says why an IP address
is not a public internet destination (loopback, private, link-local, cloud metadata, CGNAT,
unspecified, multicast, reserved — and the IPv6 forms that embed such an IPv4 address).
:func:`resolve_host` turns a URL host into every address it stands for: a literal is parsed
the way the C library parses it (``2130706433``, ``0x7f.1`` and ``0177.0.0.1`` are all
127.0.0.1), any other name goes through the resolver (``socket.getaddrinfo`` by default).
:func:`check_host` refuses a host when *any* of its addresses is forbidden, so a name that
answers with one public and one private address (DNS rebinding) is refused whichever address
the connection would pick. Used by :class:`nitpicker.middlewares.ssrf.PrivateNetworkGuard`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CLOUD_METADATA",
    "IPAddress",
    "Refusal",
    "Resolver",
    "UnresolvableHostError",
    "check_addresses",
    "check_host",
    "is_forbidden_address",
    "parse_ip_literal",
    "resolve_host",
]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver: TypeAlias = Callable[..., Sequence[tuple[Any, ...]]]
"""Anything called like ``socket.getaddrinfo(host, port, family, type)``."""

CLOUD_METADATA: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)

_PRIVATE_V4 = "private (RFC 1918)"
_V4_RANGES: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(network), reason)
    for network, reason in (
        ("0.0.0.0/8", "this network (0.0.0.0/8)"),
        ("10.0.0.0/8", _PRIVATE_V4),
        ("100.64.0.0/10", "carrier-grade NAT (100.64.0.0/10)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", _PRIVATE_V4),
        ("192.168.0.0/16", _PRIVATE_V4),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),  # 255.255.255.255 (broadcast) included
    )
)
_V6_RANGES: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(network), reason)
    for network, reason in (
        ("::1/128", "loopback"),
        ("fc00::/7", "private (unique local, fc00::/7)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")

# What inet_aton accepts: one to four dot-separated decimal, octal (leading 0) or hex (0x)
# parts. Checked first because inet_aton also accepts trailing garbage ("127.0.0.1 x").
_NUMERIC_IPV4 = re.compile(
    r"(?:0x[0-9a-f]+|[0-9]+)(?:\.(?:0x[0-9a-f]+|[0-9]+)){0,3}", re.IGNORECASE
)


class UnresolvableHostError(OSError):
    """A host name that resolves to no address; the message names the host."""


@dataclass(frozen=True)
class Refusal:
    """Why a host is refused: the first forbidden address it resolves to."""

    host: str
    address: IPAddress
    reason: str

    def __str__(self) -> str:
        return f"{self.host} resolves to {self.address} ({self.reason})"


def is_forbidden_address(ip: str | IPAddress) -> str | None:
    """Why ``ip`` is not a public internet destination, or ``None`` when it is one.

    >>> is_forbidden_address("169.254.169.254")
    'cloud metadata'
    >>> is_forbidden_address("::ffff:127.0.0.1")
    'IPv4-mapped loopback'
    >>> is_forbidden_address("93.184.215.14") is None
    True
    """
    address = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        address = ipaddress.IPv6Address(int(address))
    if address in CLOUD_METADATA:
        return "cloud metadata"
    if address.is_unspecified:
        return "unspecified"
    if isinstance(address, ipaddress.IPv4Address):
        for network, reason in _V4_RANGES:
            if address in network:
                return reason
    else:
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            form, ipv4 = embedded
            inner = is_forbidden_address(ipv4)
            return f"{form} {inner}" if inner is not None else None
        for network6, reason in _V6_RANGES:
            if address in network6:
                return reason
    if address.is_multicast:
        return "multicast"
    if not address.is_global:
        return "not globally routable"
    if address.is_reserved:
        return "reserved"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 address carries to the IPv4 internet, with the form's name."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # ::a.b.c.d, not :: or ::1
        return "IPv4-compatible", ipaddress.IPv4Address(int(address))
    return None


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a literal host stands for, as the C library reads it; ``None`` for a name.

    Dotted quads, IPv6 (bracketed or not, with a zone) and the other numeric IPv4 forms
    ``inet_aton`` accepts: ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if _NUMERIC_IPV4.fullmatch(text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def resolve_host(
    host: str, port: int, resolver: Resolver = socket.getaddrinfo
) -> tuple[IPAddress, ...]:
    """Every address ``host`` stands for, in the resolver's order, without duplicates.

    A literal is parsed without calling the resolver. ``UnresolvableHostError`` (naming the
    host) when the resolver fails or answers no IPv4/IPv6 address.
    """
    literal = parse_ip_literal(host)
    if literal is not None:
        return (literal,)
    try:
        answers = resolver(host, port, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:  # gaierror; an IDNA label too long
        raise UnresolvableHostError(f"cannot resolve {host!r}: {exc}") from exc
    found: dict[IPAddress, None] = {}
    for family, _type, _proto, _canonname, sockaddr in answers:
        if family in (socket.AF_INET, socket.AF_INET6):
            found[ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])] = None
    if not found:
        raise UnresolvableHostError(f"cannot resolve {host!r}: no IPv4 or IPv6 address")
    return tuple(found)


def check_addresses(host: str, addresses: Iterable[IPAddress]) -> Refusal | None:
    """The refusal of the first forbidden address among ``addresses``, or ``None``."""
    for address in addresses:
        reason = is_forbidden_address(address)
        if reason is not None:
            return Refusal(host, address, reason)
    return None


def check_host(host: str, port: int, resolver: Resolver = socket.getaddrinfo) -> Refusal | None:
    """Refuse ``host`` if *any* address it resolves to is forbidden; ``None`` when all are public.

    Blocking (it resolves): call it from a thread. ``UnresolvableHostError`` when the name
    does not resolve.
    """
    return check_addresses(host, resolve_host(host, port, resolver))
