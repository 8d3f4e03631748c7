"""A URL typed as a crawl root (nitpicker/policy/roots.py): normalised as the crawl keys it, or
refused with a message naming it, its password hidden."""

from __future__ import annotations

import pytest

from nitpicker.policy.roots import InvalidRoot, root_url
from nitpicker.policy.urls import MAX_URL_LENGTH


@pytest.mark.parametrize(("typed", "disable_queries", "root"), [
    ("HTTP://Example.com", False, "http://example.com/"),
    ("https://example.com/a//b?z=1&a=2#top", False, "https://example.com/a/b?a=2&z=1"),
    ("https://example.com/a?z=1", True, "https://example.com/a"),
    ("http://example.com/[root]/", False, "http://example.com/%5Broot%5D/"),
    ("https://alice:p@ss@example.com/", False, "https://example.com/"),  # credentials: no key
])
def test_a_root_is_normalised_as_the_crawl_keys_it(typed: str, disable_queries: bool,
                                                   root: str) -> None:
    assert root_url(typed, disable_queries=disable_queries) == root


@pytest.mark.parametrize(("typed", "message"), [
    ("ftp://example.com/", 'Invalid URL: "ftp://example.com/"'),
    ("not a url", 'Invalid URL: "not a url"'),
    ("http://exa mple.com/", 'Invalid URL: "http://exa mple.com/"'),
    ("https://alice:secret@exa mple.com/", 'Invalid URL: "https://alice:…@exa mple.com/"'),
    ("http://example.com/" + "x" * MAX_URL_LENGTH,
     (f"URL too long ({len('http://example.com/') + MAX_URL_LENGTH} characters, at most "
      f"{MAX_URL_LENGTH})")),
])
def test_a_url_that_cannot_be_a_root_is_refused_naming_it(typed: str, message: str) -> None:
    with pytest.raises(InvalidRoot) as refused:
        root_url(typed)
    assert str(refused.value).startswith(message)
    assert "secret" not in str(refused.value)
    assert isinstance(refused.value, ValueError)
