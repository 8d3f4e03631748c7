"""Reading a request's query parameters: a bad value is a :class:`BadRequest` (HTTP 400)
naming it, never a traceback."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from nitpicker.messages import shown_integer

__all__ = ["BadRequest", "NotFound", "ascii_int", "choice_param", "int_param", "text_param"]

_ASCII_INT: Final = re.compile(r"-?[0-9]{1,4000}")
"""An integer as a URL writes one: ASCII digits, an optional minus. ``str.isdigit`` and
``int()`` take more (``²``, ``١``, ``1_000``, ``+1``, surrounding spaces); no number the
viewer makes looks like that, and ``int('²')`` raises."""


class BadRequest(Exception):
    """A query parameter the view cannot use (HTTP 400); the message names it."""


class NotFound(Exception):
    """No such archive, page, cluster or view (HTTP 404); the message names what is missing."""


def ascii_int(raw: str) -> int | None:
    """``raw`` as an integer when it is ASCII digits (an optional ``-``), else ``None``."""
    return int(raw) if _ASCII_INT.fullmatch(raw) else None


def int_param(params: Mapping[str, str], name: str, default: int | None, low: int, high: int
              ) -> int | None:
    """The integer parameter ``name`` (``default`` when absent or empty), within ``low..high``."""
    raw = params.get(name, "").strip()
    if not raw:
        return default
    value = ascii_int(raw)
    if value is None:
        raise BadRequest(f"Invalid {name}: {raw[:80]!r}. Must be an integer")
    if not low <= value <= high:
        raise BadRequest(f"Invalid {name}: {shown_integer(value)}. "
                         f"Must be between {low} and {high}")
    return value


def choice_param(params: Mapping[str, str], name: str, allowed: Sequence[str], default: str
                 ) -> str:
    """The parameter ``name``, one of ``allowed`` (``default`` when absent or empty)."""
    value = params.get(name, "").strip() or default
    if value not in allowed:
        raise BadRequest(f"Invalid {name}: {value[:80]!r}. Must be one of: {', '.join(allowed)}")
    return value


def text_param(params: Mapping[str, str], name: str, *, max_length: int = 2000) -> str:
    """The text parameter ``name`` ("" when absent), at most ``max_length`` characters."""
    value = params.get(name, "")
    if len(value) > max_length:
        raise BadRequest(f"Invalid {name}: longer than {max_length} characters")
    return value
