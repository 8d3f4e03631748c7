"""PrivateNetworkGuard: refuses requests to loopback, private, link-local and metadata addresses.

A downloader middleware for service deployments (Scrapyd), where whoever schedules a job picks
the URLs: without it, a job could fetch ``http://169.254.169.254/`` or an admin page on the
crawler's own network and store the answer in an archive. Enabled by the setting
``NITPICKER_DENY_PRIVATE_NETWORKS = True``, read once in ``from_crawler``; otherwise
``NotConfigured``. It is the operator's switch (in the project's settings: a job's crawl option
cannot turn it off), and the crawl option ``deny_private_networks`` (``--deny-private-networks``,
``-a deny_private_networks=true``) turns it on for one crawl: the site spider projects a true
option into the setting over whatever priority it was set at, and never projects a false one.

Two checks, one policy (:meth:`PrivateNetworkGuard.refusal`, :mod:`nitpicker.policy.netguard`):

1. **Every request**, in ``process_request``: roots, links, robots.txt, each redirect hop (the
   redirect middleware returns a new request, which goes through the downloader middlewares
   again), retries and browser requests. Only ``http``/``https`` are fetched. The host is
   resolved in a thread (never on the reactor) and *every* address it resolves to must be
   public; the addresses are reused for ``dns_ttl`` seconds. A refusal raises
   ``IgnoreRequest("blocked by the private-network guard: <host> resolves to <ip> (<reason>)")``,
   so the URL is a skipped row with that reason and nothing is sent.
2. **Every connection**: the check above resolves the name, then Twisted resolves it again to
   connect, and a DNS server answering with a TTL of 0 can give a public address to the first
   lookup and ``127.0.0.1`` to the second (DNS rebinding). So while the spider runs, the
   reactor's name resolver (process-wide) is wrapped: the addresses a connection is about to
   use go through the same policy, and a refused answer yields no address at all (the request
   is then a skipped row too, its reason ending in "when connecting"). The hosts of the
   environment's proxies (``http_proxy``…) are exempt from this second check: the proxy is
   contacted, not the URL's host — which also means that behind a proxy it is the proxy that
   resolves, and only the first check applies.

Not covered: the browser. With rendering on, Chromium resolves names itself and follows its own
redirects and sub-resources, none of which pass through Scrapy's downloader.

Stats: ``nitpicker/ssrf/blocked`` (every refused request), ``nitpicker/ssrf/blocked_at_connection``
(answers refused by the second check), ``nitpicker/ssrf/unresolved`` (hosts that do not
resolve: a fetch error, as without the guard, but no connection is tried).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn
from urllib.parse import urlsplit
from urllib.request import getproxies

from scrapy import signals
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest, NotConfigured
from scrapy.utils.asyncio import run_in_thread
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.reactor import is_reactor_installed
from twisted.internet import address as twisted_address
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import (
    IHostnameResolver,
    IReactorPluggableNameResolver,
    IResolutionReceiver,
)
from zope.interface import implementer

from nitpicker.policy.netguard import (
    UnresolvableHostError,
    check_addresses,
    parse_ip_literal,
    resolve_host,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.interfaces import IAddress

    from nitpicker.policy.netguard import IPAddress, Refusal, Resolver

__all__ = ["BLOCKED", "SETTING", "PrivateNetworkGuard"]

logger = logging.getLogger(__name__)

SETTING = "NITPICKER_DENY_PRIVATE_NETWORKS"
BLOCKED = "blocked by the private-network guard"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class PrivateNetworkGuard:
    """Refuses requests whose destination is not a public internet address."""

    dns_ttl: ClassVar[float] = 30.0
    """Seconds a host's resolved addresses are reused before it is resolved again."""
    dns_cache_size: ClassVar[int] = 4096
    schemes: ClassVar[frozenset[str]] = frozenset(_DEFAULT_PORTS)

    def __init__(
        self,
        stats: StatsCollector,
        *,
        resolver: Resolver = socket.getaddrinfo,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stats = stats
        self.proxy_hosts: frozenset[str] = _proxy_hosts()
        self._resolver = resolver
        self._clock = clock
        self._addresses: dict[str, tuple[float, tuple[IPAddress, ...]]] = {}
        self._logged: set[str] = set()
        self._refused_at_connection: dict[str, Refusal] = {}
        self._connection_check: _ConnectionCheck | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PrivateNetworkGuard:
        if not crawler.settings.getbool(SETTING):
            raise NotConfigured  # off by default: no "Disabled" warning for the usual case
        guard = cls(crawler.stats)
        crawler.signals.connect(guard.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(guard.spider_closed, signal=signals.spider_closed)
        return guard

    # -- policy ---------------------------------------------------------------------------------

    def refusal(self, host: str, addresses: Sequence[IPAddress]) -> Refusal | None:
        """Why a connection to ``host`` at ``addresses`` is refused, or ``None`` to allow it.

        Any forbidden address refuses the host (:func:`nitpicker.policy.netguard.check_addresses`).
        Override in a subclass to allow a known internal host on purpose.
        """
        return check_addresses(host, addresses)

    # -- downloader middleware ------------------------------------------------------------------

    async def process_request(self, request: Request) -> None:
        url = urlparse_cached(request)
        if url.scheme not in self.schemes:
            self._block(request, url.scheme, f"{url.scheme}: URLs are not fetched")
        host = url.hostname
        if not host:
            self._block(request, "", f"no host in {request.url}")
        try:
            port = url.port or _DEFAULT_PORTS[url.scheme]
        except ValueError:  # a port out of range: the download fails on its own
            port = _DEFAULT_PORTS[url.scheme]
        refusal = self.refusal(host, await self._resolve(host, port))
        if refusal is not None:
            self._block(request, host, str(refusal))

    def process_exception(self, request: Request, exception: Exception) -> None:
        """A connection the second check refused is a blocked request, not a DNS failure."""
        if not isinstance(exception, (CannotResolveHostError, DNSLookupError)):
            return
        host = urlparse_cached(request).hostname or ""
        refusal = self._refused_at_connection.get(host)
        if refusal is not None:
            self._block(request, host, f"{refusal} when connecting")

    # -- signals --------------------------------------------------------------------------------

    def spider_opened(self) -> None:
        reactor = _pluggable_reactor()
        if reactor is None:
            logger.info("%s: no Twisted reactor, connections are not checked again", BLOCKED)
            return
        self._connection_check = _ConnectionCheck(reactor, self)
        self._connection_check.install()

    def spider_closed(self) -> None:
        if self._connection_check is not None:
            self._connection_check.uninstall()
            self._connection_check = None
        self._refused_at_connection.clear()

    def connection_refused(self, refusal: Refusal) -> None:
        """Called by the second check when a connection's addresses are refused."""
        self.stats.inc_value("nitpicker/ssrf/blocked_at_connection")
        if refusal.host not in self._refused_at_connection:
            logger.warning(
                "%s: %s when connecting, not when checked (DNS rebinding?)", BLOCKED, refusal
            )
        self._refused_at_connection[refusal.host] = refusal

    # -- internals ------------------------------------------------------------------------------

    async def _resolve(self, host: str, port: int) -> tuple[IPAddress, ...]:
        """Every address of ``host``: parsed if literal, else resolved in a thread and cached."""
        literal = parse_ip_literal(host)
        if literal is not None:
            return (literal,)
        now = self._clock()
        cached = self._addresses.get(host)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            addresses = await run_in_thread(resolve_host, host, port, self._resolver)
        except UnresolvableHostError as exc:
            self.stats.inc_value("nitpicker/ssrf/unresolved")
            raise CannotResolveHostError(str(exc)) from exc
        if len(self._addresses) >= self.dns_cache_size:
            self._addresses = {h: entry for h, entry in self._addresses.items() if entry[0] > now}
            if len(self._addresses) >= self.dns_cache_size:
                del self._addresses[next(iter(self._addresses))]
        self._addresses[host] = (now + self.dns_ttl, addresses)
        return addresses

    def _block(self, request: Request, host: str, detail: str) -> NoReturn:
        self.stats.inc_value("nitpicker/ssrf/blocked")
        if host not in self._logged:
            self._logged.add(host)
            logger.warning("%s: %s (first URL: %s)", BLOCKED, detail, request.url)
        raise IgnoreRequest(f"{BLOCKED}: {detail}")


def _proxy_hosts() -> frozenset[str]:
    """Hosts of the proxies in the environment (what Scrapy's HttpProxyMiddleware uses)."""
    hosts = set()
    for scheme, proxy in getproxies().items():
        if scheme == "no":
            continue
        hostname = urlsplit(proxy if "://" in proxy else f"//{proxy}").hostname
        if hostname:
            hosts.add(hostname)
    return frozenset(hosts)


def _pluggable_reactor() -> Any | None:
    if not is_reactor_installed():
        return None
    from twisted.internet import reactor

    return reactor if IReactorPluggableNameResolver.providedBy(reactor) else None


@implementer(IHostnameResolver)
class _ConnectionCheck:
    """The reactor's name resolver, wrapped: connections only go to addresses the guard allows."""

    def __init__(self, reactor: Any, guard: PrivateNetworkGuard) -> None:
        self._reactor = reactor
        self._guard = guard
        # Twisted's resolver objects are zope interfaces, which mypy cannot check: held as Any.
        self._inner: Any = reactor.nameResolver
        self._simple = reactor.resolver
        self._active = False

    def install(self) -> None:
        self._reactor.installNameResolver(self)
        self._active = True

    def uninstall(self) -> None:
        """Put the previous resolvers back (or, if another was installed since, pass through)."""
        self._active = False
        if self._reactor.nameResolver is self:
            self._reactor.installNameResolver(self._inner)
            self._reactor.resolver = self._simple

    def resolveHostName(
        self,
        resolutionReceiver: Any,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> Any:
        receiver = resolutionReceiver
        host = hostName.lower()
        if self._active and host not in self._guard.proxy_hosts:
            receiver = _Vetting(resolutionReceiver, host, self._guard)
        return self._inner.resolveHostName(
            receiver, hostName, portNumber, addressTypes, transportSemantics
        )


@implementer(IResolutionReceiver)
class _Vetting:
    """Holds a resolution's addresses back until all of them are known, then applies the policy."""

    def __init__(self, receiver: Any, host: str, guard: PrivateNetworkGuard) -> None:
        self._receiver = receiver
        self._host = host
        self._guard = guard
        self._addresses: list[IAddress] = []

    def resolutionBegan(self, resolutionInProgress: Any) -> None:
        self._receiver.resolutionBegan(resolutionInProgress)

    def addressResolved(self, address: IAddress) -> None:
        self._addresses.append(address)

    def resolutionComplete(self) -> None:
        ips = tuple(
            ipaddress.ip_address(found.host.split("%", 1)[0])
            for found in self._addresses
            if isinstance(found, (twisted_address.IPv4Address, twisted_address.IPv6Address))
        )
        refusal = self._guard.refusal(self._host, ips) if ips else None
        if refusal is None:
            for found in self._addresses:
                self._receiver.addressResolved(found)
        else:
            self._guard.connection_refused(refusal)
        self._receiver.resolutionComplete()
