"""Reading a request's query parameters: a bad value is a :class:`BadRequest` (HTTP 400)
naming it, never a traceback."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nitpicker.messages import shown_integer

__all__ = ["BadRequest", "NotFound", "choice_param", "int_param", "text_param"]


class BadRequest(Exception):
    """A query parameter the view cannot use (HTTP 400); the message names it."""


class NotFound(Exception):
    """No such archive, page, cluster or view (HTTP 404); the message names what is missing."""


def int_param(params: Mapping[str, str], name: str, default: int | None, low: int, high: int
              ) -> int | None:
    """The integer parameter ``name`` (``default`` when absent or empty), within ``low..high``."""
    raw = params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"Invalid {name}: {raw[:80]!r}. Must be an integer") from None
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
