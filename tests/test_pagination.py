"""nitpicker.policy.pagination: series detection and prediction, without a network.

The middleware and the crawl: tests/test_pagination_crawl.py.
"""

from __future__ import annotations

import re

import pytest

from nitpicker.policy.pagination import (
    MAX_DIGITS,
    MAX_PREDICTED_PER_SERIES,
    Prediction,
    PredictionLedger,
    answered,
    predict,
    shapes,
)

H = "https://example.com"


def urls(page: str, links: list[str], count: int = 3) -> list[str]:
    return [p.url for p in predict(page, links, count)]


@pytest.mark.parametrize(
    ("page", "links", "expected"),
    [
        # Two links differing in one integer token, in the path.
        (f"{H}/news/", [f"{H}/news/page/1", f"{H}/news/page/2"],
         [f"{H}/news/page/3", f"{H}/news/page/4", f"{H}/news/page/5"]),
        # ... in a query value (other keys kept, sorted as normalisation leaves them).
        (f"{H}/list", [f"{H}/list?page=2&sort=new", f"{H}/list?page=3&sort=new"],
         [f"{H}/list?page=4&sort=new", f"{H}/list?page=5&sort=new", f"{H}/list?page=6&sort=new"]),
        # The page itself is a member: a "next" link alone on page 4 is a pager.
        (f"{H}/p/4", [f"{H}/p/5", f"{H}/about"], [f"{H}/p/6", f"{H}/p/7", f"{H}/p/8"]),
        # Prev and next around the page: step 1 from the page, ahead of next.
        (f"{H}/p/7", [f"{H}/p/6", f"{H}/p/8"], [f"{H}/p/9", f"{H}/p/10", f"{H}/p/11"]),
        # A pager "1 2 3 … 200": the run from the page (1) ends at 3; 200 is left out.
        (f"{H}/p/1", [f"{H}/p/2", f"{H}/p/3", f"{H}/p/200"], [f"{H}/p/4", f"{H}/p/5", f"{H}/p/6"]),
        # Not a member: the run starts at the smallest number (5, linked, is not predicted).
        (f"{H}/", [f"{H}/p/1", f"{H}/p/2", f"{H}/p/5"], [f"{H}/p/3", f"{H}/p/4"]),
        # Offsets: the step is the smallest gap.
        (f"{H}/s", [f"{H}/s?offset=0", f"{H}/s?offset=20", f"{H}/s?offset=40"],
         [f"{H}/s?offset=60", f"{H}/s?offset=80", f"{H}/s?offset=100"]),
        # Trailing slash kept; port kept.
        ("http://h:8010/a/", ["http://h:8010/a/1/", "http://h:8010/a/2/"],
         ["http://h:8010/a/3/", "http://h:8010/a/4/", "http://h:8010/a/5/"]),
        # A key without a value is kept as written.
        (f"{H}/q", [f"{H}/q?flag&p=1", f"{H}/q?flag&p=2"],
         [f"{H}/q?flag&p=3", f"{H}/q?flag&p=4", f"{H}/q?flag&p=5"]),
        # A page number with no key, the last pair, next to digits that are no token: every
        # place a number can be is seen among links that have none (the links are scanned
        # for integer tokens before any is taken apart).
        (f"{H}/q", [f"{H}/a_1.html", f"{H}/q?x=a1&2", f"{H}/b-2/c", f"{H}/q?x=a1&3"],
         [f"{H}/q?x=a1&4", f"{H}/q?x=a1&5", f"{H}/q?x=a1&6"]),
        (f"{H}/", [f"{H}/1/2/a", f"{H}/1/3/a", f"{H}/v2/x"],
         [f"{H}/1/4/a", f"{H}/1/5/a", f"{H}/1/6/a"]),
    ],
)
def test_predicts_the_pages_ahead(page: str, links: list[str], expected: list[str]) -> None:
    assert urls(page, links) == expected


@pytest.mark.parametrize(
    ("page", "links"),
    [
        # One page number only.
        (f"{H}/", [f"{H}/p/1", f"{H}/about"]),
        # Two tokens differ.
        (f"{H}/", [f"{H}/a/1/x/1", f"{H}/a/2/x/2"]),
        # Not integers.
        (f"{H}/", [f"{H}/p/a", f"{H}/p/b"]),
        (f"{H}/", [f"{H}/p/1.5", f"{H}/p/2.5"]),
        (f"{H}/", [f"{H}/p/-1", f"{H}/p/-2"]),
        # Digits inside a token are not a token.
        (f"{H}/", [f"{H}/list_1.html", f"{H}/list_2.html"]),
        # Other host, other port, other scheme, other segment count, other keys.
        (f"{H}/", [f"{H}/p/1", "https://other.example/p/2"]),
        ("http://h:1/", ["http://h:1/p/1", "http://h:2/p/2"]),
        (f"{H}/", [f"{H}/p/1", "http://example.com/p/2"]),
        (f"{H}/", [f"{H}/p/1", f"{H}/p/2/x"]),
        (f"{H}/", [f"{H}/p?a=1", f"{H}/p?b=2"]),
        # Leading zeros: the width is unknown.
        (f"{H}/", [f"{H}/p/01", f"{H}/p/02"]),
        # Runaway digits (MAX_DIGITS or more) and scientific notation.
        (f"{H}/", [f"{H}/list/date/123456/", f"{H}/list/date/123457/"]),
        (f"{H}/", [f"{H}/list/date/1.5e+32/", f"{H}/list/date/1.6e+32/"]),
        (f"{H}/", [f"{H}/d/1e+21/p/1", f"{H}/d/1e+21/p/2"]),
        (f"{H}/", [f"{H}/d/2E10?p=1", f"{H}/d/2E10?p=2"]),
        # The page's own URL alone is no series.
        (f"{H}/p/3", [f"{H}/p/3"]),
    ],
)
def test_predicts_nothing(page: str, links: list[str]) -> None:
    assert urls(page, links) == []


def test_never_a_number_of_max_digits_or_scientific_notation() -> None:
    page = f"{H}/list/date/99998/"
    found = urls(page, [f"{H}/list/date/99997/", f"{H}/list/date/99999/"], count=10)
    assert found == []  # 100000 and beyond have MAX_DIGITS digits
    found = urls(f"{H}/y/99990", [f"{H}/y/99991"], count=10)
    assert found == [f"{H}/y/{n}" for n in range(99992, 100000)]
    assert not any(re.search(rf"\d{{{MAX_DIGITS}}}|\d[eE][+-]?\d", u) for u in found)


def test_count_and_links_already_there() -> None:
    assert urls(f"{H}/p/1", [f"{H}/p/2"], count=0) == []
    assert urls(f"{H}/p/1", [f"{H}/p/2"], count=1) == [f"{H}/p/3"]
    # Numbers the page links to are not predicted again.
    assert urls(f"{H}/p/1", [f"{H}/p/2", f"{H}/p/4"], count=3) == [f"{H}/p/3", f"{H}/p/5"]


def test_several_series_and_their_shapes() -> None:
    found = predict(f"{H}/", [f"{H}/a?page=1", f"{H}/a?page=2", f"{H}/b/1", f"{H}/b/2"], 1)
    assert [(p.url, p.shape) for p in found] == [
        (f"{H}/a?page=3", f"{H}/a?page={{n}}"),
        (f"{H}/b/3", f"{H}/b/{{n}}"),
    ]


@pytest.mark.parametrize(
    ("page", "links", "expected"),
    [
        # An endless pager: every page links the same two years. A predicted page in the
        # series, with no link past its own number, extends nothing.
        (f"{H}/t/2022/", [f"{H}/t/2020/", f"{H}/t/2021/"], []),
        (f"{H}/t/2031/", [f"{H}/t/2020/", f"{H}/t/2021/", f"{H}/t/2030/"], []),
        # A real link continuing it: predicted on from the run the links make.
        (f"{H}/p/11", [f"{H}/p/10", f"{H}/p/12"], [f"{H}/p/13", f"{H}/p/14"]),
        (f"{H}/p/11", [f"{H}/p/12"], [f"{H}/p/13", f"{H}/p/14"]),
        # A series the page is not a member of: its links are real, as on any page.
        (f"{H}/t/2022/", [f"{H}/a/1", f"{H}/a/2"], [f"{H}/a/3", f"{H}/a/4"]),
    ],
)
def test_a_predicted_page_extends_its_series_only_when_its_links_do(
    page: str, links: list[str], expected: list[str]
) -> None:
    assert [p.url for p in predict(page, links, 2, predicted=True)] == expected


def test_the_same_page_fetched_by_a_link_predicts_as_before() -> None:
    assert urls(f"{H}/t/2020/", [f"{H}/t/2020/", f"{H}/t/2021/"], count=2) == [
        f"{H}/t/2022/", f"{H}/t/2023/"]
    assert [p.number for p in predict(f"{H}/p/1", [f"{H}/p/2"], 2)] == [3, 4]


def test_the_ledger_caps_each_series() -> None:
    ledger = PredictionLedger(slack=10, per_series=3)
    shape = f"{H}/t/{{n}}/"

    def ahead(number: int, series: str = shape) -> Prediction:
        return Prediction(series.replace("{n}", str(number)), series, number)

    assert [ledger.admits(ahead(n)) for n in (5, 6, 7, 8)] == [True, True, True, False]
    assert ledger.admits(ahead(6))  # behind the furthest: already counted, free
    assert not ledger.admits(ahead(9))
    assert ledger.admits(ahead(1, f"{H}/u/{{n}}/"))  # another series has its own count
    assert PredictionLedger(slack=0).per_series == MAX_PREDICTED_PER_SERIES == 1000


def test_a_vetoed_shape_is_not_predicted() -> None:
    links = [f"{H}/a/1", f"{H}/a/2", f"{H}/b/1", f"{H}/b/2"]
    found = predict(f"{H}/", links, 1, allows=lambda shape: "/a/" not in shape)
    assert [p.url for p in found] == [f"{H}/b/3"]


def test_shapes() -> None:
    assert shapes(f"{H}/y/2024/p/3") == [f"{H}/y/{{n}}/p/3", f"{H}/y/2024/p/{{n}}"]
    assert shapes(f"{H}/about") == []
    assert shapes("http://h:8010/about") == []  # the port's digits are no page number


@pytest.mark.parametrize(
    ("status", "redirected", "skipped", "expected"),
    [
        (200, False, False, True),
        (204, False, False, True),
        (200, True, False, False),   # a redirect: the predicted page is not a page of its own
        (200, False, True, False),   # robots.txt, an excluded keyword
        (301, False, False, False),
        (404, False, False, False),
        (410, False, False, False),
        (500, False, False, False),
        (-1, False, False, False),   # a network error
        (None, False, False, False),
    ],
)
def test_answered(status: int | None, redirected: bool, skipped: bool, expected: bool) -> None:
    assert answered(status, redirected=redirected, skipped=skipped) is expected


def test_the_ledger_vetoes_a_shape_that_keeps_missing() -> None:
    ledger = PredictionLedger(slack=2)
    shape = f"{H}/item/{{n}}"
    for n in range(2):
        ledger.record(f"{H}/item/{n + 10}", hit=False)
    assert ledger.allows(shape)  # a pager's end: misses up to the slack
    ledger.record(f"{H}/item/12", hit=False)
    assert not ledger.allows(shape)
    ledger.record(f"{H}/item/13", hit=True)
    assert ledger.allows(shape)  # answers earn it back
    assert ledger.allows(f"{H}/other/{{n}}")


def test_the_ledger_is_bounded() -> None:
    ledger = PredictionLedger(slack=0, size=2)
    for name in ("a", "b", "c"):
        ledger.record(f"{H}/{name}/1", hit=False)
    assert ledger.allows(f"{H}/a/{{n}}")  # forgotten
    assert not ledger.allows(f"{H}/c/{{n}}")
