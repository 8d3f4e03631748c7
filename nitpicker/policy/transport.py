"""What an https response's headers say about its transport security: the HSTS
``max-age`` (RFC 6797) and the attributes a cookie is set with (RFC 6265bis)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["COOKIE_ATTRIBUTES", "cookie_missing", "cookie_name", "hsts_max_age"]

_MAX_AGE: Final = re.compile(r'\s*max-age\s*=\s*"?(\d+)"?\s*', re.IGNORECASE)

COOKIE_ATTRIBUTES: Final = ("Secure", "HttpOnly", "SameSite")
"""The attributes a cookie of an https site should carry, in the order they are named."""


def hsts_max_age(value: str) -> int | None:
    """The ``max-age`` of a ``Strict-Transport-Security`` value, in seconds; ``None`` when it
    has none (or more than one), which makes the header void."""
    ages = [found.group(1) for directive in value.split(";")
            if (found := _MAX_AGE.fullmatch(directive)) is not None]
    return int(ages[0]) if len(ages) == 1 else None


def cookie_name(value: str) -> str:
    """The name of the cookie a ``Set-Cookie`` value sets."""
    pair = value.split(";", 1)[0]
    return pair.split("=", 1)[0].strip() if "=" in pair else ""


def cookie_missing(value: str) -> str:
    """The attributes of :data:`COOKIE_ATTRIBUTES` a ``Set-Cookie`` value lacks, joined by
    ``", "`` (``""``: none). ``SameSite=None`` counts as set; a cookie with it and without
    ``Secure`` is refused by browsers, which the missing ``Secure`` says."""
    present = {part.split("=", 1)[0].strip().lower() for part in value.split(";")[1:]}
    return ", ".join(name for name in COOKIE_ATTRIBUTES if name.lower() not in present)
