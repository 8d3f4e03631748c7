"""HSTS max-age and cookie attributes (``nitpicker/policy/transport.py``)."""

from __future__ import annotations

import pytest

from nitpicker.policy.transport import cookie_missing, cookie_name, hsts_max_age


@pytest.mark.parametrize(("value", "age"), [
    ("max-age=31536000", 31536000),
    ("max-age=31536000; includeSubDomains; preload", 31536000),
    ("includeSubDomains; MAX-AGE = \"600\"", 600),
    ("max-age=0", 0),
    ("includeSubDomains", None),
    ("max-age=abc", None),
    ("max-age=1; max-age=2", None),  # RFC 6797: a directive twice voids the header
    ("", None),
])
def test_hsts_max_age(value: str, age: int | None) -> None:
    assert hsts_max_age(value) == age


@pytest.mark.parametrize(("value", "name", "missing"), [
    ("sid=abc; Path=/; Secure; HttpOnly; SameSite=Lax", "sid", ""),
    ("sid=abc; secure; httponly; samesite=strict", "sid", ""),
    ("sid=abc", "sid", "Secure, HttpOnly, SameSite"),
    ("sid=abc; Secure", "sid", "HttpOnly, SameSite"),
    ("sid=abc; HttpOnly; SameSite=None", "sid", "Secure"),
    ("pref=a=b; Max-Age=60; Secure; SameSite=Lax", "pref", "HttpOnly"),
    ("sid=abc; Path=/secure", "sid", "Secure, HttpOnly, SameSite"),  # a value, not the flag
])
def test_cookie_attributes(value: str, name: str, missing: str) -> None:
    assert (cookie_name(value), cookie_missing(value)) == (name, missing)
