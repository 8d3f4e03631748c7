"""The SQL functions of the hreflang, sitemap and security checks (:mod:`nitpicker.query.checks`),
over the pure rules of :mod:`nitpicker.policy`:

- ``nitpicker_hreflang_problem(value)``: what is wrong with an hreflang value, ``''`` if valid;
- ``nitpicker_sitemap_scope(sitemap_url, found_in, url)``: why a sitemap may not list ``url``,
  ``''`` if it may;
- ``nitpicker_hsts_max_age(value)``: a ``Strict-Transport-Security`` value's ``max-age``, NULL
  when it has none;
- ``nitpicker_cookie_name(value)``, ``nitpicker_cookie_missing(value)``: the cookie a
  ``Set-Cookie`` value sets, and which of ``Secure``, ``HttpOnly``, ``SameSite`` it lacks;
- ``nitpicker_fragment_target(hash)``: the id a link's fragment must find, NULL when it needs
  none (``#``, ``#top``, a route);
- ``nitpicker_minhash_similarity(a, b)``: the estimated similarity of two MinHash signatures
  (NULL when one is NULL); ``nitpicker_not_found_title(title)``: 1 when a title reads like a
  missing page's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.policy.fragments import fragment_target
from nitpicker.policy.hreflang import hreflang_problem
from nitpicker.policy.near_duplicate import similarity
from nitpicker.policy.not_found import says_not_found
from nitpicker.policy.sitemap_scope import outside_sitemap_scope
from nitpicker.policy.transport import cookie_missing, cookie_name, hsts_max_age

if TYPE_CHECKING:
    import sqlite3

__all__ = ["register_audit_functions"]


def register_audit_functions(conn: sqlite3.Connection) -> None:
    """Register the functions on ``conn`` (idempotent; nothing changes in the file)."""
    conn.create_function("nitpicker_hreflang_problem", 1, hreflang_problem, deterministic=True)
    conn.create_function("nitpicker_sitemap_scope", 3, outside_sitemap_scope,
                         deterministic=True)
    conn.create_function("nitpicker_hsts_max_age", 1, hsts_max_age, deterministic=True)
    conn.create_function("nitpicker_cookie_name", 1, cookie_name, deterministic=True)
    conn.create_function("nitpicker_cookie_missing", 1, cookie_missing, deterministic=True)
    conn.create_function("nitpicker_fragment_target", 1, fragment_target, deterministic=True)
    conn.create_function("nitpicker_minhash_similarity", 2, _similarity, deterministic=True)
    conn.create_function("nitpicker_not_found_title", 1, says_not_found, deterministic=True)


def _similarity(first: bytes | None, second: bytes | None) -> float | None:
    if first is None or second is None:
        return None
    return similarity(first, second)
