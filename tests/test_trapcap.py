"""nitpicker.policy.trapcap (state and policy) without a network; the middleware: test_trapcap_middleware.py."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import nitpicker
from nitpicker.archive.schema import migrate
from nitpicker.policy.extract import PageMeta
from nitpicker.policy.signature import page_signature
from nitpicker.policy.trapcap import (
    CANONICAL_SELF,
    OG_URL_ELSEWHERE,
    OG_URL_SELF,
    REL_PREV_NEXT,
    TITLE_ORDINAL,
    TrapCap,
    TrapSignals,
    bucket_of,
    title_has_ordinal,
)
from nitpicker.query.trap_events import list_trap_events
from tests.helpers import trap_meta, unique_meta

HOST = "https://cms.example"


# -- the policy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "meta", "trap", "legit", "threshold"),
    [
        # og:url names the parent list: a trap signal, 30 % of N
        (f"{HOST}/list/date/2024/", trap_meta(), (OG_URL_ELSEWHERE,), (), 30),
        (f"{HOST}/list?page=1.5e+32", trap_meta(f"{HOST}/list"), (OG_URL_ELSEWHERE,), (), 30),
        (f"{HOST}/list?session=8f3a", trap_meta("/list"), (OG_URL_ELSEWHERE,), (), 30),
        # no og:url, no other signal: N
        (f"{HOST}/list/date/2024/", trap_meta(""), (), (), 100),
        # og:url is the page itself (http and https are one page): legit, 5 × N
        (f"{HOST}/list/date/2024/", trap_meta(f"{HOST}/list/date/2024/"), (), (OG_URL_SELF,), 500),
        (f"{HOST}/p/1", trap_meta("http://cms.example/p/1"), (), (OG_URL_SELF,), 500),
        # canonical to itself wins over og:url pointing elsewhere
        (f"{HOST}/list/date/2024/", trap_meta(canonical="/list/date/2024/"),
         (OG_URL_ELSEWHERE,), (CANONICAL_SELF,), 500),
        (f"{HOST}/list/date/2024/", trap_meta(canonical="/list/date/"), (OG_URL_ELSEWHERE,), (), 30),
        # an ordinal at the end of the title
        (f"{HOST}/articles?page=3", trap_meta(title="Articles - Page 3"),
         (OG_URL_ELSEWHERE,), (TITLE_ORDINAL,), 500),
        (f"{HOST}/articles?page=3", trap_meta("", title="記事一覧 ページ 3"), (), (TITLE_ORDINAL,), 500),
        # rel=prev / rel=next
        (f"{HOST}/feed/?page=3", trap_meta(f"{HOST}/feed/", next="/feed/?page=4"),
         (OG_URL_ELSEWHERE,), (REL_PREV_NEXT,), 500),
        (f"{HOST}/feed/?page=300", trap_meta("", prev="/feed/?page=299"), (), (REL_PREV_NEXT,), 500),
    ],
)
def test_signals_and_threshold(url: str, meta: PageMeta, trap: tuple[str, ...],
                               legit: tuple[str, ...], threshold: int) -> None:
    cap = TrapCap(100)
    signals = cap.signals(url, meta)
    assert signals == TrapSignals(trap, legit)
    assert cap.threshold(signals) == threshold


@pytest.mark.parametrize(("n", "trap_threshold"), [(1, 1), (3, 1), (7, 3), (10, 3), (20, 6), (100, 30)])
def test_trap_threshold_is_30_percent_rounded_up(n: int, trap_threshold: int) -> None:
    cap = TrapCap(n)
    assert cap.threshold(TrapSignals(trap=(OG_URL_ELSEWHERE,))) == trap_threshold
    assert cap.threshold(TrapSignals()) == n
    assert cap.threshold(TrapSignals((OG_URL_ELSEWHERE,), (REL_PREV_NEXT,))) == 5 * n


@pytest.mark.parametrize(
    ("title", "ordinal"),
    [
        ("Articles - Page 3", True),
        ("Page 3 of 10", True),
        ("Articles - Page 3 | Example CMS", True),
        ("p. 4", True),
        ("ページ 3", True),
        ("記事一覧 ページ3", True),
        ("第3ページ", True),
        ("3ページ目", True),
        ("News – 12", True),
        ("Blog (3)", True),
        ("Blog （3）", True),
        ("#3", True),
        ("Event archive | Example CMS", False),
        ("COVID-19", False),
        ("Top 10", False),
        ("iPhone 15", False),
        ("Page", False),
        ("", False),
    ],
)
def test_title_ordinal(title: str, ordinal: bool) -> None:
    assert title_has_ordinal(title) is ordinal


@pytest.mark.parametrize(
    ("url", "bucket"),
    [
        ("https://cms.example/list/date/2024/", "//cms.example/list/date/"),
        ("http://cms.example/list/date/1.5e+32/", "//cms.example/list/date/"),
        ("https://cms.example:8443/list?page=2", "//cms.example:8443/"),
        ("https://cms.example/a/b/c?x=1", "//cms.example/a/b/"),
        ("https://cms.example/", "//cms.example/"),
    ],
)
def test_bucket_is_the_frontier_key_prefix_of_the_parent_path(url: str, bucket: str) -> None:
    assert bucket_of(url) == bucket


def test_min_threshold_is_the_lowest_a_page_can_have() -> None:
    assert (TrapCap(100).min_threshold(), TrapCap(1).min_threshold()) == (30, 1)


def test_policy_can_be_overridden() -> None:
    class NoTrapSignal(TrapCap):
        def threshold(self, signals: TrapSignals) -> int:
            return 2

    cap = NoTrapSignal(100)
    cap.observe(f"{HOST}/list/date/1/", trap_meta())
    assert cap.observe(f"{HOST}/list/date/2/", trap_meta()).fired  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "value"), [("cap", 0), ("age_window", 0), ("map_cap", -1)])
def test_bad_sizes_are_refused_naming_the_value(name: str, value: int) -> None:
    with pytest.raises(ValueError, match=f"{name} must be at least 1, got {value}"):
        TrapCap(**{"cap": 5, name: value})


# -- counting and (a) sticky ------------------------------------------------------------------


def test_trap_signal_fires_at_30_percent_and_the_signature_goes_sticky() -> None:
    cap = TrapCap(10)  # trap signal: fires at ceil(3.0) = 3
    url = f"{HOST}/list/date/{{}}/"
    sig = page_signature(url.format(2024), trap_meta())
    first = cap.observe(url.format(2024), trap_meta())
    second = cap.observe(url.format(2025), trap_meta())
    assert first is not None and second is not None
    assert (first.count, first.capped, second.count, second.capped) == (1, False, 2, False)
    assert cap.is_counted(sig) and cap.count(sig) == 2
    third = cap.observe(url.format(2026), trap_meta())
    assert third is not None
    # The page that reaches the threshold is already capped.
    assert third.fired and third.capped and third.count == 3 and third.threshold == 3
    assert third.first_url == url.format(2024)
    assert third.parent_path == "/list/date" and third.signature == sig
    # Immigrated: in the sticky set, out of the counting map (and its bucket).
    assert sig in cap.sticky and cap.is_capped(sig)
    assert not cap.is_counted(sig) and cap.count(sig) == 0
    assert cap.entries == 0 and cap.buckets == 0
    later = cap.observe(url.format(1.5e32), trap_meta())
    assert later is not None
    assert later.capped and not later.fired and later.count is None
    assert cap.fired == 1 and len(cap.sticky) == 1


def test_legit_signals_raise_the_threshold_five_times() -> None:
    cap = TrapCap(10)
    pager = trap_meta(f"{HOST}/feed/", next="/feed/?page=2")  # trap signal, but rel=next
    for n in range(1, 50):
        verdict = cap.observe(f"{HOST}/feed/?page={n}", pager)
        assert verdict is not None and not verdict.capped
        # Signals are read once the count reaches the lowest possible threshold, 3.
        assert verdict.threshold == (50 if n >= cap.min_threshold() else None)
    assert not cap.sticky
    last = cap.observe(f"{HOST}/feed/?page=50", pager)
    assert last is not None and last.fired and last.count == 50  # 5 × 10, not 30 % of 10


def test_a_firing_carries_the_signals_that_gave_its_threshold() -> None:
    """The score the audit log records (migration 0016_trap_score): the firing page's
    signals, on the verdict that fired only."""
    cap = TrapCap(10)
    pager = trap_meta(f"{HOST}/feed/", next="/feed/?page=2")  # trap signal, but rel=next
    verdicts = [cap.observe(f"{HOST}/feed/?page={n}", pager) for n in range(1, 51)]
    assert all(v is not None and v.signals is None for v in verdicts[:-1])
    last = verdicts[-1]
    assert last is not None and last.fired and last.threshold == 50
    assert last.signals == TrapSignals(trap=(OG_URL_ELSEWHERE,), legit=(REL_PREV_NEXT,))


def test_og_url_elsewhere_caps_earlier_than_no_og_url() -> None:
    def pages_to_cap(meta: PageMeta) -> int:
        cap = TrapCap(100)
        for n in range(1, 1000):
            verdict = cap.observe(f"{HOST}/list/date/{n}/", meta)
            if verdict is not None and verdict.fired:
                return n
        raise AssertionError("never capped")

    assert pages_to_cap(trap_meta()) == 30
    assert pages_to_cap(trap_meta("")) == 100


def test_unsignable_pages_are_ignored() -> None:
    cap = TrapCap(1)
    for meta in (PageMeta(), PageMeta(title="No Open Graph"), PageMeta(og_title="No title")):
        assert cap.observe(f"{HOST}/list/date/2024/", meta) is None
    assert cap.observed == 0 and cap.entries == 0 and not cap.sticky


def test_same_meta_under_other_parent_paths_is_counted_apart() -> None:
    cap = TrapCap(3)
    meta = PageMeta(title="Item", description="An item", og_title="Item")
    for i in range(1, 151):
        verdict = cap.observe(f"{HOST}/sections/s{i}/item", meta)
        assert verdict is not None and verdict.count == 1 and not verdict.capped
    assert cap.entries == 150 and cap.buckets == 150 and not cap.sticky


def test_immunise_restores_a_capped_signature() -> None:
    cap = TrapCap(100)
    url = f"{HOST}/list/date/2024/"
    cap.observe(url, trap_meta())
    sig = page_signature(url, trap_meta())
    assert sig is not None
    cap.immunise(sig)
    assert sig in cap.sticky and not cap.is_counted(sig)
    verdict = cap.observe(f"{HOST}/list/date/2025/", trap_meta())
    assert verdict is not None and verdict.capped and not verdict.fired


# -- (b) age eviction ------------------------------------------------------------------------


def test_age_eviction_after_age_window_links() -> None:
    cap = TrapCap(100, age_window=50)
    url = f"{HOST}/list/date/2024/"
    sig = page_signature(url, trap_meta(""))
    cap.observe(url, trap_meta(""))
    cap.observe(url, trap_meta(""))
    cap.advance(50)  # first seen at 0, now 50: not past the window yet
    assert cap.count(sig) == 2
    cap.advance(1)
    assert not cap.is_counted(sig) and cap.evicted_age == 1 and cap.entries == 0
    # Seen again later: a new start at zero, no early cap.
    verdict = cap.observe(f"{HOST}/list/date/2025/", trap_meta(""))
    assert verdict is not None and verdict.count == 1


def test_age_counts_from_first_seen_not_last_seen() -> None:
    cap = TrapCap(100, age_window=10)
    meta = trap_meta("")
    for n in range(11):  # seen at every link: still dropped 10 links after its first sighting
        cap.observe(f"{HOST}/list/date/{n}/", meta)
        cap.advance(1)
    assert cap.entries == 0 and cap.evicted_age == 1


def test_a_trap_inside_the_window_is_not_evicted() -> None:
    cap = TrapCap(10, age_window=50)
    for n in range(3):  # trap signal: 3 pages, 2 new links each
        cap.advance_to(2 * n)
        verdict = cap.observe(f"{HOST}/list/date/{n}/", trap_meta())
    assert verdict is not None and verdict.fired and cap.evicted_age == 0


def test_age_eviction_only_drops_the_old_and_skips_stale_queue_items() -> None:
    cap = TrapCap(2, age_window=100, map_cap=1000)
    cap.observe(f"{HOST}/a/1", unique_meta(1))
    cap.advance(60)
    cap.observe(f"{HOST}/a/2", unique_meta(2))
    # A capped signature leaves a stale item in the age queue: not counted as an eviction.
    cap.observe(f"{HOST}/t/1", trap_meta(f"{HOST}/t/"))
    cap.observe(f"{HOST}/t/2", trap_meta(f"{HOST}/t/"))
    assert len(cap.sticky) == 1
    cap.advance(41)  # anchor 101: /a/1 (first seen at 0) is out, /a/2 (60) and the trap stay
    assert cap.evicted_age == 1 and cap.entries == 1
    assert cap.is_counted(page_signature(f"{HOST}/a/2", unique_meta(2)) or "")
    cap.advance_to(50)  # never backwards
    assert cap.anchor_index == 101


# -- (c) parent-path buckets -----------------------------------------------------------------


@dataclass
class FakeFrontier:
    """``has_pending_under`` over a set of pending keys, recording every question."""

    pending: set[str] = field(default_factory=set)
    asked: list[str] = field(default_factory=list)

    def has_pending_under(self, prefix: str) -> bool:
        self.asked.append(prefix)
        return any(key.startswith(prefix) for key in self.pending)


def test_bucket_dropped_when_nothing_is_pending_under_its_parent_path() -> None:
    frontier = FakeFrontier({"//cms.example/b/next", "//cms.example/a/more"})
    cap = TrapCap(100, has_pending_under=frontier.has_pending_under)
    for n in range(3):
        cap.observe(f"{HOST}/a/{n}", unique_meta(n))
    cap.observe(f"{HOST}/b/1", unique_meta(10))
    assert cap.check_buckets() == 0  # both still have pending URLs
    assert cap.entries == 4 and cap.buckets == 2
    frontier.pending.discard("//cms.example/a/more")
    assert cap.check_buckets() == 1
    assert cap.buckets == 1 and cap.entries == 1 and cap.evicted_bucket == 3
    assert not cap.is_counted(page_signature(f"{HOST}/a/0", unique_meta(0)) or "")
    assert cap.is_counted(page_signature(f"{HOST}/b/1", unique_meta(10)) or "")


def test_bucket_checks_are_periodic_bounded_and_round_robin() -> None:
    frontier = FakeFrontier({f"//cms.example/s{n}/next" for n in range(10)})  # all pending
    cap = TrapCap(100, has_pending_under=frontier.has_pending_under,
                  bucket_check_every=10, buckets_per_check=3)
    for n in range(9):
        cap.observe(f"{HOST}/s{n}/item", unique_meta(n))
    assert frontier.asked == []  # no check before the 10th counted page
    cap.observe(f"{HOST}/s9/item", unique_meta(9))
    assert frontier.asked == ["//cms.example/s0/", "//cms.example/s1/", "//cms.example/s2/"]
    cap.check_buckets()
    cap.check_buckets()
    cap.check_buckets()
    # Round robin: every bucket asked once before any is asked again.
    assert sorted(frontier.asked[:10]) == sorted(f"//cms.example/s{n}/" for n in range(10))
    assert frontier.asked[10:] == ["//cms.example/s0/", "//cms.example/s1/"]


def test_a_capped_signature_survives_its_bucket_drop() -> None:
    frontier = FakeFrontier()
    cap = TrapCap(3, has_pending_under=frontier.has_pending_under)
    cap.observe(f"{HOST}/list/date/1/", trap_meta())  # trap signal, ceil(0.9) = 1: capped
    cap.observe(f"{HOST}/list/other", unique_meta(1))
    cap.check_buckets()
    assert cap.entries == 0 and len(cap.sticky) == 1
    verdict = cap.observe(f"{HOST}/list/date/2/", trap_meta())
    assert verdict is not None and verdict.capped


def test_without_a_frontier_callback_buckets_are_never_dropped() -> None:
    cap = TrapCap(100, bucket_check_every=1)
    cap.observe(f"{HOST}/a/1", unique_meta(1))
    assert cap.check_buckets() == 0 and cap.entries == 1


# -- (d) the hard cap, LRU -------------------------------------------------------------------


def test_lru_eviction_at_map_cap() -> None:
    cap = TrapCap(100, age_window=10_000, map_cap=3)
    sigs = [page_signature(f"{HOST}/p/{n}", unique_meta(n)) or "" for n in range(5)]
    for n in range(3):
        cap.observe(f"{HOST}/p/{n}", unique_meta(n))
    cap.observe(f"{HOST}/p/0", unique_meta(0))  # seen again: now the most recent
    cap.observe(f"{HOST}/p/3", unique_meta(3))
    assert cap.entries == 3 and cap.evicted_lru == 1
    assert not cap.is_counted(sigs[1])  # the least recently seen went, not the oldest
    assert cap.count(sigs[0]) == 2 and cap.is_counted(sigs[2]) and cap.is_counted(sigs[3])
    cap.observe(f"{HOST}/p/4", unique_meta(4))
    assert not cap.is_counted(sigs[2]) and cap.evicted_lru == 2 and cap.peak_entries == 3


def test_memory_stays_within_map_cap_for_unique_signatures() -> None:
    """The pathological CMS: no title ever repeats, no link is new (age never advances)."""
    cap = TrapCap(100, age_window=5000, map_cap=1000)
    for n in range(20_000):
        cap.observe(f"{HOST}/s{n % 50}/p{n}", unique_meta(n))
    assert cap.entries == 1000 and cap.peak_entries == 1000
    assert cap.evicted_lru == 19_000
    # The lazy queues are compacted: they do not keep the evicted entries alive.
    assert len(cap._ages) <= 2 * cap.entries + 1024
    assert len(cap._rotation) <= 2 * cap.buckets + 1024


def test_age_keeps_entries_near_the_window_when_links_advance() -> None:
    cap = TrapCap(100, age_window=500, map_cap=100_000)
    for n in range(20_000):
        cap.advance(1)
        cap.observe(f"{HOST}/s{n % 50}/p{n}", unique_meta(n))
    assert cap.entries <= 501 and cap.evicted_lru == 0 and cap.evicted_age >= 19_400


# -- the trap cap reads its state through the writer ---------------------------------------


def test_the_crawl_reads_the_archive_through_its_writer_not_the_query_library() -> None:
    """The query library is for readers; a crawl component reads what it wrote from the
    writer's parts (the trap cap's restore state from the run log)."""
    package = Path(nitpicker.__file__).parent
    # the archive's writer and its parts: what a crawl writes and reads back while it runs
    # (``check_store``, ``analysis_store`` and ``transfer`` run the site checks, the
    # analyzers and merges over a written archive, through the query library by design)
    writer_parts = ("writer", "batch", "page_recorder", "page_sql", "frontier_store", "run_log",
                    "worker", "shared_writer", "shared_frontier", "trap_counts", "budget")
    crawl_modules = [package / "policy" / "trapcap.py", package / "crawl" / "session.py",
                     package / "crawl" / "scheduler.py", package / "pipelines.py",
                     *(package / "middlewares").glob("*.py"),
                     *(package / "archive" / f"{name}.py" for name in writer_parts)]
    # the one opener (query/connection.py) checks the file before the writer locks it: no read
    imports_query = re.compile(r"^\s*(from|import) nitpicker\.query\b(?!\.connection\b)",
                               re.MULTILINE)
    readers = [path.relative_to(package).as_posix() for path in crawl_modules
               if imports_query.search(path.read_text(encoding="utf-8"))]
    assert readers == []


# -- list_trap_events ------------------------------------------------------------------------


def test_list_trap_events_pages_through_the_audit_log() -> None:
    conn = sqlite3.connect(":memory:")
    migrate(conn)
    conn.execute("INSERT INTO runs(kind, pid, started_at, status) VALUES ('crawl', 1, 't', 'x')")
    for n in range(3):
        conn.execute(
            "INSERT INTO trap_events(run_id, signature, parent_path, count, first_url, last_url,"
            " created_at) VALUES (1, ?, ?, ?, ?, ?, ?)",
            (f"sig{n}", f"/p{n}", 30 + n, f"https://h/p{n}/1", f"https://h/p{n}/9", f"t{n}"),
        )
    everything = list_trap_events(conn)
    assert everything["total"] == 3 and everything["limit"] == 100 and everything["offset"] == 0
    assert everything["items"][0] == {
        "signature": "sig0", "parent_path": "/p0", "count": 30, "first_url": "https://h/p0/1",
        "last_url": "https://h/p0/9", "created_at": "t0", "run_id": 1,
        "threshold": None, "trap_signals": None, "legit_signals": None,  # no score written
    }
    window = list_trap_events(conn, limit=1, offset=1)
    assert [e["signature"] for e in window["items"]] == ["sig1"] and window["total"] == 3
    with pytest.raises(ValueError, match="Invalid limit: -1"):
        list_trap_events(conn, limit=-1)


def test_list_trap_events_of_an_archive_older_than_the_table() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT)")
    assert list_trap_events(conn, limit=10, offset=0) == {
        "items": [], "total": 0, "offset": 0, "limit": 10}
    assert "trap_events" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
