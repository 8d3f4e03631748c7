"""Fetch failures described in one line: DNS failure, refused, timeout, TLS, reset, too large;
which of them are the connection's (what a network outage looks like) or the host's (what
the host breaker counts); and the failure of a URL whose host was given up on."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy import exceptions as scrapy_errors
from twisted.internet import error as net_error
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

if TYPE_CHECKING:
    from twisted.python.failure import Failure

__all__ = ["TOO_LARGE", "HostGivenUp", "describe_failure", "is_connection_failure",
           "is_host_failure", "too_large", "untried"]

TOO_LARGE = "Too large"
"""How the text of a URL whose body was larger than ``DOWNLOAD_MAXSIZE`` starts."""

_MAX_SIZE = re.compile(r"(?:(\d+) bytes\b.*?)?max size \((\d+)\)")
"""Scrapy's texts: "Expected to receive N bytes which is larger than download max size (M)
…", "Received N bytes larger than download max size (M) …"."""

_KINDS: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((scrapy_errors.CannotResolveHostError, net_error.DNSLookupError), "DNS lookup failed"),
    ((scrapy_errors.DownloadConnectionRefusedError, net_error.ConnectionRefusedError),
     "Connection refused"),
    ((scrapy_errors.DownloadTimeoutError, net_error.TimeoutError, net_error.TCPTimedOutError),
     "Timeout"),
    ((scrapy_errors.DownloadFailedError, scrapy_errors.ResponseDataLossError,
      net_error.ConnectionLost, net_error.ConnectionDone, ResponseNeverReceived, ResponseFailed),
     "Connection reset"),
)


_CONNECTION_KINDS: tuple[type[BaseException], ...] = tuple(
    error_type for types, _ in _KINDS for error_type in types
)
"""DNS failure, refused, timeout, reset: no HTTP answer because the connection failed."""


def _causes(exc: BaseException | None) -> list[BaseException]:
    """The exception, its causes, and the reasons wrapped in a ``ResponseFailed``."""
    found: list[BaseException] = []
    while exc is not None and exc not in found:
        found.append(exc)
        for reason in getattr(exc, "reasons", None) or ():
            found.extend(_causes(getattr(reason, "value", None)))
        exc = exc.__cause__
    return found


def _is_tls(exc: BaseException | None) -> bool:
    return any(
        "SSL" in f"{type(e).__module__}.{type(e).__name__}"
        or "TLS" in type(e).__name__
        or "certificate" in str(e).lower()
        for e in _causes(exc)
    )


def _detail(exc: BaseException | None) -> str:
    """The innermost readable message (``ResponseFailed`` wraps a list of failures)."""
    reasons = [e for e in _causes(exc) if not getattr(e, "reasons", None)]
    innermost = reasons[-1] if reasons else exc
    text = str(innermost) or type(innermost).__name__
    return text.strip("[]() ")


class HostGivenUp(Exception):
    """A URL not requested: its host failed at the connection too many times in a row
    (:mod:`nitpicker.middlewares.host_breaker`). ``error`` is the line recorded for it;
    ``untried`` whether the URL was never requested at all (a retry of a URL that was is not
    untried)."""

    def __init__(self, error: str, *, untried: bool = True) -> None:
        super().__init__(error)
        self.error = error
        self.untried = untried


def too_large(detail: str) -> str | None:
    """The one line of a body larger than Scrapy's download max size, from Scrapy's text;
    ``None`` for any other failure."""
    if "max size" not in detail:
        return None
    match = _MAX_SIZE.search(detail)
    if match is None:
        return f"{TOO_LARGE}: {detail}"
    size, most = match.groups()
    got = f"{size} bytes, " if size else ""
    return f"{TOO_LARGE}: {got}more than the download max size (DOWNLOAD_MAXSIZE, {most} bytes)"


def describe_failure(failure: Failure) -> str:
    """``"<kind>: <detail>"`` for a download failure, e.g. ``"Connection refused: …"``."""
    value = failure.value
    if isinstance(value, HostGivenUp):
        return value.error
    detail = _detail(value)
    large = too_large(detail)
    if large is not None:
        return large
    if _is_tls(value):
        return f"TLS error: {detail}"
    for types, kind in _KINDS:
        if isinstance(value, types):
            return f"{kind}: {detail}" if detail else kind
    name = type(value).__name__
    return f"{name}: {detail}" if detail else name


def is_connection_failure(exc: BaseException) -> bool:
    """Whether a download failed at the connection: a DNS failure, a refused or reset
    connection, a timeout — not a TLS error (the host answered), not an ignored request."""
    return isinstance(exc, _CONNECTION_KINDS) and not _is_tls(exc)


def is_host_failure(exc: BaseException) -> bool:
    """Whether a download failed before any HTTP answer because of its host: a connection
    failure (DNS, refused, reset, timeout) or a TLS error."""
    return isinstance(exc, _CONNECTION_KINDS) or (_is_tls(exc) and not isinstance(
        exc, HostGivenUp))


def untried(failure: Failure) -> bool:
    """Whether a failed URL was never requested (its host given up on, :class:`HostGivenUp`)."""
    value = failure.value
    return isinstance(value, HostGivenUp) and value.untried
