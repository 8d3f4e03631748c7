"""The stable fingerprint of a finding (``nitpicker/query/fingerprint.py``) and what
``nitpicker diff`` makes of it: a page crawled twice, its ``<title>`` alone changed, audited by
axe both times, has no new and no fixed analyzer finding (issue 26); the locator's rules."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from fixtures.site import FixtureSite
from nitpicker.query.fingerprint import (
    finding_fingerprint,
    locator,
    markup_outline,
    violation_fingerprint,
)
from tests.helpers import run

if TYPE_CHECKING:
    from pathlib import Path


def test_a_title_only_change_gives_no_new_and_no_fixed_axe_finding(tmp_path: Path) -> None:
    """axe quotes the whole ``<html>`` of a small page (its title too) in the findings of
    the rules about the document (a main landmark, a level-one heading): the same findings
    once the title changed."""
    with FixtureSite() as site:
        url = site.url("/defects/retitled")
        for name in ("old", "new"):
            result = run("crawl", "--list", url, "-o", name, "--silent", cwd=tmp_path)
            assert result.returncode == 0, result.stderr
            site.changed = True
    for name in ("old", "new"):
        result = run("analyze", f"{name}.nitpicker", "--plugin", "axe", "--silent",
                     cwd=tmp_path, timeout=300)
        assert result.returncode == 0, result.stderr
    result = run("diff", "old.nitpicker", "new.nitpicker", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    diff = json.loads(result.stdout)
    categories = diff["categories"]
    assert [item["field"] for item in categories["page_changes"]["items"]] == ["title"]
    assert categories["violations_new"]["items"] == []
    assert categories["violations_fixed"]["items"] == []
    persisting = categories["violations_persisting"]["items"]
    assert {item["rule"] for item in persisting} >= {"image-alt", "landmark-one-main"}
    assert any("<title>Old title</title>" in (item["code"] or "") for item in persisting) or any(
        "<title>New title</title>" in (item["code"] or "") for item in persisting)


@pytest.mark.parametrize(("code", "outline"), [
    ('<p class="a">\n  Hello <b>you</b></p>', '<p class="a"><b></b></p>'),
    ("<html lang=\"en\"><head><title>Old</title></head><body>x</body></html>",
     '<html lang="en"><head><title></title></head><body></body></html>'),
    ("Found  TODO here", "Found TODO here"),  # not markup
    ("<b>unclosed", "<b>unclosed"),
])
def test_markup_outline(code: str, outline: str) -> None:
    assert markup_outline(code) == outline


def test_the_locator_is_the_element_else_the_markup_else_the_message() -> None:
    assert locator(" #main >  img ", "<img src=a>", "m") == "#main > img"
    assert locator(None, "<title>A</title>", "m") == locator(None, "<title>B</title>", "n")
    assert locator(None, "-", "Found  TODO") == locator("", "", "Found TODO") == "Found TODO"


@pytest.mark.parametrize(("a", "b", "same"), [
    (("axe", "region", "http://x/", "html", '<html><title>A</title></html>', "m"),
     ("axe", "region", "http://x/", "html", '<html><title>B</title><p>new</p></html>', "m"),
     True),  # the element decides: the rest of the page changed
    (("axe", "image-alt", "http://x/", "#a", "<img>", "m"),
     ("axe", "image-alt", "http://x/", "#b", "<img>", "m"), False),  # another element
    (("axe", "image-alt", "http://x/", None, "<img src=a>", "m"),
     ("axe", "image-alt", "http://x/b", None, "<img src=a>", "m"), False),  # another page
    (("axe", "image-alt", "http://x/", None, "<img src=a>", "m"),
     ("markuplint", "image-alt", "http://x/", None, "<img src=a>", "m"), False),
])
def test_violation_fingerprint(a: tuple[str | None, ...], b: tuple[str | None, ...],
                               same: bool) -> None:
    assert (violation_fingerprint(*a) == violation_fingerprint(*b)) is same
    assert -(2 ** 63) <= violation_fingerprint(*a) < 2 ** 63


def test_a_checks_fingerprint_is_its_rule_url_and_element() -> None:
    one = finding_fingerprint("links/no-text", "http://x/", "http://x/a")
    assert one == finding_fingerprint("links/no-text", "http://x/", "http://x/a")
    assert one != finding_fingerprint("links/no-text", "http://x/", "http://x/b")
    assert one != finding_fingerprint("links/to-redirect", "http://x/", "http://x/a")
