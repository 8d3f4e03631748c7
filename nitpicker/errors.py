"""Fetch failures described in one line: DNS failure, refused, timeout, TLS, reset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import exceptions as scrapy_errors
from twisted.internet import error as net_error
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

if TYPE_CHECKING:
    from twisted.python.failure import Failure

__all__ = ["describe_failure"]

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


def _is_tls(exc: BaseException) -> bool:
    while exc is not None:
        name = type(exc).__name__
        if "SSL" in name or "TLS" in name or "certificate" in str(exc).lower():
            return True
        exc = exc.__cause__  # type: ignore[assignment]
    return False


def describe_failure(failure: Failure) -> str:
    """``"<kind>: <detail>"`` for a download failure, e.g. ``"Connection refused: …"``."""
    value = failure.value
    detail = failure.getErrorMessage()
    if _is_tls(value):
        return f"TLS error: {detail}"
    for types, kind in _KINDS:
        if isinstance(value, types):
            return f"{kind}: {detail}" if detail else kind
    name = type(value).__name__
    return f"{name}: {detail}" if detail else name
