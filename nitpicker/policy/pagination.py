"""Predictive pagination (SPEC §3.9): from a page's pager links, the pages ahead of them.

Pure functions over normalised URLs (:func:`nitpicker.policy.urls.parse_url`), no Scrapy. A
URL is decomposed into tokens: its path segments and its query values (keys in sorted order,
as normalisation leaves them). Two URLs are pages of one **series** when they have the same
origin (scheme, host and port), the same number of segments, the same query keys, and differ
in exactly one token, which is an integer in both. The series' ``shape`` is the URL with that
token written ``{n}`` (``http://host/news/?page={n}``).

:func:`predict` takes a page's URL and the URLs it links to (the page is a member of its own
series: a page ``?page=4`` linking to ``?page=5`` is a pager too), groups them into series,
and from each series with at least two numbers predicts ``count`` pages ahead:

- the step is the smallest gap between the series' numbers (``1, 2, 3`` → 1; ``0, 20, 40``
  → 20);
- counting starts at the page's own number when it is in the series (else at the smallest),
  and walks up the run of numbers present one step apart (a page 7 linking 6 and 8 walks to
  8; a pager ``1 2 3 … 200`` walks to 3, not to 200);
- the predictions are the next ``count`` numbers of that run, those the page already links
  to left out.

A page that was itself fetched because it was predicted (``predicted=True``) extends a series
it belongs to only when its real links continue it (a link to a number above its own): an
endless pager whose every number answers 200, each page linking the same two years, would
otherwise predict on from every predicted page, without end. The pages it reaches by its
links are predicted from as any page.

What is never predicted: an integer of :data:`MAX_DIGITS` digits or more (a runaway counter,
``/list/date/100000/``), a token with a leading zero (``007``: its width is not known), a
token in scientific notation (``1.5e+32`` is not an integer) and any URL whose path or query
holds one (the post-seed guard of the original's trap tests).

:class:`PredictionLedger` remembers how each shape's predictions answered, so a shape whose
predictions keep missing (a catalogue whose related-product links look like a pager) stops
being predicted: the crawl never pays more than ``count`` wasted requests per shape beyond
the pages that answered; and it caps each shape at :data:`MAX_PREDICTED_PER_SERIES` numbers
predicted past the furthest one predicted before (predictions of numbers already passed are
free: the frontier knows them), so no series, however its pages answer, is predicted without
bound.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = [
    "MAX_DIGITS",
    "MAX_PREDICTED_PER_SERIES",
    "Prediction",
    "PredictionLedger",
    "answered",
    "predict",
    "shapes",
]

MAX_DIGITS = 6
"""Integers this long or longer are never a pager's (the original's runaway-digit guard)."""

MAX_PREDICTED_PER_SERIES = 1000
"""The most numbers a crawl predicts ahead in one series (shape); past them, its pages are
found by their links alone."""

_LIMIT = 10 ** (MAX_DIGITS - 1)
"""The first number too long to predict."""

_DIGIT = re.compile(r"\d")
_INTEGER_TOKEN = re.compile(r"[/?&=][0-9]+(?=[/?&\n]|$)")
"""What every integer token of a normalised URL looks like in it: ASCII digits after a ``/``
(a path segment), ``?`` or ``&`` (a query value without a key) or ``=`` (a query value), up to
a ``/``, ``?``, ``&`` or the end. A URL without such a run has no page number (most links of
a page: ``/news/123.html``, ``/a/b-2/``) and is not taken apart; one with it may still have
none (``?a=b=5``), which :func:`_decompose` and :func:`_integer` decide."""
_SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")
"""Scientific notation (``1.5e+32``, ``2E10``), as a runaway counter leaks it into URLs."""


@dataclass(frozen=True, slots=True)
class Prediction:
    """A page predicted ahead of a page's pager links."""

    url: str
    shape: str
    """The series: the URL with its page number written ``{n}``."""
    number: int
    """The page number predicted."""


@dataclass(frozen=True, slots=True)
class _Parts:
    """A normalised URL taken apart: ``origin`` + ``/`` + segments + ``?`` + query pairs."""

    origin: str
    segments: tuple[str, ...]
    keys: tuple[str | None, ...]
    """One per query pair: its key, or ``None`` for a pair without ``=``."""
    values: tuple[str, ...]

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.segments + self.values

    def with_token(self, index: int, token: str) -> str:
        segments, values = list(self.segments), list(self.values)
        if index < len(segments):
            segments[index] = token
        else:
            values[index - len(segments)] = token
        url = self.origin + "/" + "/".join(segments)
        if self.keys:
            url += "?" + "&".join(
                value if key is None else f"{key}={value}"
                for key, value in zip(self.keys, values, strict=True)
            )
        return url


def _decompose(url: str) -> _Parts | None:
    """``url`` (normalised) taken apart; ``None`` when it has no digit after its origin (no
    page number: most links of a page end here, cheaply) or holds scientific notation."""
    start = url.find("//")
    if start < 0:
        return None
    slash = url.find("/", start + 2)
    if slash < 0 or _DIGIT.search(url, slash) is None or _SCIENTIFIC.search(url, slash):
        return None
    path, _, query = url[slash + 1 :].partition("?")
    keys: list[str | None] = []
    values: list[str] = []
    if query:
        for pair in query.split("&"):
            key, eq, value = pair.partition("=")
            keys.append(key if eq else None)
            values.append(value if eq else key)
    return _Parts(url[:slash], tuple(path.split("/")), tuple(keys), tuple(values))


def _integer(token: str) -> int | None:
    """``token`` as a page number: ASCII digits, no leading zero, fewer than MAX_DIGITS."""
    if not token.isdigit() or not token.isascii() or len(token) >= MAX_DIGITS:
        return None
    if len(token) > 1 and token[0] == "0":
        return None
    return int(token)


@lru_cache(maxsize=4096)
def _numbered(url: str) -> tuple[_Parts | None, tuple[tuple[str, int, int], ...]]:
    """``url`` taken apart, and (shape, number, token index) for each of its integer tokens.

    Cached: a page's navigation and pager links are on many pages, and this is the costly part
    of :func:`predict` (the result is a pure function of ``url``)."""
    parts = _decompose(url)
    if parts is None:
        return None, ()
    found = []
    for index, token in enumerate(parts.tokens):
        number = _integer(token)
        if number is not None:
            found.append((parts.with_token(index, "{n}"), number, index))
    return parts, tuple(found)


def _with_integer_tokens(urls: list[str]) -> list[str]:
    """Those of ``urls`` (normalised) that may hold an integer token, in their order: one scan
    of them all by :data:`_INTEGER_TOKEN` (a URL holds no newline), not one search a URL."""
    joined = "\n".join(urls)
    found: list[str] = []
    index = position = 0
    last = -1
    for match in _INTEGER_TOKEN.finditer(joined):
        start = match.start()
        index += joined.count("\n", position, start)  # the URL the match is in
        position = start
        if index != last:
            found.append(urls[index])
            last = index
    return found


def shapes(url: str) -> list[str]:
    """The series ``url`` can belong to: one shape per integer token."""
    return [shape for shape, _, _ in _numbered(url)[1]]


def predict(page_url: str, links: Iterable[str], count: int,
            allows: Callable[[str], bool] = lambda shape: True, *,
            predicted: bool = False) -> list[Prediction]:
    """Up to ``count`` pages ahead per series found among ``page_url`` and ``links``.

    ``allows(shape)`` vetoes a series (:meth:`PredictionLedger.allows`). With ``predicted``
    (the page was fetched because it was predicted), a series the page belongs to is extended
    only when a link continues it past the page's own number. In the order the series first
    appear on the page.
    """
    if count <= 0:
        return []
    series: dict[str, tuple[_Parts, int, set[int]]] = {}
    own: dict[str, int] = {}
    candidates = _with_integer_tokens(list(dict.fromkeys(links)))
    if not candidates:
        return []
    for position, url in enumerate((page_url, *candidates)):
        if position and url == page_url:
            continue
        parts, numbered = _numbered(url)
        if parts is None:  # no integer token: nothing numbered
            continue
        for shape, number, index in numbered:
            entry = series.get(shape)
            if entry is None:
                series[shape] = (parts, index, {number})
            else:
                entry[2].add(number)
            if position == 0:  # the page itself
                own[shape] = number
    found: list[Prediction] = []
    for shape, (parts, index, numbers) in series.items():
        if len(numbers) < 2 or not allows(shape):
            continue
        ordered = sorted(numbers)
        step = min(b - a for a, b in pairwise(ordered))
        mine = own.get(shape)
        if predicted and mine is not None and ordered[-1] <= mine:
            continue  # no real link continues it: a predicted page does not extend it alone
        current = ordered[0] if mine is None else mine
        while current + step in numbers:
            current += step
        for i in range(1, count + 1):
            number = current + step * i
            if number >= _LIMIT:
                break
            if number not in numbers:
                found.append(Prediction(parts.with_token(index, str(number)), shape, number))
    return found


def answered(status: int | None, *, redirected: bool, skipped: bool) -> bool:
    """Whether a predicted URL answered as a page of its own: a 2xx, not redirected, not
    skipped (robots.txt, an excluded keyword). Anything else is a miss, not recorded."""
    return status is not None and 200 <= status < 300 and not redirected and not skipped


class PredictionLedger:
    """How the predictions of each shape answered; vetoes shapes that keep missing.

    A shape is predicted while its misses do not exceed its answers by more than ``slack``
    (the pages predicted past a pager's last page are ``count`` misses at most), and while it
    has been predicted past its furthest number fewer than ``per_series`` times
    (:meth:`admits`). Bounded: the least recently updated shapes are forgotten past ``size``.
    """

    def __init__(self, slack: int, size: int = 10_000,
                 per_series: int = MAX_PREDICTED_PER_SERIES) -> None:
        self.slack = slack
        self.size = size
        self.per_series = per_series
        self._balance: OrderedDict[str, int] = OrderedDict()
        """shape → misses minus answers."""
        self._reach: OrderedDict[str, tuple[int, int]] = OrderedDict()
        """shape → (the furthest number predicted, how many numbers were predicted past the
        furthest one before)."""

    def admits(self, prediction: Prediction) -> bool:
        """Whether ``prediction`` is within its series' cap, counting it if it goes further
        than the series has been predicted so far."""
        reach = self._reach
        furthest, spent = reach.get(prediction.shape, (-1, 0))
        if prediction.number <= furthest:
            return True
        if spent >= self.per_series:
            return False
        reach[prediction.shape] = (prediction.number, spent + 1)
        reach.move_to_end(prediction.shape)
        while len(reach) > self.size:
            reach.popitem(last=False)
        return True

    def allows(self, shape: str) -> bool:
        return self._balance.get(shape, 0) <= self.slack

    def record(self, url: str, *, hit: bool) -> None:
        """A predicted ``url`` answered (``hit``) or missed."""
        balance = self._balance
        for shape in shapes(url):
            balance[shape] = balance.get(shape, 0) + (-1 if hit else 1)
            balance.move_to_end(shape)
        while len(balance) > self.size:
            balance.popitem(last=False)
