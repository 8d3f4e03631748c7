"""nitpicker.policy.userinfo: credentials typed raw in a URL the user gives, read as a
browser's address bar reads them; the messages that show such a URL hide its password."""

from __future__ import annotations

import pytest

from nitpicker.crawl.config import given_credentials, validate_url
from nitpicker.policy.request_headers import shown_url
from nitpicker.policy.userinfo import typed_url


@pytest.mark.parametrize(
    ("typed", "root", "user", "password"),
    [
        # a raw @ and # in the password: the host is the one after the last @
        ("http://user:p@ss#w@host/", "http://host/", "user", "p@ss#w"),
        ("http://user:p/ss@host/x?y", "http://host/x?y", "user", "p/ss"),
        ("http://user:p?ss@host/", "http://host/", "user", "p?ss"),
        ("http://user:p#ss@host:8080/a/", "http://host:8080/a/", "user", "p#ss"),
        ("http://alice:pa]ss@:%é@localhost:8080/private/", "http://localhost:8080/private/",
         "alice", "pa]ss@:%é"),
        ("https://user:p#@[::1]:8080/", "https://[::1]:8080/", "user", "p#"),
        # as written already: unchanged
        ("http://user:p@ss@host/", "http://host/", "user", "p@ss"),
        ("http://user:p%40ss@host/", "http://host/", "user", "p@ss"),  # an escape stays one
        ("http://alice:pw@host/@team", "http://host/@team", "alice", "pw"),  # @ in the path
    ],
)
def test_a_password_typed_raw_is_read_as_a_browser_reads_it(typed: str, root: str, user: str,
                                                            password: str) -> None:
    assert validate_url(typed) == root
    assert given_credentials([typed]) == ((root, user, password),)
    assert password not in shown_url(typed)


@pytest.mark.parametrize(
    "url",
    ["http://host/#@x", "http://host:8080/@user", "http://exa mple.com/", "mailto:a@b",
     "http://alice:topsecret@exa mple.com/"],
)
def test_urls_without_raw_credentials_are_left_alone(url: str) -> None:
    assert typed_url(url) == url


def test_a_url_it_cannot_mend_still_hides_its_password() -> None:
    for url in ("http://alice:p/ss@exa mple.com/", "http://alice:topsecret@exa mple.com/"):
        shown = shown_url(url)
        assert shown == "http://alice:…@exa mple.com/"
