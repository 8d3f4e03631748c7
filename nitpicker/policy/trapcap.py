"""TrapCap: the state and the policy of the crawl-time trap cap (``--dedupe-cap``, seed 003).

A crawler trap serves endless URLs with one template (``/list/date/{year}/`` running into
``1.5e+32``, ``?page=N``, ``?session=<random>``). Every in-scope page is folded into its meta
signature (:func:`nitpicker.policy.signature.page_signature`: parent path, title, description,
``og:title``, ``og:url``); :meth:`TrapCap.observe` counts the pages of each signature, and a
signature whose count reaches its *threshold* is **capped**: from then on the links of its
pages are not queued. Pages already fetched stay recorded.

The threshold of a page (:meth:`TrapCap.threshold` of :meth:`TrapCap.signals`, seed 003 §3):

==========================================================  ==============================
signals on the page                                          threshold (``cap`` = N)
==========================================================  ==============================
a legit signal: ``og:url`` or ``<link rel=canonical>`` is    ``5 × N``
the page itself, an ordinal ends the title (``Page 3``,
``ページ 3``, ``- 3``, ``(3)``), ``rel=prev``/``rel=next``
otherwise a trap signal: ``og:url`` names another page       ``ceil(0.3 × N)``
(the parent list)
neither                                                      ``N``
==========================================================  ==============================

Memory stays bounded however long the crawl (seed 003 §4), by four layers:

(a) **sticky**: a capped signature moves to a set of hex digests and leaves the counting map;
    checking it later is one set lookup.
(b) **age**: each counted signature remembers the *anchor index* (how many links the crawl had
    seen) when it was first seen; one not capped within ``age_window`` more links is dropped
    (a trap accelerates inside the window; a signature seen again later restarts at zero).
    A deque in first-seen order, deleted from lazily, makes this O(1) amortised.
(c) **buckets**: signatures are grouped by host and parent path; every ``bucket_check_every``
    counted pages, up to ``buckets_per_check`` buckets (round robin) are checked through the
    injected ``has_pending_under(prefix)`` and a bucket with nothing left to fetch under its
    path is dropped whole.
(d) **LRU**: at most ``map_cap`` signatures are counted; beyond, the least recently seen goes.

The policy methods (:meth:`~TrapCap.signals`, :meth:`~TrapCap.threshold`,
:meth:`~TrapCap.is_trap`) are public: override them in a subclass. No I/O here; the crawl's
:class:`nitpicker.middlewares.trapcap.TrapCapMiddleware` drives it.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from nitpicker.policy.signature import (
    SignatureMeta,
    og_url_points_elsewhere,
    page_signature,
    parent_path,
)
from nitpicker.policy.urls import frontier_key

if TYPE_CHECKING:
    from collections.abc import Callable
    from collections.abc import Set as AbstractSet

__all__ = [
    "CANONICAL_SELF",
    "OG_URL_ELSEWHERE",
    "OG_URL_SELF",
    "REL_PREV_NEXT",
    "TITLE_ORDINAL",
    "TrapCap",
    "TrapMeta",
    "TrapSignals",
    "Verdict",
    "bucket_of",
    "title_has_ordinal",
]

OG_URL_ELSEWHERE = "og:url elsewhere"
"""Trap signal: ``og:url`` names another page than this one (the parent list)."""
OG_URL_SELF = "og:url self"
"""Legit signal: ``og:url`` is this page."""
CANONICAL_SELF = "canonical self"
"""Legit signal: ``<link rel=canonical>`` is this page."""
TITLE_ORDINAL = "title ordinal"
"""Legit signal: the title ends with a page number (``Page 3``, ``ページ 3``, ``- 3``, ``(3)``)."""
REL_PREV_NEXT = "rel prev/next"
"""Legit signal: the page has ``<link rel=prev>`` or ``<link rel=next>``."""


class TrapMeta(SignatureMeta, Protocol):
    """The page metadata the trap cap reads (``nitpicker.policy.extract.PageMeta`` is one)."""

    @property
    def canonical(self) -> str: ...
    @property
    def prev(self) -> str: ...
    @property
    def next(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TrapSignals:
    """The trap and legit signals found on one page (names from this module's constants)."""

    trap: tuple[str, ...] = ()
    legit: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :meth:`TrapCap.observe` decided about one page."""

    signature: str
    url: str
    capped: bool
    """The page's signature is capped: its links are not to be queued."""
    fired: bool
    """This page made its signature reach the threshold (it is capped from this page on)."""
    count: int | None
    """Pages counted with this signature, this one included; ``None`` when it was capped
    earlier (a capped signature keeps no count)."""
    threshold: int | None
    """This page's threshold; ``None`` when it was not needed (the count is below
    :meth:`TrapCap.min_threshold`, or the signature was capped earlier)."""
    first_url: str = ""
    """The first page counted with this signature (set when ``fired``)."""
    signals: TrapSignals | None = None
    """The signals that gave this page its threshold (set when ``fired``): the score the
    audit log records with the firing."""

    @property
    def parent_path(self) -> str:
        """The parent path of the page (and of every page of its signature)."""
        return parent_path(self.url)


# An ordinal at the end of a title: "Page 3", "p. 3", "Page 3 of 10", "ページ 3", "第3ページ",
# "3ページ目", "#3", "- 3" / "| 3" (after a space), "(3)", "[3]", "（3）".
_ORDINAL = re.compile(
    r"""(?:
        (?:\bpage|\bpg\.?|\bp\.|\bno\.|ページ|頁|[#№])\s*\d+(?:\s*(?:of|/)\s*\d+)?
      | 第\s*\d+\s*(?:ページ|頁|page)?
      | \d+\s*(?:ページ|頁)目?
      | (?<!\S)[-–—|·]\s*\d+
      | [(\[（]\s*\d+\s*[)\]）]
    )\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_SITE_NAME_SEPARATORS = (" | ", " - ", " – ", " — ", " :: ", " · ")


def title_has_ordinal(title: str) -> bool:
    """Whether ``title`` ends with a page number, or does once a ``| Site name`` is cut off.

    >>> title_has_ordinal("Articles - Page 3"), title_has_ordinal("Page 3 | Example")
    (True, True)
    >>> title_has_ordinal("COVID-19"), title_has_ordinal("Top 10")
    (False, False)
    """
    if _ORDINAL.search(title):
        return True
    cut = max(title.rfind(separator) for separator in _SITE_NAME_SEPARATORS)
    return cut > 0 and _ORDINAL.search(title[:cut]) is not None


def bucket_of(url: str) -> str:
    """The bucket of a page: its frontier-key prefix for host and parent path.

    >>> bucket_of("https://host:8080/list/date/2024/")
    '//host:8080/list/date/'
    >>> bucket_of("https://host/list?page=2")
    '//host/'
    """
    key = frontier_key(url)
    slash = key.find("/", 2) if key.startswith("//") else -1
    authority = key[:slash] if slash >= 0 else key.split("?", 1)[0].split("#", 1)[0]
    path = parent_path(url)
    return authority + (path if path == "/" else path + "/")


class _Bucket:
    """The counted signatures of one host + parent path."""

    __slots__ = ("prefix", "signatures")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.signatures: set[str] = set()


class _Entry:
    """One counted signature."""

    __slots__ = ("bucket", "count", "first_seen", "first_url", "signature")

    def __init__(self, signature: str, first_seen: int, first_url: str, bucket: _Bucket) -> None:
        self.signature = signature
        self.count = 0
        self.first_seen = first_seen
        self.first_url = first_url
        self.bucket = bucket


_COMPACT_SLACK = 1024


class TrapCap:
    """Counts pages per meta signature and caps the signatures of crawler traps."""

    LEGIT_FACTOR = 5
    """A page with a legit signal needs ``LEGIT_FACTOR × cap`` pages to cap its signature."""
    TRAP_PERCENT = 30
    """A page with a trap signal (and no legit one) caps at ``ceil(TRAP_PERCENT % × cap)``."""

    def __init__(
        self,
        cap: int,
        *,
        age_window: int = 5000,
        map_cap: int = 100_000,
        has_pending_under: Callable[[str], bool] | None = None,
        bucket_check_every: int = 500,
        buckets_per_check: int = 50,
    ) -> None:
        for name, value in (("cap", cap), ("age_window", age_window), ("map_cap", map_cap),
                            ("bucket_check_every", bucket_check_every),
                            ("buckets_per_check", buckets_per_check)):
            if value < 1:
                raise ValueError(f"TrapCap {name} must be at least 1, got {value}")
        self.cap = cap
        self.age_window = age_window
        self.map_cap = map_cap
        self.bucket_check_every = bucket_check_every
        self.buckets_per_check = buckets_per_check
        self._has_pending_under = has_pending_under
        self.anchor_index = 0
        """Links the crawl has seen so far (advanced by :meth:`advance` / :meth:`advance_to`)."""
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently seen first
        self._ages: deque[_Entry] = deque()  # first seen first; stale items skipped
        self._buckets: dict[str, _Bucket] = {}
        self._rotation: deque[_Bucket] = deque()  # round robin of the bucket checks
        self._sticky: set[str] = set()
        self._min_threshold: int | None = None
        self.observed = 0
        """Signed pages counted (or found capped)."""
        self.fired = 0
        self.evicted_age = 0
        self.evicted_bucket = 0
        self.evicted_lru = 0
        self.buckets_dropped = 0
        self.peak_entries = 0

    # -- the policy (override in a subclass) ------------------------------------------------

    def signals(self, url: str, meta: TrapMeta) -> TrapSignals:
        """The trap and legit signals of the page at ``url`` (seed 003 §3)."""
        trap: list[str] = []
        legit: list[str] = []
        og_url = meta.og_url
        if og_url:
            if og_url != url and og_url_points_elsewhere(url, og_url):
                trap.append(OG_URL_ELSEWHERE)
            else:
                legit.append(OG_URL_SELF)
        # The same comparison: does the href name this page (http and https alike)?
        canonical = meta.canonical
        if canonical and (canonical == url or not og_url_points_elsewhere(url, canonical)):
            legit.append(CANONICAL_SELF)
        if title_has_ordinal(meta.title):
            legit.append(TITLE_ORDINAL)
        if meta.prev or meta.next:
            legit.append(REL_PREV_NEXT)
        return TrapSignals(tuple(trap), tuple(legit))

    def threshold(self, signals: TrapSignals) -> int:
        """Pages of one signature it takes to cap it, for a page with these signals."""
        if signals.legit:
            return self.cap * self.LEGIT_FACTOR
        if signals.trap:
            return max(1, -(-self.cap * self.TRAP_PERCENT // 100))  # ceil
        return self.cap

    def is_trap(self, count: int, threshold: int) -> bool:
        """Whether a signature counted ``count`` times is a trap, at this threshold."""
        return count >= threshold

    def min_threshold(self) -> int:
        """The lowest threshold any page can have (trap signal, none, legit signal).

        A page's signals are only read once its signature's count reaches it: most signatures
        are seen once, and reading the signals (resolving ``og:url`` and the canonical URL) is
        most of the cost of a page. Override it too if your :meth:`threshold` or
        :meth:`is_trap` can fire below it.
        """
        return min(self.threshold(TrapSignals(trap=(OG_URL_ELSEWHERE,))),
                   self.threshold(TrapSignals()),
                   self.threshold(TrapSignals(legit=(OG_URL_SELF,))))

    # -- the state --------------------------------------------------------------------------

    def advance(self, links: int) -> None:
        """``links`` more links were seen; signatures too old to be traps are dropped."""
        if links > 0:
            self.anchor_index += links
            self._expire()

    def advance_to(self, anchor_index: int) -> None:
        """The crawl has seen ``anchor_index`` links in all (never moves backwards)."""
        if anchor_index > self.anchor_index:
            self.anchor_index = anchor_index
            self._expire()

    def observe(self, url: str, meta: TrapMeta) -> Verdict | None:
        """Count the in-scope page at ``url``; ``None`` when it has no signature."""
        signature = page_signature(url, meta)
        if signature is None:
            return None
        self.observed += 1
        if signature in self._sticky:
            return Verdict(signature, url, capped=True, fired=False, count=None, threshold=None)
        self._expire()
        entry = self._entries.get(signature)
        if entry is None:
            entry = self._add(signature, url)
        else:
            self._entries.move_to_end(signature)
        entry.count += 1
        if self._min_threshold is None:
            self._min_threshold = self.min_threshold()
        threshold = None
        signals = None
        if entry.count >= self._min_threshold:
            signals = self.signals(url, meta)
            threshold = self.threshold(signals)
        if threshold is not None and self.is_trap(entry.count, threshold):
            verdict = Verdict(signature, url, capped=True, fired=True, count=entry.count,
                              threshold=threshold, first_url=entry.first_url, signals=signals)
            self._remove(entry)
            self._sticky.add(signature)
            self.fired += 1
        else:
            verdict = Verdict(signature, url, capped=False, fired=False, count=entry.count,
                              threshold=threshold)
        if self.observed % self.bucket_check_every == 0:
            self.check_buckets()
        self._compact()
        return verdict

    def immunise(self, signature: str) -> None:
        """Mark ``signature`` capped (e.g. one capped by an earlier run of the crawl)."""
        entry = self._entries.get(signature)
        if entry is not None:
            self._remove(entry)
            self._compact()
        self._sticky.add(signature)

    def is_capped(self, signature: str) -> bool:
        return signature in self._sticky

    def count(self, signature: str) -> int:
        """Pages counted with ``signature`` (0 when it is not in the counting map)."""
        entry = self._entries.get(signature)
        return entry.count if entry is not None else 0

    def is_counted(self, signature: str) -> bool:
        """Whether ``signature`` is in the counting map."""
        return signature in self._entries

    @property
    def entries(self) -> int:
        """Signatures in the counting map."""
        return len(self._entries)

    @property
    def buckets(self) -> int:
        """Host + parent path buckets holding counted signatures."""
        return len(self._buckets)

    @property
    def sticky(self) -> AbstractSet[str]:
        """The capped signatures (read-only view)."""
        return self._sticky

    def check_buckets(self, limit: int | None = None) -> int:
        """Check up to ``limit`` buckets (round robin); drop those with nothing pending.

        Returns how many buckets were dropped. Without a ``has_pending_under`` callback
        nothing is ever dropped.
        """
        if self._has_pending_under is None:
            return 0
        rotation = self._rotation
        dropped = 0
        for _ in range(min(limit or self.buckets_per_check, len(rotation))):
            bucket = rotation.popleft()
            if self._buckets.get(bucket.prefix) is not bucket:
                continue  # emptied since (its last signature capped or evicted)
            if self._has_pending_under(bucket.prefix):
                rotation.append(bucket)
                continue
            for signature in bucket.signatures:
                self._retire(self._entries.pop(signature))
            self.evicted_bucket += len(bucket.signatures)
            bucket.signatures.clear()  # its retired entries may still point at it
            del self._buckets[bucket.prefix]
            self.buckets_dropped += 1
            dropped += 1
        if dropped:
            self._compact()
        return dropped

    # -- internals --------------------------------------------------------------------------

    def _add(self, signature: str, url: str) -> _Entry:
        prefix = bucket_of(url)
        bucket = self._buckets.get(prefix)
        if bucket is None:
            bucket = self._buckets[prefix] = _Bucket(prefix)
            self._rotation.append(bucket)
        entry = _Entry(signature, self.anchor_index, url, bucket)
        bucket.signatures.add(signature)
        self._entries[signature] = entry
        self._ages.append(entry)
        if len(self._entries) > self.map_cap:
            _, oldest = self._entries.popitem(last=False)
            self._forget(oldest)
            self.evicted_lru += 1
        self.peak_entries = max(self.peak_entries, len(self._entries))
        return entry

    def _expire(self) -> None:
        """Layer (b): drop the signatures first seen more than ``age_window`` links ago."""
        oldest_kept = self.anchor_index - self.age_window
        ages = self._ages
        entries = self._entries
        while ages and ages[0].first_seen < oldest_kept:
            entry = ages.popleft()
            if entries.get(entry.signature) is entry:
                self._remove(entry)
                self.evicted_age += 1

    def _remove(self, entry: _Entry) -> None:
        del self._entries[entry.signature]
        self._forget(entry)

    def _forget(self, entry: _Entry) -> None:
        """Take an entry already out of the counting map out of its bucket."""
        bucket = entry.bucket
        bucket.signatures.discard(entry.signature)
        if not bucket.signatures and self._buckets.get(bucket.prefix) is bucket:
            del self._buckets[bucket.prefix]
        self._retire(entry)

    @staticmethod
    def _retire(entry: _Entry) -> None:
        """Release what an entry out of the map holds: until the age queue drops or compacts
        it, it is a small husk there (its empty signature never matches a live entry)."""
        entry.signature = entry.first_url = ""

    def _compact(self) -> None:
        """Rebuild the lazy queues when stale items outnumber live ones (O(1) amortised)."""
        entries = self._entries
        if len(self._ages) > 2 * len(entries) + _COMPACT_SLACK:
            self._ages = deque(e for e in self._ages if entries.get(e.signature) is e)
        buckets = self._buckets
        if len(self._rotation) > 2 * len(buckets) + _COMPACT_SLACK:
            self._rotation = deque(b for b in self._rotation if buckets.get(b.prefix) is b)
