"""The private-network guard's address policy (nitpicker/policy/netguard.py), with a fake resolver."""

from __future__ import annotations

import ipaddress

import pytest

from nitpicker.policy.netguard import (
    UnresolvableHostError,
    check_host,
    is_forbidden_address,
    parse_ip_literal,
    resolve_host,
)
from tests.helpers import FakeDNS


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private (RFC 1918)"),
        ("172.16.0.1", "private (RFC 1918)"),
        ("172.31.255.255", "private (RFC 1918)"),
        ("192.168.1.1", "private (RFC 1918)"),
        ("fc00::1", "private (unique local, fc00::/7)"),
        ("fd12:3456:789a::1", "private (unique local, fc00::/7)"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("100.64.0.1", "carrier-grade NAT (100.64.0.0/10)"),
        ("100.127.255.254", "carrier-grade NAT (100.64.0.0/10)"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("0.1.2.3", "this network (0.0.0.0/8)"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("fec0::1", "site-local"),
        ("192.0.2.10", "not globally routable"),  # documentation
        ("198.18.0.1", "not globally routable"),  # benchmarking
        ("2001:db8::1", "not globally routable"),  # documentation
        ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
        ("::ffff:169.254.169.254", "IPv4-mapped cloud metadata"),
        ("::ffff:10.1.2.3", "IPv4-mapped private (RFC 1918)"),
        ("::ffff:0.0.0.0", "IPv4-mapped unspecified"),
        ("64:ff9b::7f00:1", "NAT64 loopback"),
        ("64:ff9b::a9fe:a9fe", "NAT64 cloud metadata"),
        ("2002:7f00:1::", "6to4 loopback"),
        ("::7f00:1", "IPv4-compatible loopback"),
    ],
)
def test_forbidden_addresses(address: str, reason: str) -> None:
    assert is_forbidden_address(address) == reason
    assert is_forbidden_address(ipaddress.ip_address(address.split("%")[0])) == reason


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "1.1.1.1",
        "100.63.255.255",  # just below CGNAT
        "100.128.0.0",  # just above CGNAT
        "172.15.255.255",  # just below 172.16/12
        "172.32.0.0",  # just above 172.16/12
        "169.253.255.255",  # just below link-local
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::",
    ],
)
def test_public_addresses(address: str) -> None:
    assert is_forbidden_address(address) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # decimal
        ("0x7f.1", "127.0.0.1"),  # hex, two parts
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("017700000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("[::1]", "::1"),
        ("::ffff:7f00:1", "::ffff:127.0.0.1"),
        ("example.com", None),
        ("localhost", None),
        ("1.2.3.4.5", None),
        ("999.1.1.1", None),
        ("0x7g.1", None),
        ("127.0.0.1 x", None),  # inet_aton would accept the trailing garbage
    ],
)
def test_ip_literals(host: str, address: str | None) -> None:
    expected = ipaddress.ip_address(address) if address is not None else None
    assert parse_ip_literal(host) == expected


DNS = {
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "internal.example": ["10.0.0.7"],
    "metadata.example": ["169.254.169.254"],
    "rebind.example": ["93.184.215.14", "127.0.0.1"],  # one public, one private answer
    "mapped.example": ["::ffff:192.168.0.1"],
    "v6local.example": ["2606:4700:4700::1111", "fe80::1"],
}


@pytest.mark.parametrize(
    ("host", "refusal"),
    [
        ("public.example", None),
        ("internal.example", "internal.example resolves to 10.0.0.7 (private (RFC 1918))"),
        ("metadata.example", "metadata.example resolves to 169.254.169.254 (cloud metadata)"),
        ("rebind.example", "rebind.example resolves to 127.0.0.1 (loopback)"),
        (
            "mapped.example",
            "mapped.example resolves to ::ffff:c0a8:1 (IPv4-mapped private (RFC 1918))",
        ),
        ("v6local.example", "v6local.example resolves to fe80::1 (link-local)"),
    ],
)
def test_check_host_refuses_if_any_address_is_forbidden(host: str, refusal: str | None) -> None:
    dns = FakeDNS(DNS)
    found = check_host(host, 80, resolver=dns)
    assert (str(found) if found is not None else None) == refusal
    assert dns.asked == [host]


@pytest.mark.parametrize(
    ("host", "refusal"),
    [
        ("2130706433", "2130706433 resolves to 127.0.0.1 (loopback)"),
        ("0x7f.1", "0x7f.1 resolves to 127.0.0.1 (loopback)"),
        ("169.254.169.254", "169.254.169.254 resolves to 169.254.169.254 (cloud metadata)"),
        (
            "::ffff:a9fe:a9fe",
            "::ffff:a9fe:a9fe resolves to ::ffff:a9fe:a9fe (IPv4-mapped cloud metadata)",
        ),
        ("8.8.8.8", None),
    ],
)
def test_literal_hosts_are_checked_without_resolving(host: str, refusal: str | None) -> None:
    dns = FakeDNS({})
    found = check_host(host, 80, resolver=dns)
    assert (str(found) if found is not None else None) == refusal
    assert dns.asked == []


def test_resolve_host_keeps_every_address_once_in_order() -> None:
    dns = FakeDNS({"twice.example": ["93.184.215.14", "93.184.215.14", "2606:4700:4700::1111"]})
    assert [str(a) for a in resolve_host("twice.example", 443, dns)] == [
        "93.184.215.14",
        "2606:4700:4700::1111",
    ]


def test_unresolvable_host_names_the_host() -> None:
    with pytest.raises(UnresolvableHostError, match="'nowhere.example'"):
        check_host("nowhere.example", 80, resolver=FakeDNS({}))
    with pytest.raises(UnresolvableHostError, match="no IPv4 or IPv6 address"):
        check_host("empty.example", 80, resolver=FakeDNS({"empty.example": []}))
