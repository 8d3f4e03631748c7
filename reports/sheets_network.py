"""The Sheets report's network: how long it waits for Google, and a failure said in one line.

Every request the report makes (the Sheets API and the token endpoint behind it) has two
bounds: connecting (:data:`CONNECT_TIMEOUT`, 10 s, or the answer's bound when that is shorter)
and waiting for the answer (``NITPICKER_SHEETS_TIMEOUT``, default :data:`TIMEOUT`, 120 s: a
chunk of long notes is a few MB for Google to apply). Without them gspread waits forever on
an endpoint that accepts the connection and never answers.

A request that fails for the network (refused, no route, no name, no answer in time) is the
exception :data:`NETWORK_ERRORS` names; :func:`network_failure` says it in one line, naming
the host.
"""

from __future__ import annotations

import os
import re
from typing import Final
from urllib.parse import urlsplit

import requests
from google.auth.exceptions import TransportError

__all__ = ["CONNECT_TIMEOUT", "NETWORK_ERRORS", "TIMEOUT", "TIMEOUT_VARIABLE",
           "network_failure", "timeout_setting"]

TIMEOUT_VARIABLE: Final = "NITPICKER_SHEETS_TIMEOUT"
TIMEOUT: Final = 120.0
"""Seconds an answer may take (each request: the Sheets API's and the token endpoint's)."""
CONNECT_TIMEOUT: Final = 10.0
"""Seconds a connection may take (at most the answer's bound)."""

NETWORK_ERRORS: Final = (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                         TransportError)
"""What a request raises when the network fails it (google-auth wraps the token endpoint's
in ``TransportError``)."""

_ERRNO: Final = re.compile(r"\[Errno -?\d+\] ([^'\"\])]+)")


def timeout_setting(environ: dict[str, str] | None = None) -> tuple[float, float]:
    """``(connect, read)`` seconds from ``NITPICKER_SHEETS_TIMEOUT`` (the read bound, a
    positive number; default :data:`TIMEOUT`); a bad value raises ``ValueError`` (one line)."""
    raw = (os.environ if environ is None else environ).get(TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return min(CONNECT_TIMEOUT, TIMEOUT), TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{TIMEOUT_VARIABLE} must be a number of seconds above 0: {raw!r}")
    return min(CONNECT_TIMEOUT, seconds), seconds


def network_failure(exc: BaseException, timeout: tuple[float, float]) -> str:
    """One line for a request the network failed: what happened, to which host, and the fix."""
    cause = exc.__cause__ if isinstance(exc, TransportError) and exc.__cause__ else exc
    host = _host(cause) or _host(exc) or "Google"
    connect, read = timeout
    if isinstance(cause, requests.exceptions.ConnectTimeout):
        return (f"Cannot connect to {host} within {connect:g} s: check the network (and any"
                " proxy), then re-run")
    if isinstance(cause, requests.exceptions.Timeout):
        return (f"No answer from {host} within {read:g} s ({TIMEOUT_VARIABLE}): try again"
                f" later, or allow longer with {TIMEOUT_VARIABLE}")
    match = _ERRNO.search(str(cause))
    reason = match.group(1).strip() if match else type(cause).__name__
    return f"Cannot reach {host}: {reason}; check the network (and any proxy), then re-run"


def _host(exc: BaseException) -> str | None:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    return urlsplit(url).netloc or None if isinstance(url, str) else None
