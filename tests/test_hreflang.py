"""hreflang values as search engines read them (``nitpicker/policy/hreflang.py``)."""

from __future__ import annotations

import pytest

from nitpicker.policy.hreflang import hreflang_problem


@pytest.mark.parametrize(("value", "problem"), [
    ("en", ""),
    ("EN-gb", ""),
    ("x-default", ""),
    ("X-Default", ""),
    ("zh-Hant", ""),
    ("zh-Hant-TW", ""),
    ("pt-BR", ""),
    ("en-UK", "'UK' is not an ISO 3166-1 alpha-2 region code"),
    ("en-EU", "'EU' is not an ISO 3166-1 alpha-2 region code"),
    ("es-419", "'419' is not an ISO 3166-1 alpha-2 region code"),
    ("jp", "'jp' is not an ISO 639-1 language code"),
    ("gb", "'gb' is not an ISO 639-1 language code"),
    ("eng", "'eng' is not an ISO 639-1 language code"),
    ("en_US", "it separates its parts with '_' where hreflang needs '-'"),
    ("", "it is empty"),
    ("zh-Xxxx", "'Xxxx' is not an ISO 15924 script code"),
    ("zh-Xxxx-TW", "'Xxxx' is not an ISO 15924 script code"),
    ("en-US-x", "it is not language[-script][-region]"),
    ("de-DE-1996-x", "it is not language[-script][-region]"),
    ("en US", "it is not language[-script][-region]"),
])
def test_hreflang_values(value: str, problem: str) -> None:
    assert hreflang_problem(value) == problem
