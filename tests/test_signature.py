"""nitpicker.policy.signature: the meta signature shared by the trap cap and ``duplicate-clusters``."""

from __future__ import annotations

import hashlib

import pytest

from nitpicker.policy.extract import PageMeta
from nitpicker.policy.signature import (
    is_signable,
    meta_signature,
    og_url_points_elsewhere,
    page_signature,
    parent_path,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # seed 003 §1: the path minus its last segment
        ("https://host/list/date/2024/", "/list/date"),
        ("https://host/list/date/2025/", "/list/date"),
        ("https://host/list/date/1.5e+32/", "/list/date"),
        ("https://host/list/date/2024", "/list/date"),
        # the query and the fragment are never part of it (§3)
        ("https://host/list?page=1", "/"),
        ("https://host/list?page=1.5e%2B32", "/"),
        ("https://host/list?session=8f3a", "/"),
        ("https://host/list/2024?p=5", "/list"),
        ("https://host/list/2024?p=5#top", "/list"),
        ("https://host/a/b.html#x/y", "/a"),
        ("https://host/a/b?next=/c/d/e", "/a"),
        # trailing slashes are normalised; the root is its own parent
        ("https://host/list/", "/"),
        ("https://host/list//", "/"),
        ("https://host/", "/"),
        ("https://host", "/"),
        ("https://host?q=1", "/"),
        ("https://host:8443/docs/api/v2/", "/docs/api"),
        ("http://user:pw@host/docs/page", "/docs"),
        # a bare path
        ("/x/y", "/x"),
        ("/x/", "/"),
    ],
)
def test_parent_path(url: str, expected: str) -> None:
    assert parent_path(url) == expected


def _sha1(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


def test_signature_is_sha1_of_the_nul_separated_fields() -> None:
    sig = meta_signature("https://host/list/date/2024/", "Archive", "Posts", "Archive | Site",
                         "https://host/list/")
    assert sig == _sha1("/list/date", "Archive", "Posts", "Archive | Site", "https://host/list/")
    assert len(sig) == 40


def test_separators_keep_fields_apart() -> None:
    assert meta_signature("https://h/a/b", "ab", "c", "", "") != meta_signature(
        "https://h/a/b", "a", "bc", "", "")


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("https://h/list?page=1", "https://h/list?page=99", True),  # query trap folds
        ("https://h/list?page=1", "https://h/list?session=x", True),
        ("https://h/date/2024/", "https://h/date/2025/", True),  # path trap folds
        ("https://h/date/2024/", "https://h/date/2024/?utm=1", True),
        ("https://h/blog/post", "https://h/news/post", False),  # same meta, other section
        ("https://h/a/b/c", "https://h/a/b", False),
    ],
)
def test_signature_folds_traps_but_not_sections(first: str, second: str, same: bool) -> None:
    fields = ("Same", "Same description", "Same", "https://h/list")
    assert (meta_signature(first, *fields) == meta_signature(second, *fields)) is same


@pytest.mark.parametrize(
    ("title", "og", "signable"),
    [
        ("Archive", ("website", "", "", "", "", ""), True),
        ("Archive", ("", "", "", "", "https://h/list", ""), True),
        ("", ("website", "Archive", "", "", "https://h/", ""), False),  # empty title
        ("Archive", ("", "", "", "", "", ""), False),  # no Open Graph at all
        ("", ("", "", "", "", "", ""), False),  # e.g. an external link's row
    ],
)
def test_is_signable(title: str, og: tuple[str, ...], signable: bool) -> None:
    assert is_signable(title, og) is signable


def test_page_signature_reads_page_meta() -> None:
    meta = PageMeta(title="Archive", description="Posts", og_title="Archive | Site",
                    og_url="https://host/list/", og_type="website")
    assert page_signature("https://host/list/date/2024/", meta) == meta_signature(
        "https://host/list/date/2024/", "Archive", "Posts", "Archive | Site", "https://host/list/")
    assert page_signature("https://host/x", PageMeta(title="Archive")) is None


@pytest.mark.parametrize(
    ("url", "og_url", "elsewhere"),
    [
        ("https://h/list?page=2", "https://h/list", True),
        ("https://h/date/2024/", "https://h/date/", True),
        ("https://h/post/1", "https://h/post/1", False),
        ("https://h/post/1", "http://h/post/1", False),  # http and https are one page
        ("https://h/post/1", "/post/1", False),  # resolved against the page
        ("https://h/post/1", "https://H/post/1#top", False),  # normalised
        ("https://h/post/1", "", False),  # no og:url, no signal
    ],
)
def test_og_url_points_elsewhere(url: str, og_url: str, elsewhere: bool) -> None:
    assert og_url_points_elsewhere(url, og_url) is elsewhere
