"""Which element a link's fragment must find (``nitpicker/policy/fragments.py``)."""

from __future__ import annotations

import pytest

from nitpicker.policy.fragments import fragment_target


@pytest.mark.parametrize(("fragment", "expected"), [
    ("intro", "intro"),
    ("Intro", "Intro"),  # ids are case-sensitive
    ("caf%C3%A9", "café"),  # percent-decoded as UTF-8
    ("a%20b", "a b"),
    ("%FF", "\ufffd"),  # not UTF-8: names no id a page can have
    ("", None),  # "#" alone: the top of the page
    (None, None),
    ("top", None),
    ("TOP", None),
    ("%74op", None),
    (":~:text=first", None),  # a text fragment
    ("/about", None),  # a single-page application's route
    ("!/about", None),
    ("topic", "topic"),
])
def test_fragment_target(fragment: str | None, expected: str | None) -> None:
    assert fragment_target(fragment) == expected
